package snapshot_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/kai/v1alpha1"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/snapshot"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// topologyCluster is two racks of one zone and a rack of another, labelled for a zone/rack
// Topology and a rack-only one, with a running job; list, when set, intercepts every list.
func topologyCluster(t *testing.T, list func(client.ObjectList) error) (client.Reader, []client.Object) {
	t.Helper()
	node := func(name, zone, rack string) *v1.Node {
		return builders.MakeNode(name).Label("topology.kubernetes.io/zone", zone).Label("example.com/rack", rack).
			Label(v1alpha1.HostnameLabel, name).Label("node.kubernetes.io/instance-type", "gpu-8x").
			Allocatable(v1.ResourceCPU, "64").MaxPods(110).GPUs(8).Obj()
	}
	zoneRack := &v1alpha1.Topology{
		ObjectMeta: metav1.ObjectMeta{Name: "zone-rack", Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
		Spec: v1alpha1.TopologySpec{Levels: []v1alpha1.TopologyLevel{
			{NodeLabel: "topology.kubernetes.io/zone", Alias: "zone"}, {NodeLabel: "example.com/rack", Alias: "rack"}, {NodeLabel: v1alpha1.HostnameLabel}}},
	}
	racks := &v1alpha1.Topology{ObjectMeta: metav1.ObjectMeta{Name: "racks"},
		Spec: v1alpha1.TopologySpec{Levels: []v1alpha1.TopologyLevel{{NodeLabel: "example.com/rack"}}}}
	objects := []client.Object{
		node("a1", "a", "a-1"), node("a2", "a", "a-2"), node("b1", "b", "b-1"), zoneRack, racks,
		builders.MakeQueue("research").GPUQuota(8).Obj(),
		group("research", "train", "research", time.Hour).StartedAt(now.Add(-time.Hour)).Obj(),
		runningFor(pod("research", "train-0", 8).PodGroup("train"), "a1", time.Hour).Obj(),
	}
	scheme, err := install.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	b := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...)
	if list != nil {
		b = b.WithInterceptorFuncs(interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, l client.ObjectList, opts ...client.ListOption) error {
			if err := list(l); err != nil {
				return err
			}
			return c.List(ctx, l, opts...)
		}})
	}
	return b.Build(), objects
}

// A cluster's Topologies are written as kai-sim documents, after the nodes, whose labels are
// written whole: kai-sim reads back the same Topologies and the labels they name.
func TestSnapshotTopologiesReadBack(t *testing.T) {
	reader, live := topologyCluster(t, nil)
	opts := snapshot.Options{SchedulerName: "kai-scheduler", AssumeRuntime: time.Hour}
	out := write(t, reader, opts)
	if !strings.Contains(out, "# Topologies: racks, zone-rack.\n") {
		t.Errorf("the header does not list the topologies")
	}
	if strings.Contains(out, "last-applied-configuration") {
		t.Errorf("the snapshot exports a Topology's annotations, which scheduling does not read")
	}
	sc, err := input.Parse([]byte(out))
	if err != nil {
		t.Fatalf("kai-sim cannot read the snapshot: %v\n%s", err, out)
	}
	wantTopologies := map[string]v1alpha1.TopologySpec{}
	wantLabels := map[string]map[string]string{}
	for _, o := range live {
		switch o := o.(type) {
		case *v1alpha1.Topology:
			wantTopologies[o.Name] = o.Spec
		case *v1.Node:
			wantLabels[o.Name] = o.Labels
		}
	}
	gotTopologies := map[string]v1alpha1.TopologySpec{}
	for _, topology := range sc.Topologies {
		gotTopologies[topology.Name] = topology.Spec
	}
	if !reflect.DeepEqual(gotTopologies, wantTopologies) {
		t.Errorf("topologies read back\n got %+v\nwant %+v", gotTopologies, wantTopologies)
	}
	gotLabels := map[string]map[string]string{}
	for _, n := range sc.Nodes {
		gotLabels[n.Name] = n.Labels
	}
	if !reflect.DeepEqual(gotLabels, wantLabels) {
		t.Errorf("node labels read back\n got %v\nwant %v", gotLabels, wantLabels)
	}
	if t.Failed() {
		t.Logf("snapshot:\n%s", out)
	}
}

// A cluster that does not serve the Topology CRD has no Topologies: its snapshot holds none
// and does not fail, whichever way the REST mapper says the kind is unknown. Any other
// failure to list them fails the snapshot, as for every other kind.
func TestSnapshotOfAClusterWithoutTheTopologyCRD(t *testing.T) {
	gv := v1alpha1.SchemeGroupVersion
	for name, err := range map[string]error{
		"no kind match": &meta.NoKindMatchError{GroupKind: gv.WithKind("Topology").GroupKind(), SearchedVersions: []string{gv.Version}},
		// What controller-runtime's lazy mapper returns for a group the server does not have.
		"discovery failed": new(apiutil.ErrResourceDiscoveryFailed(map[schema.GroupVersion]error{
			gv: apierrors.NewNotFound(schema.GroupResource{Group: gv.Group, Resource: "topologies"}, ""),
		})),
	} {
		t.Run(name, func(t *testing.T) {
			reader, _ := topologyCluster(t, func(l client.ObjectList) error {
				if _, ok := l.(*v1alpha1.TopologyList); ok {
					return err
				}
				return nil
			})
			opts := snapshot.Options{SchedulerName: "kai-scheduler", AssumeRuntime: time.Hour}
			out := write(t, reader, opts)
			if strings.Contains(out, "Topolog") {
				t.Errorf("a cluster without the CRD got topologies in its snapshot:\n%s", out)
			}
			sc, err := input.Parse([]byte(out))
			if err != nil {
				t.Fatalf("kai-sim cannot read the snapshot: %v\n%s", err, out)
			}
			if len(sc.Topologies) != 0 || len(sc.Nodes) != 3 || len(sc.Jobs) != 1 {
				t.Errorf("read back %d topologies, %d nodes, %d jobs; want 0, 3, 1", len(sc.Topologies), len(sc.Nodes), len(sc.Jobs))
			}
		})
	}
	reader, _ := topologyCluster(t, func(l client.ObjectList) error {
		if _, ok := l.(*v1alpha1.TopologyList); ok {
			return apierrors.NewForbidden(schema.GroupResource{Group: gv.Group, Resource: "topologies"}, "", errors.New("no RBAC"))
		}
		return nil
	})
	_, err := snapshot.Read(context.Background(), reader, now, snapshot.Options{SchedulerName: "kai-scheduler"})
	if err == nil || !strings.Contains(err.Error(), "listing *v1alpha1.TopologyList") || !apierrors.IsForbidden(err) {
		t.Fatalf("a forbidden list of topologies gives %v, want the snapshot to fail naming it", err)
	}
}
