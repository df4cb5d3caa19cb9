package explain_test

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/explain"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// A job evicted before is protected longer when escalation is on: explain shows the longer
// value, the queues' value it was escalated from, the job's evictions and the rule; queue
// explain states the rule.
func TestExplainShowsEscalation(t *testing.T) {
	const escalating = `actions: "allocate, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: proportion
  - name: minruntime
    arguments: {escalationFactor: "2", escalationCeiling: 2h}
  - name: predicates
`
	started := now.Add(-2 * time.Minute)
	group := builders.MakePodGroup("ns", "train").Queue("team").StartedAt(started).Obj()
	group.Status.Evictions = &v2alpha2.EvictionCount{Total: 2, Preempt: 0, Reclaim: 2, Last: metav1.NewMicroTime(started.Add(-time.Hour))}
	pod := builders.MakePod("ns", "train-0").PodGroup("train").GPUs(1).Node("n1").StartedAt(started).Obj()
	node := builders.MakeNode("n1").Allocatable(v1.ResourceCPU, "8").Allocatable(v1.ResourceMemory, "32Gi").MaxPods(110).GPUs(2).Obj()
	team := builders.MakeQueue("team").ReclaimMinRuntime(30 * time.Minute).Obj()
	other := builders.MakeQueue("other").Obj()
	scheme, err := install.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(group, pod, node, team, other).Build()
	ctx := context.Background()
	c, err := explain.Load(ctx, reader, "kai-scheduler", []byte(escalating), clocktesting.NewFakePassiveClock(now))
	if err != nil {
		t.Fatal(err)
	}
	var job, queue strings.Builder
	if err := c.PodGroup(ctx, &job, "ns/train"); err != nil {
		t.Fatal(err)
	}
	if err := c.Queue(ctx, &queue, "team"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Evicted before: 0 time(s) by preempt, 2 by reclaim (status.evictions); escalation: ×2 per eviction, up to 2h0m0s.",
		"2h0m0s from queue team: protected until 2026-01-01T13:58:00Z",
		"resolved: team sets reclaimMinRuntime 30m0s → escalated to 2h0m0s for its 2 evictions (0 by preempt, 2 by reclaim; the minruntime plugin's escalation: ×2 per eviction, up to 2h0m0s)",
	} {
		if !strings.Contains(job.String(), want) {
			t.Errorf("explain pg lacks %q", want)
		}
	}
	if want := "escalation: ×2 per eviction, up to 2h0m0s"; !strings.Contains(queue.String(), want) {
		t.Errorf("explain queue lacks %q", want)
	}
	if t.Failed() {
		t.Logf("explain pg:\n%s\nexplain queue:\n%s", job.String(), queue.String())
	}
}
