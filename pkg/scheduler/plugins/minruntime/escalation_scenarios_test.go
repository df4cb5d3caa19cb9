package minruntime_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

var _ = Describe("Escalating protection", func() {
	// borrowed runs in a queue that protects it for 10m; owned's quota wants its GPUs back.
	cluster := func(args string, borrowed *JobBuilder) *Harness {
		return New(withMinRuntime(args)).
			Nodes(Node("n1").GPUs(4)).
			Queues(Queue("owner").GPUQuota(4), Queue("borrower").GPUQuota(0).ReclaimMinRuntime(10*time.Minute)).
			Jobs(borrowed.Queue("borrower").MinMember(4).Pods(4).GPUs(1).Running("n1", "n1", "n1", "n1").StartedAt(Epoch),
				Job("owned").Queue("owner").MinMember(4).Pods(4).GPUs(1))
	}
	const doubling = `defaultReclaimMinRuntime: 0s, escalationFactor: "2", escalationCeiling: 30m`
	reclaimedAt := func(h *Harness, until time.Duration) time.Duration {
		rounds := h.RunUntil(ctx, Epoch.Add(until))
		at := firstEviction(rounds)
		Expect(at).NotTo(Equal(-1), "the job must be reclaimed once its protection ends")
		Expect(rounds[at].EvictedPods()).To(Equal(map[string]int{"borrowed": 4}))
		return rounds[at].Time.Sub(Epoch)
	}

	It("protects a job evicted once before for twice its queue's 10m, and says why", func() {
		h := cluster(doubling, Job("borrowed").EvictedTimes(0, 1))
		rounds := h.RunUntil(ctx, Epoch.Add(time.Minute))
		Expect(rounds[0].Reasons("owned")).To(ContainElement(ContainSubstring(
			"until " + Epoch.Add(20*time.Minute).Format(time.RFC3339) + " (20m0s from queue borrower, escalated from 10m0s for its evictions)")))
		p := rounds[0].ProtectionChanges[0].Protection
		Expect(p.Reclaim[0].Duration).To(Equal(20 * time.Minute))
		Expect(p.Reclaim[0].EscalatedFrom).To(Equal(10 * time.Minute))
		Expect(p.Status().Reclaim[0].EscalatedFrom.Duration).To(Equal(10*time.Minute), "the status shows what was escalated")

		h = cluster(doubling, Job("borrowed").EvictedTimes(0, 1))
		rounds = h.RunUntil(ctx, Epoch.Add(21*time.Minute))
		at := firstEviction(rounds)
		Expect(rounds[at].Time).To(Equal(Epoch.Add(20 * time.Minute)))
		Expect(rounds[at].Evictions[0].Reason.Note.Text).To(ContainSubstring(
			"its reclaim min-runtime of 20m0s from queue borrower, escalated from 10m0s for its evictions ended at"))
	})

	It("never protects a run past the ceiling, however often the job was evicted", func() {
		Expect(reclaimedAt(cluster(doubling, Job("borrowed").EvictedTimes(2, 5)), 31*time.Minute)).To(Equal(30 * time.Minute))
	})

	It("counts preempt and reclaim alike, and changes nothing without the arguments", func() {
		Expect(reclaimedAt(cluster(doubling, Job("borrowed").EvictedTimes(1, 0)), 21*time.Minute)).To(Equal(20 * time.Minute))
		Expect(reclaimedAt(cluster(`defaultReclaimMinRuntime: 0s`, Job("borrowed").EvictedTimes(0, 3)), 11*time.Minute)).
			To(Equal(10 * time.Minute))
	})

	It("follows the victim's queue's annotations over the plugin's arguments", func() {
		annotated := func(args string, queue *QueueBuilder) *Harness {
			return New(withMinRuntime(args)).
				Nodes(Node("n1").GPUs(4)).
				Queues(Queue("owner").GPUQuota(4), queue.GPUQuota(0).ReclaimMinRuntime(10*time.Minute)).
				Jobs(Job("borrowed").EvictedTimes(0, 1).Queue("borrower").MinMember(4).Pods(4).GPUs(1).Running("n1", "n1", "n1", "n1").StartedAt(Epoch),
					Job("owned").Queue("owner").MinMember(4).Pods(4).GPUs(1))
		}
		Expect(reclaimedAt(annotated(`defaultReclaimMinRuntime: 0s`, Queue("borrower").EscalationFactor(3).EscalationCeiling(time.Hour)),
			31*time.Minute)).To(Equal(30*time.Minute), "on in the queue, off in the arguments: 10m × 3")
		Expect(reclaimedAt(annotated(doubling, Queue("borrower").EscalationFactor(1)), 11*time.Minute)).
			To(Equal(10*time.Minute), "off in the queue, on in the arguments: its queue's 10m")
		Expect(reclaimedAt(annotated(doubling, Queue("borrower").EscalationCeiling(15*time.Minute)), 16*time.Minute)).
			To(Equal(15*time.Minute), "the arguments' factor, the queue's ceiling")
	})

	It("marks an eviction that ends the victim's run, decided at the cycle's time, for the count", func() {
		h := cluster(doubling, Job("borrowed"))
		rounds := h.RunUntil(ctx, Epoch.Add(11*time.Minute))
		at := firstEviction(rounds)
		for _, e := range rounds[at].Evictions {
			Expect(e.Reason.EndsRun).To(BeTrue())
			Expect(e.Reason.DecidedAt).To(Equal(rounds[at].Time))
		}
		Expect(h.JobNamed("borrowed").Evictions.Reclaim).To(Equal(int32(1)))
	})

	It("does not count surplus pods taken from an elastic job: its run goes on", func() {
		h := New(withMinRuntime(doubling)).
			Nodes(Node("n1").GPUs(4)).
			Queues(Queue("owner").GPUQuota(2), Queue("borrower").GPUQuota(0).ReclaimMinRuntime(10*time.Minute)).
			Jobs(Job("borrowed").Queue("borrower").MinMember(2).Pods(4).GPUs(1).Running("n1", "n1", "n1", "n1").StartedAt(Epoch),
				Job("owned").Queue("owner").MinMember(2).Pods(2).GPUs(1))
		rounds := h.RunUntil(ctx, Epoch.Add(time.Minute))
		at := firstEviction(rounds)
		Expect(at).NotTo(Equal(-1), "the surplus is not protected")
		Expect(rounds[at].EvictedPods()).To(Equal(map[string]int{"borrowed": 2}))
		for _, e := range rounds[at].Evictions {
			Expect(e.Reason.EndsRun).To(BeFalse())
		}
		Expect(h.JobNamed("borrowed").Evictions.Total()).To(BeZero())
	})
})
