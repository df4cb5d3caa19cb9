package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// What one look finds is told in the order it happened on the cluster, not by name: the
// scheduler's reclaim, the victim terminating, production told why it waited, production
// running. Then the terminating victim gone; another victim's eviction told, that victim
// gone at once (never seen terminating, it is told after its eviction), production's second
// pod running, and the victims brought back by their controller, the last of all.
func TestTimelineTellsALookInTheOrderThingsHappened(t *testing.T) {
	ctx := context.Background()
	scheme, err := install.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	victim := builders.MakePod("research", "pretrain-0").PodGroup("pretrain").Node("gpu-node-a").Phase(v1.PodRunning).Finalizer("demo/hold").Obj()
	other := builders.MakePod("research", "pretrain-1").PodGroup("pretrain").Node("gpu-node-b").Phase(v1.PodRunning).Obj()
	serve := builders.MakePodGroup("production", "serve").Queue("production").Obj()
	// One revision counter for every object, as etcd's.
	c := fake.NewClientBuilder().WithScheme(scheme).WithGlobalResourceVersionCounter().
		WithObjects(victim, other, builders.MakePodGroup("research", "pretrain").Queue("research").Obj(), serve).Build()
	manifests := map[string]*unstructured.Unstructured{}
	for _, name := range []string{"pretrain-0", "pretrain-1"} {
		manifest, err := runtime.DefaultUnstructuredConverter.ToUnstructured(builders.MakePod("research", name).PodGroup("pretrain").Obj())
		if err != nil {
			t.Fatal(err)
		}
		manifest["apiVersion"], manifest["kind"] = "v1", "Pod" // as read from a manifest file
		manifests["research/"+name] = &unstructured.Unstructured{Object: manifest}
	}
	var out bytes.Buffer
	clk := clocktesting.NewFakeClock(time.Now())
	tl := &timeline{c: c, out: &out, clock: clk, start: clk.Now(), seen: map[string]string{}, seenAt: map[string]uint64{},
		manifests: manifests}
	tl.observe(ctx)
	look := func(changes ...func() error) []string {
		t.Helper()
		for _, change := range changes {
			if err := change(); err != nil {
				t.Fatal(err)
			}
		}
		out.Reset()
		tl.observe(ctx)
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			_, line, _ := strings.Cut(strings.TrimSpace(l), "s  ") // after the seconds
			lines = append(lines, line)
		}
		return lines
	}
	running := func(name, node string) func() error {
		return func() error {
			return c.Create(ctx, builders.MakePod("production", name).PodGroup("serve").Node(node).Phase(v1.PodRunning).Obj())
		}
	}
	reclaimed := func(pod string) func() error {
		return func() error {
			return c.Create(ctx, &v1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "research", Name: "pretrain." + pod, UID: types.UID("event-" + pod)},
				InvolvedObject: v1.ObjectReference{Kind: "PodGroup", Namespace: "research", Name: "pretrain"},
				Reason:         "Reclaimed", Message: "Pod " + pod + " evicted by reclaim for job production/serve"})
		}
	}

	got := look(
		reclaimed("pretrain-0"),
		func() error { return c.Delete(ctx, victim.DeepCopy()) }, // held by its finalizer: terminating
		func() error {
			serve.Status.SchedulingConditions = []v2alpha2.SchedulingCondition{{Message: "waits for research/pretrain to go"}}
			return c.Update(ctx, serve)
		},
		running("serve-0", "gpu-node-a"),
	)
	expectOrder(t, got,
		"podgroup research/pretrain Reclaimed: Pod pretrain-0 evicted by reclaim for job production/serve",
		"pod research/pretrain-0 evicted",
		"podgroup production/serve waits: waits for research/pretrain to go",
		"pod production/serve-0 running on gpu-node-a")

	got = look(
		func() error {
			terminating := &v1.Pod{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(victim), terminating); err != nil {
				return err
			}
			terminating.Finalizers = nil // it goes
			return c.Update(ctx, terminating)
		},
		reclaimed("pretrain-1"),
		func() error { return c.Delete(ctx, other.DeepCopy()) },
		running("serve-1", "gpu-node-b"),
	)
	expectOrder(t, got,
		"pod research/pretrain-0 gone",
		"podgroup research/pretrain Reclaimed: Pod pretrain-1 evicted by reclaim for job production/serve",
		"pod research/pretrain-1 gone",
		"pod production/serve-1 running on gpu-node-b",
		"pod research/pretrain-0 recreated pending by its controller, as a Job's pod would be",
		"pod research/pretrain-1 recreated pending by its controller, as a Job's pod would be")
}

// expectOrder fails unless got is want, line for line.
func expectOrder(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the timeline said:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
