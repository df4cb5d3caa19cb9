package explain_test

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/explain"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
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
	job, queue := explainEscalated(t, escalating, nil)
	for _, want := range []string{
		"Evicted before: 2 times (0 by preempt, 2 by reclaim; status.evictions); escalation: ×2 per eviction, up to 2h0m0s.",
		"2h0m0s from queue team: protected until 2026-01-01T13:58:00Z",
		"resolved: team sets reclaimMinRuntime 30m0s → escalated to 2h0m0s for its 2 evictions (0 by preempt, 2 by reclaim; the minruntime plugin's escalation: ×2 per eviction, up to 2h0m0s)",
	} {
		if !strings.Contains(job, want) {
			t.Errorf("explain pg lacks %q", want)
		}
	}
	if want := "escalation: ×2 per eviction, up to 2h0m0s"; !strings.Contains(queue, want) {
		t.Errorf("explain queue lacks %q", want)
	}
	if t.Failed() {
		t.Logf("explain pg:\n%s\nexplain queue:\n%s", job, queue)
	}
}

// Set by the queue's annotations, escalation is explained with the queues that set it; a
// factor with no ceiling anywhere is explained as off, with why.
func TestExplainShowsEscalationSetByQueues(t *testing.T) {
	for _, c := range []struct {
		name        string
		annotations map[string]string
		want        []string
	}{{
		name:        "factor and ceiling on the queue",
		annotations: map[string]string{scheduling.EscalationFactorAnnotation: "1.5", scheduling.EscalationCeilingAnnotation: "1h"},
		want: []string{
			"1h0m0s from queue team: protected until",
			"escalated to 1h0m0s for its 2 evictions (0 by preempt, 2 by reclaim; the minruntime plugin's escalation: ×1.5 per eviction (queue team), up to 1h0m0s (queue team))",
		},
	}, {
		name:        "a factor without a ceiling",
		annotations: map[string]string{scheduling.EscalationFactorAnnotation: "2"},
		want: []string{
			"30m0s from queue team: protected until",
			"escalation: off: the factor (queue team) has no ceiling above 0s on the queue's path or in the plugin's arguments",
		},
	}} {
		t.Run(c.name, func(t *testing.T) {
			job, queue := explainEscalated(t, noDefaults, c.annotations)
			for _, want := range c.want {
				if !strings.Contains(job+queue, want) {
					t.Errorf("explain lacks %q", want)
				}
			}
			if t.Failed() {
				t.Logf("explain pg:\n%s\nexplain queue:\n%s", job, queue)
			}
		})
	}
}

// explainEscalated is what explain says of a job of queue team (reclaimMinRuntime 30m, with
// the annotations given) that reclaim evicted twice before, and of the queue, under config.
func explainEscalated(t *testing.T, config string, annotations map[string]string) (job, queue string) {
	t.Helper()
	started := now.Add(-2 * time.Minute)
	group := builders.MakePodGroup("ns", "train").Queue("team").StartedAt(started).Obj()
	group.Status.Evictions = &v2alpha2.EvictionCount{Total: 2, Preempt: 0, Reclaim: 2, Last: metav1.NewMicroTime(started.Add(-time.Hour))}
	pod := builders.MakePod("ns", "train-0").PodGroup("train").GPUs(1).Node("n1").StartedAt(started).Obj()
	node := builders.MakeNode("n1").Allocatable(v1.ResourceCPU, "8").Allocatable(v1.ResourceMemory, "32Gi").MaxPods(110).GPUs(2).Obj()
	team := builders.MakeQueue("team").ReclaimMinRuntime(30 * time.Minute).Obj()
	team.Annotations = annotations
	other := builders.MakeQueue("other").Obj()
	return explainJobAndQueue(t, config, "ns/train", "team", group, pod, node, team, other)
}

// explainJobAndQueue is what explain says, under config, of the job and of the queue, on a
// cluster of the given objects.
func explainJobAndQueue(t *testing.T, config, job, queue string, objects ...client.Object) (string, string) {
	t.Helper()
	scheme, err := install.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).Build()
	ctx := context.Background()
	c, err := explain.Load(ctx, reader, "kai-scheduler", []byte(config), clocktesting.NewFakePassiveClock(now))
	if err != nil {
		t.Fatal(err)
	}
	var j, q strings.Builder
	if err := c.PodGroup(ctx, &j, model.JobID(job)); err != nil {
		t.Fatal(err)
	}
	if err := c.Queue(ctx, &q, queue); err != nil {
		t.Fatal(err)
	}
	return j.String(), q.String()
}
