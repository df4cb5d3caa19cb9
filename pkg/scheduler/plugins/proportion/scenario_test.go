package proportion_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/scenario"
)

// Idle GPUs above quotas are shared by over-quota weight: allocation serves the queue
// furthest below its fair share first, so two elastic jobs settle at their shares.
func TestOverQuotaCapacityFollowsWeights(t *testing.T) {
	h := New("").
		Nodes(Node("n1").GPUs(8)).
		Queues(Queue("light").GPUQuota(0).GPUWeight(1), Queue("heavy").GPUQuota(0).GPUWeight(3)).
		Jobs(Job("l").Queue("light").MinMember(1).Pods(8).GPUs(1),
			Job("h").Queue("heavy").MinMember(1).Pods(8).GPUs(1))
	got := h.RunCycle(context.Background()).BoundPods()
	if got["l"] != 2 || got["h"] != 6 {
		t.Fatalf("bound %v, want light 2 and heavy 6 (weights 1:3 of 8 GPUs)", got)
	}
}

// A higher-priority queue gets over-quota capacity before a lower one, whatever the weights.
func TestOverQuotaCapacityGoesToHigherPriorityFirst(t *testing.T) {
	h := New("").
		Nodes(Node("n1").GPUs(8)).
		Queues(Queue("low").GPUQuota(0).GPUWeight(10), Queue("high").GPUQuota(0).Priority(200)).
		Jobs(Job("l").Queue("low").MinMember(1).Pods(8).GPUs(1),
			Job("h").Queue("high").MinMember(1).Pods(8).GPUs(1))
	got := h.RunCycle(context.Background()).BoundPods()
	if got["h"] != 8 || got["l"] != 0 {
		t.Fatalf("bound %v, want all 8 GPUs to the priority-200 queue", got)
	}
}

// notebookCluster is issue 38's reproduction, the make run-local demo with one more job:
// research (quota 0) borrows all 16 GPUs, protected for 2 minutes from 32s before the start;
// production (quota 16) waits with a gang of 2 x 8 submitted 13s before the start; a 1-GPU
// notebook arrives 10s in, in default-queue, whose queues have the given GPU quota.
func notebookCluster(defaultQuota float64) *Harness {
	return New("").
		Nodes(Node("a").GPUs(8), Node("b").GPUs(8)).
		Queues(Queue("production").GPUQuota(16), Queue("research").GPUQuota(0).ReclaimMinRuntime(2*time.Minute),
			Queue("default-parent-queue").GPUQuota(defaultQuota), Queue("default-queue").Parent("default-parent-queue").GPUQuota(defaultQuota)).
		Jobs(Job("pretrain").Queue("research").MinMember(2).Pods(2).GPUs(8).Running("a", "b").StartedAt(Epoch.Add(-32*time.Second)),
			Job("serve").Queue("production").MinMember(2).Pods(2).GPUs(8).CreatedAt(Epoch.Add(-13*time.Second)),
			Job("notebook").Queue("default-queue").GPUs(1).CreatedAt(Epoch.Add(10*time.Second)))
}

// One waiting notebook must not cancel another team's quota: production reclaims its 16
// GPUs in the first cycle after research's min-runtime ends, gets them, and the notebook
// waits — with the chart's default queues (quota 0) and with quota -1 ones alike, which
// over-subscribe production's quota but do not shrink it.
func TestAWaitingNotebookDoesNotCancelAQuota(t *testing.T) {
	for _, defaultQuota := range []float64{0, -1} {
		t.Run(fmt.Sprintf("default queues of quota %g", defaultQuota), func(t *testing.T) {
			h := notebookCluster(defaultQuota)
			rounds := h.RunUntil(context.Background(), Epoch.Add(3*time.Minute))
			protectedUntil := Epoch.Add(88 * time.Second)
			for _, round := range rounds {
				evicted := round.EvictedPods()
				switch {
				case len(evicted) == 0:
				case round.Time.Equal(protectedUntil):
					if evicted["pretrain"] != 2 || len(evicted) != 1 {
						t.Errorf("at %s evicted %v, want research's gang alone", round.Time, evicted)
					}
					for _, e := range round.Evictions {
						if e.Reason.Preemptor != "ns/serve" {
							t.Errorf("%s evicted for %s, want production's serve", e.Pod, e.Reason.Preemptor)
						}
					}
				default:
					t.Errorf("at %s evicted %v: research is protected until %s, and nothing else may go", round.Time, evicted, protectedUntil)
				}
			}
			if got := h.PodsIn("serve", model.Running); got != 2 {
				t.Errorf("production runs %d pods of 2 after research's protection ended", got)
			}
			if got := h.PodsIn("notebook", model.Pending); got != 1 {
				t.Errorf("the notebook has %d pods pending, want 1: it waits for GPUs no quota is owed", got)
			}
		})
	}
}

// Two queues each owed the same 8 free GPUs (over-subscribed quotas): the job that waited
// longer gets them, whatever the queues' names.
func TestTheOlderOfTwoEquallyOwedJobsGoesFirst(t *testing.T) {
	for _, older := range []string{"alpha", "zulu"} {
		t.Run(older+" older", func(t *testing.T) {
			created := map[string]time.Time{"alpha": Epoch, "zulu": Epoch}
			created[older] = Epoch.Add(-time.Minute)
			h := New("").
				Nodes(Node("n").GPUs(8)).
				Queues(Queue("alpha").GPUQuota(8), Queue("zulu").GPUQuota(8)).
				Jobs(Job("a").Queue("alpha").MinMember(8).Pods(8).GPUs(1).CreatedAt(created["alpha"]),
					Job("z").Queue("zulu").MinMember(8).Pods(8).GPUs(1).CreatedAt(created["zulu"]))
			got := h.RunCycle(context.Background()).BoundPods()
			if want := map[string]int{older[:1]: 8}; !maps.Equal(got, want) {
				t.Fatalf("bound %v, want %v: the older job first", got, want)
			}
		})
	}
}

// A job that stays within its queue's fair share goes before an older one that would take its
// queue beyond its own: given first, the older would hold what reclaim takes back for the
// other as soon as its protection ends — an eviction the order alone spares. (Here bulk's
// share is 7 of the 8 GPUs, the notebook's 1.)
func TestAJobWithinItsFairShareGoesBeforeOneBeyondIt(t *testing.T) {
	h := New("").
		Nodes(Node("n").GPUs(8)).
		Queues(Queue("bulk").GPUQuota(0), Queue("notebooks").GPUQuota(0)).
		Jobs(Job("big").Queue("bulk").MinMember(8).Pods(8).GPUs(1).CreatedAt(Epoch.Add(-time.Hour)),
			Job("notebook").Queue("notebooks").GPUs(1))
	round := h.RunCycle(context.Background())
	if got, want := round.BoundPods(), map[string]int{"notebook": 1}; !maps.Equal(got, want) {
		t.Fatalf("bound %v, want %v: big's 8 GPUs would be above its fair share of 7 while the notebook waits for its 1", got, want)
	}
	if rounds, _ := h.RunRounds(context.Background(), 5); slices.ContainsFunc(rounds, func(r Round) bool { return len(r.Evictions) > 0 }) {
		t.Error("something was evicted: neither job may take from the other")
	}
}
