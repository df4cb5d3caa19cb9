package explain_test

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// Counts of one read in the singular: a job evicted once, a parent queue of one leaf.
func TestExplainSaysOneInTheSingular(t *testing.T) {
	started := now.Add(-2 * time.Minute)
	group := builders.MakePodGroup("ns", "train").Queue("team").StartedAt(started).Obj()
	group.Status.Evictions = &v2alpha2.EvictionCount{Total: 1, Reclaim: 1, Last: metav1.NewMicroTime(started.Add(-time.Hour))}
	const escalating = `actions: "allocate, reclaim, preempt"
tiers:
- plugins:
  - name: proportion
  - name: minruntime
    arguments: {escalationFactor: "2", escalationCeiling: 2h}
`
	job, queue := explainJobAndQueue(t, escalating, "ns/train", "org", group,
		builders.MakePod("ns", "train-0").PodGroup("train").GPUs(1).Node("n1").StartedAt(started).Obj(),
		builders.MakeNode("n1").Allocatable(v1.ResourceCPU, "8").MaxPods(110).GPUs(2).Obj(),
		builders.MakeQueue("org").ReclaimMinRuntime(30*time.Minute).Obj(), builders.MakeQueue("team").Parent("org").Obj(),
		builders.MakeQueue("other").Obj())
	out := job + queue
	expectAll(t, out, "Evicted before: 1 time (0 by preempt, 1 by reclaim; status.evictions)",
		"for its 1 eviction (0 by preempt, 1 by reclaim;",
		"Only leaf queues hold jobs. The 1 leaf under org gets:")
	for _, plural := range []string{"1 times", "1 evictions", "1 leaves"} {
		if strings.Contains(out, plural) {
			t.Errorf("says %q:\n%s", plural, out)
		}
	}
}
