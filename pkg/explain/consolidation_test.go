package explain_test

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/explain"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// A waiting job under a configuration that consolidates is told which jobs a move would
// restart too early: those of its own queue and priority, which reclaim and preempt never
// take, protected by their preempt min-runtime. Without consolidation they are no concern of
// its, and are not named.
func TestExplainNamesTheProtectionsAMoveMeets(t *testing.T) {
	started := now.Add(-2 * time.Minute)
	node := func(name string) client.Object {
		return builders.MakeNode(name).Allocatable(v1.ResourceCPU, "8").Allocatable(v1.ResourceMemory, "32Gi").MaxPods(110).GPUs(4).Obj()
	}
	running := func(name, node string) []client.Object {
		pod := builders.MakePod("ns", name+"-0").PodGroup(name).Node(node).StartedAt(started).Phase(v1.PodRunning).
			Request(v1.ResourceCPU, "1").GPUs(2)
		return []client.Object{builders.MakePodGroup("ns", name).Queue("team").StartedAt(started).Obj(), pod.Obj()}
	}
	objects := []client.Object{
		builders.MakeQueue("team").PreemptMinRuntime(time.Hour).Obj(),
		node("n1"), node("n2"),
		builders.MakePodGroup("ns", "big").Queue("team").Obj(),
		builders.MakePod("ns", "big-0").PodGroup("big").Request(v1.ResourceCPU, "1").GPUs(4).Obj(),
	}
	objects = append(objects, running("left", "n1")...)
	objects = append(objects, running("right", "n2")...)
	// A job of higher priority, preemptible though: a move never restarts it for big.
	higher := running("higher", "n2")
	higher[0].(*v2alpha2.PodGroup).Spec.PriorityClassName = "build-preemptible"
	objects = append(append(objects, higher...),
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "build-preemptible"}, Value: 75})

	consolidating := strings.Replace(noDefaults, `"allocate, reclaim, preempt"`, `"allocate, consolidation, reclaim, preempt"`, 1)
	out, _ := explainJobAndQueue(t, consolidating, "ns/big", "team", objects...)
	expectAll(t, out, "consolidation: victims are protected by min-runtime: ns/left until 2026-01-01T12:58:00Z (1h0m0s from queue team), ns/right until")
	if strings.Contains(out, "ns/higher") {
		t.Errorf("a job of higher priority is no victim of a move for big:\n%s", out)
	}

	out, _ = explainJobAndQueue(t, noDefaults, "ns/big", "team", objects...)
	if strings.Contains(out, "consolidation") || strings.Contains(out, "ns/left") {
		t.Errorf("without consolidation, the jobs of its own queue and priority are no concern of the waiting job's:\n%s", out)
	}

	// Configured but turned off (--max-consolidation-preemptees 0): no move, nothing to tell.
	scheme, err := install.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c, err := explain.Load(ctx, fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).Build(),
		"kai-scheduler", []byte(consolidating), clocktesting.NewFakePassiveClock(now))
	if err != nil {
		t.Fatal(err)
	}
	c.Consolidation.SetMaxMovedJobs(0)
	var off strings.Builder
	if err := c.PodGroup(ctx, &off, "ns/big"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(off.String(), "consolidation") {
		t.Errorf("consolidation turned off still tells of the protections a move meets:\n%s", off.String())
	}
}
