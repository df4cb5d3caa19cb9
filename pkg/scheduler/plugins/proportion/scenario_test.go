package proportion_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

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

var _ = Describe("Over-quota capacity", func() {
	// Idle GPUs above quotas are shared by over-quota weight: allocation serves the queue
	// furthest below its fair share first, so two elastic jobs settle at their shares.
	It("follows the queues' weights", func() {
		h := New("").
			Nodes(Node("n1").GPUs(8)).
			Queues(Queue("light").GPUQuota(0).GPUWeight(1), Queue("heavy").GPUQuota(0).GPUWeight(3)).
			Jobs(Job("l").Queue("light").MinMember(1).Pods(8).GPUs(1),
				Job("h").Queue("heavy").MinMember(1).Pods(8).GPUs(1))
		Expect(h.RunCycle(ctx).BoundPods()).To(SatisfyAll(HaveKeyWithValue("l", 2), HaveKeyWithValue("h", 6)),
			"light 2 and heavy 6 (weights 1:3 of 8 GPUs)")
	})

	// A higher-priority queue gets over-quota capacity before a lower one, whatever the weights.
	It("goes to the higher-priority queue first", func() {
		h := New("").
			Nodes(Node("n1").GPUs(8)).
			Queues(Queue("low").GPUQuota(0).GPUWeight(10), Queue("high").GPUQuota(0).Priority(200)).
			Jobs(Job("l").Queue("low").MinMember(1).Pods(8).GPUs(1),
				Job("h").Queue("high").MinMember(1).Pods(8).GPUs(1))
		got := h.RunCycle(ctx).BoundPods()
		Expect(got).To(HaveKeyWithValue("h", 8), "all 8 GPUs to the priority-200 queue")
		Expect(got["l"]).To(BeZero(), "nothing to the low-priority queue")
	})
})

var _ = Describe("Quotas", func() {
	// One waiting notebook must not cancel another team's quota: production reclaims its 16
	// GPUs in the first cycle after research's min-runtime ends, gets them, and the notebook
	// waits — with the chart's default queues (quota 0) and with quota -1 ones alike, which
	// over-subscribe production's quota but do not shrink it.
	DescribeTable("a waiting notebook does not cancel a quota",
		func(defaultQuota float64) {
			h := notebookCluster(defaultQuota)
			rounds := h.RunUntil(ctx, Epoch.Add(3*time.Minute))
			protectedUntil := Epoch.Add(88 * time.Second)
			for _, round := range rounds {
				evicted := round.EvictedPods()
				if len(evicted) == 0 {
					continue
				}
				Expect(round.Time).To(Equal(protectedUntil),
					"at %s evicted %v: research is protected until %s, and nothing else may go", round.Time, evicted, protectedUntil)
				Expect(evicted).To(Equal(map[string]int{"pretrain": 2}), "at %s: research's gang alone", round.Time)
				for _, e := range round.Evictions {
					Expect(e.Reason.Preemptor).To(Equal(model.JobID("ns/serve")), "%s evicted for production's serve", e.Pod)
				}
			}
			Expect(h.PodsIn("serve", model.Running)).To(Equal(2), "production runs both pods after research's protection ended")
			Expect(h.PodsIn("notebook", model.Pending)).To(Equal(1), "the notebook waits for GPUs no quota is owed")
		},
		Entry("default queues of quota 0", 0.0),
		Entry("default queues of quota -1", -1.0),
	)

	// Two queues each owed the same 8 free GPUs (over-subscribed quotas): the job that waited
	// longer gets them, whatever the queues' names.
	DescribeTable("the older of two equally owed jobs goes first",
		func(older string) {
			created := map[string]time.Time{"alpha": Epoch, "zulu": Epoch}
			created[older] = Epoch.Add(-time.Minute)
			h := New("").
				Nodes(Node("n").GPUs(8)).
				Queues(Queue("alpha").GPUQuota(8), Queue("zulu").GPUQuota(8)).
				Jobs(Job("a").Queue("alpha").MinMember(8).Pods(8).GPUs(1).CreatedAt(created["alpha"]),
					Job("z").Queue("zulu").MinMember(8).Pods(8).GPUs(1).CreatedAt(created["zulu"]))
			Expect(h.RunCycle(ctx).BoundPods()).To(Equal(map[string]int{older[:1]: 8}), "the older job first")
		},
		Entry("alpha older", "alpha"),
		Entry("zulu older", "zulu"),
	)

	// A job that stays within its queue's fair share goes before an older one that would take its
	// queue beyond its own: given first, the older would hold what reclaim takes back for the
	// other as soon as its protection ends — an eviction the order alone spares. (Here bulk's
	// share is 7 of the 8 GPUs, the notebook's 1.)
	It("lets a job within its fair share go before one beyond it", func() {
		h := New("").
			Nodes(Node("n").GPUs(8)).
			Queues(Queue("bulk").GPUQuota(0), Queue("notebooks").GPUQuota(0)).
			Jobs(Job("big").Queue("bulk").MinMember(8).Pods(8).GPUs(1).CreatedAt(Epoch.Add(-time.Hour)),
				Job("notebook").Queue("notebooks").GPUs(1))
		Expect(h.RunCycle(ctx).BoundPods()).To(Equal(map[string]int{"notebook": 1}),
			"big's 8 GPUs would be above its fair share of 7 while the notebook waits for its 1")
		rounds, _ := h.RunRounds(ctx, 5)
		for _, r := range rounds {
			Expect(r.Evictions).To(BeEmpty(), "neither job may take from the other")
		}
	})
})
