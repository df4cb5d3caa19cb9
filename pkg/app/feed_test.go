package app

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/kai/v1alpha1"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/store"
)

// fedBy runs feed with the kinds mapper maps, on fake informers, and returns what it logged.
func fedBy(t *testing.T, mapper meta.RESTMapper) (informers *informertest.FakeInformers, converted *store.Store, logged []string, err error) {
	t.Helper()
	scheme, err := install.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	log := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, args)
	}, funcr.Options{})
	informers = &informertest.FakeInformers{Scheme: scheme}
	converted = store.New("kai-scheduler", scheduling.NodePool{LabelKey: scheduling.NodePoolLabel})
	synced, err := feed(logr.NewContext(context.Background(), log), informers, mapper, scheme, converted)
	if err == nil && len(synced) != len(informers.InformersByGVK) {
		t.Errorf("feed returned %d sync checks for %d informers", len(synced), len(informers.InformersByGVK))
	}
	return informers, converted, logged, err
}

// mapperOf maps every kind the scheduler watches, or all but those left out.
func mapperOf(t *testing.T, leftOut ...runtime.Object) meta.RESTMapper {
	t.Helper()
	scheme, err := install.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	skip := map[schema.GroupVersionKind]bool{}
	for _, obj := range leftOut {
		gvk, err := apiutil.GVKForObject(obj, scheme)
		if err != nil {
			t.Fatal(err)
		}
		skip[gvk] = true
	}
	for _, w := range watchedKinds() {
		gvk, err := apiutil.GVKForObject(w.obj, scheme)
		if err != nil {
			t.Fatal(err)
		}
		if !skip[gvk] {
			mapper.Add(gvk, meta.RESTScopeRoot)
		}
	}
	return mapper
}

var topologyGVK = v1alpha1.SchemeGroupVersion.WithKind("Topology")

// Where the Topology CRD is served, the store is fed Topologies like every other kind, and
// nothing is said about it.
func TestFeedWatchesTopologiesWhereTheirCRDIsServed(t *testing.T) {
	informers, converted, logged, err := fedBy(t, mapperOf(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(logged) != 0 {
		t.Errorf("logged %q with every CRD served", logged)
	}
	if len(informers.InformersByGVK) != len(watchedKinds()) {
		t.Errorf("%d informers for %d kinds: %v", len(informers.InformersByGVK), len(watchedKinds()), informers.InformersByGVK)
	}
	informer, err := informers.FakeInformerFor(context.Background(), &v1alpha1.Topology{})
	if err != nil {
		t.Fatal(err)
	}
	informer.Add(&v1alpha1.Topology{ObjectMeta: metav1.ObjectMeta{Name: "dc"},
		Spec: v1alpha1.TopologySpec{Levels: []v1alpha1.TopologyLevel{{NodeLabel: "zone"}, {NodeLabel: "rack", Alias: "r"}}}})
	snapshot, _, err := (&store.Builder{Store: converted}).Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := snapshot.Topology("dc"); got == nil || len(got.Levels) != 2 || got.Levels[1].Alias != "r" {
		t.Errorf("the informer's Topology did not reach the snapshot: %+v", got)
	}
}

// A cluster whose Topology CRD is not installed (the binary upgraded, not the CRDs): the
// scheduler watches everything else, waits for no Topology informer (which could never sync
// and would hold every cycle) and says once, naming the CRD, what it cannot do.
func TestFeedRunsWithoutTopologiesWhereTheirCRDIsNotServed(t *testing.T) {
	informers, _, logged, err := fedBy(t, mapperOf(t, &v1alpha1.Topology{}))
	if err != nil {
		t.Fatalf("feed failed for a missing optional CRD: %v", err)
	}
	if _, ok := informers.InformersByGVK[topologyGVK]; ok {
		t.Error("an informer was made for Topologies, which the API server does not serve")
	}
	if len(informers.InformersByGVK) != len(watchedKinds())-1 {
		t.Errorf("%d informers, want every kind but Topology: %v", len(informers.InformersByGVK), informers.InformersByGVK)
	}
	if len(logged) != 1 {
		t.Fatalf("want one warning, logged %q", logged)
	}
	for _, want := range []string{"topology constraints cannot be honoured", "CRD topologies.kai.scheduler is not served", "runs without topologies"} {
		if !strings.Contains(logged[0], want) {
			t.Errorf("the warning %q does not say %q", logged[0], want)
		}
	}
}

// failingMapper is an API server whose discovery fails.
type failingMapper struct{ meta.RESTMapper }

func (failingMapper) RESTMapping(schema.GroupKind, ...string) (*meta.RESTMapping, error) {
	return nil, errors.New("connection refused")
}

// A discovery that fails is not a CRD missing: the scheduler stops with the error (and is
// restarted) rather than run without topologies on a cluster that has them.
func TestFeedFailsWhenDiscoveryFails(t *testing.T) {
	_, _, logged, err := fedBy(t, failingMapper{mapperOf(t)})
	if err == nil || !strings.Contains(err.Error(), "kai.scheduler/v1alpha1, Kind=Topology") || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("want an error naming Topology and the cause, got %v", err)
	}
	if len(logged) != 0 {
		t.Errorf("logged %q for a failed discovery", logged)
	}
}

// The chart's ClusterRole is checked against Watched (test/helm): its resources must be the
// API server's names.
func TestWatchedNamesTheResources(t *testing.T) {
	resources, err := Watched()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"nodes", "pods", "podgroups.scheduling.run.ai", "queues.scheduling.run.ai",
		"priorityclasses.scheduling.k8s.io", "topologies.kai.scheduler"}
	if len(resources) != len(want) {
		t.Fatalf("Watched() = %v, want %v", resources, want)
	}
	for i, r := range resources {
		if r.String() != want[i] {
			t.Errorf("Watched()[%d] = %s, want %s", i, r, want[i])
		}
	}
}
