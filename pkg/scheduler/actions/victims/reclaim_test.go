package victims_test

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

var _ = Describe("Reclaim", func() {
	It("takes back a quota owner's GPUs from a borrower, then settles", func() {
		h := New("").
			Nodes(Node("n1").GPUs(8)).
			Queues(Queue("owner").GPUQuota(8), Queue("borrower").GPUQuota(0))
		for i := range 8 {
			h.Jobs(Job("borrow-" + string(rune('a'+i))).Queue("borrower").GPUs(1).Running("n1"))
		}
		h.Jobs(Job("own").Queue("owner").MinMember(2).Pods(2).GPUs(4))

		rounds, stable := h.RunRounds(ctx, 10)
		Expect(stable).To(BeTrue(), "no evict/allocate ping-pong")
		Expect(rounds[0].Evictions).To(HaveLen(8))
		for _, e := range rounds[0].Evictions {
			Expect(e.Reason.Action).To(Equal(framework.Reclaim))
			Expect(e.Reason.Preemptor).To(Equal(model.JobID("ns/own")))
		}
		Expect(rounds[0].PipelinedPods()).To(Equal(map[string]int{"own": 2}))
		Expect(rounds[1].BoundPods()).To(Equal(map[string]int{"own": 2}))
		Expect(h.PodsIn("own", model.Running)).To(Equal(2))
		Expect(evictionsOf(rounds[1:])).To(BeEmpty(), "the borrower does not reclaim back")
	})

	It("takes only what the reclaimer deserves, between sibling teams of one department", func() {
		h := New("").
			Nodes(Node("n1").GPUs(8)).
			Queues(Queue("dept"), Queue("team-a").Parent("dept").GPUQuota(4), Queue("team-b").Parent("dept").GPUQuota(4))
		for i := range 8 {
			h.Jobs(Job("b-" + string(rune('a'+i))).Queue("team-b").GPUs(1).Running("n1"))
		}
		h.Jobs(Job("a-big").Queue("team-a").MinMember(6).Pods(6).GPUs(1))
		h.Jobs(Job("a-small").Queue("team-a").MinMember(4).Pods(4).GPUs(1))

		rounds, stable := h.RunRounds(ctx, 10)
		Expect(stable).To(BeTrue())
		Expect(evictionsOf(rounds)).To(HaveLen(4), "4 single-GPU jobs of team-b")
		Expect(h.PodsIn("a-small", model.Running)).To(Equal(4))
		Expect(h.PodsIn("a-big", model.Running)).To(Equal(0), "6 GPUs would take team-a past its share of 4")
		Expect(rounds[len(rounds)-1].Reasons("a-big")).To(ContainElement(ContainSubstring("reclaim")))
	})

	It("does not reclaim for a queue already at its fair share", func() {
		h := New("").
			Nodes(Node("n1").GPUs(8)).
			Queues(Queue("a").GPUQuota(4), Queue("b").GPUQuota(4)).
			Jobs(Job("a-running").Queue("a").MinMember(4).Pods(4).GPUs(1).Running("n1", "n1", "n1", "n1"),
				Job("b-running").Queue("b").MinMember(4).Pods(4).GPUs(1).Running("n1", "n1", "n1", "n1"),
				Job("a-more").Queue("a").GPUs(1))
		round := h.RunCycle(ctx)
		Expect(round.Evictions).To(BeEmpty())
		Expect(round.Reasons("a-more")).To(ContainElement(ContainSubstring(`queue "a" is at or above its fair share`)))
	})

	It("prefers victims from the queue furthest above its share", func() {
		h := New("").
			Nodes(Node("n1").GPUs(4), Node("n2").GPUs(4)).
			Queues(Queue("owner").GPUQuota(4), Queue("little").GPUQuota(1), Queue("greedy").GPUQuota(0)).
			Jobs(Job("l").Queue("little").MinMember(4).Pods(4).GPUs(1).Running("n1", "n1", "n1", "n1"),
				Job("g").Queue("greedy").MinMember(4).Pods(4).GPUs(1).Running("n2", "n2", "n2", "n2"),
				Job("own").Queue("owner").MinMember(1).Pods(1).GPUs(4))
		round := h.RunCycle(ctx)
		Expect(round.EvictedPods()).To(Equal(map[string]int{"g": 4}))
	})
})

var _ = Describe("Queue limits and quota", func() {
	It("never allocates past a queue's limit, even on idle GPUs", func() {
		h := New("").
			Nodes(Node("n1").GPUs(8)).
			Queues(Queue("capped").GPULimit(4)).
			Jobs(Job("first").Queue("capped").MinMember(3).Pods(3).GPUs(1), Job("second").Queue("capped").MinMember(2).Pods(2).GPUs(1))
		round := h.RunCycle(ctx)
		Expect(round.BoundPods()).To(Equal(map[string]int{"first": 3}))
		Expect(round.Reasons("second")).To(ContainElement(ContainSubstring(`queue "capped" would exceed its nvidia.com/gpu limit of 4`)))
	})

	It("runs non-preemptible jobs only within deserved quota", func() {
		h := New("").
			Nodes(Node("n1").GPUs(8)).
			Queues(Queue("team").GPUQuota(2)).
			Jobs(Job("serve").Queue("team").Priority(125).MinMember(3).Pods(3).GPUs(1),
				Job("train").Queue("team").MinMember(3).Pods(3).GPUs(1))
		round := h.RunCycle(ctx)
		Expect(round.BoundPods()).To(Equal(map[string]int{"train": 3}))
		Expect(round.Reasons("serve")).To(ContainElement(ContainSubstring("non-preemptible jobs may only use deserved quota")))
	})
})

var _ = Describe("Reclaim across three levels of queues", func() {
	It("settles every queue at its fair share, taking from the branch furthest above its own", func() {
		h := New("").
			Nodes(Node("n1").GPUs(16)).
			Queues(Queue("prod").GPUQuota(8), Queue("research").GPUQuota(8),
				Queue("nlp").Parent("research").GPUQuota(4), Queue("vision").Parent("research").GPUQuota(4),
				Queue("nlp-a").Parent("nlp").GPUQuota(2), Queue("nlp-b").Parent("nlp").GPUQuota(2))
		for i := range 12 {
			h.Jobs(Job(fmt.Sprintf("vision-%02d", i)).Queue("vision").GPUs(1).Running("n1"))
		}
		for i := range 4 {
			h.Jobs(Job(fmt.Sprintf("nlp-b-%d", i)).Queue("nlp-b").GPUs(1).Running("n1"))
		}
		h.Jobs(Job("serving-canary").Queue("prod").MinMember(2).Pods(2).GPUs(4),
			Job("nlp-a-train").Queue("nlp-a").MinMember(2).Pods(2).GPUs(1))

		rounds, stable := h.RunRounds(ctx, 10)
		Expect(stable).To(BeTrue())
		running := func(prefix string) int {
			n := 0
			for _, job := range h.Snapshot().Jobs {
				if strings.HasPrefix(job.Name, prefix) {
					n += int(job.CountActive())
				}
			}
			return n
		}
		Expect(running("serving-canary")).To(Equal(2), "8 GPUs: prod's fair share")
		Expect(running("nlp-a-train")).To(Equal(2), "2 GPUs: nlp-a's fair share")
		Expect(running("nlp-b-")).To(Equal(2), "nlp-b gave back what it held above its share")
		Expect(running("vision-")).To(Equal(4), "vision gave back everything above its share")
		Expect(evictionsOf(rounds)).To(HaveLen(10), "8 vision jobs for prod, 2 nlp-b jobs for nlp-a")
		Expect(evictionsOf(rounds[1:])).To(BeEmpty(), "all in the first cycle, none after")
	})
})

var _ = Describe("Reclaim under a parent's limit", func() {
	// parent: GPU quota = limit = 3. Child a (quota 1) runs an elastic 3-pod job; child b
	// (quota 2) asks for a 2-pod gang. With the victims counted, the parent would hold 5;
	// once two of a's surplus pods are gone it holds exactly its limit.
	DescribeTable("evicts under the parent, judging the limit once the victims are gone",
		func(nodeGPUs int64) {
			h := New("").
				Nodes(Node("n1").GPUs(nodeGPUs)).
				Queues(Queue("parent").GPUQuota(3).GPULimit(3),
					Queue("a").Parent("parent").GPUQuota(1), Queue("b").Parent("parent").GPUQuota(2)).
				Jobs(Job("elastic").Queue("a").MinMember(1).Pods(3).GPUs(1).Running("n1", "n1", "n1"),
					Job("reclaimer").Queue("b").MinMember(2).Pods(2).GPUs(1))
			rounds, stable := h.RunRounds(ctx, 10)
			Expect(stable).To(BeTrue())
			Expect(rounds[0].EvictedPods()).To(Equal(map[string]int{"elastic": 2}))
			Expect(rounds[0].PipelinedPods()).To(Equal(map[string]int{"reclaimer": 2}))
			Expect(h.PodsIn("reclaimer", model.Running)).To(Equal(2))
			Expect(h.PodsIn("elastic", model.Running)).To(Equal(1))
			Expect(evictionsOf(rounds[1:])).To(BeEmpty(), "the limit keeps the victims' pods from coming back")
		},
		Entry("on a node the parent fills", int64(3)),
		Entry("with idle GPUs the limit forbids the parent to use", int64(8)),
	)

	It("says which limit stands when no victim under it may go", func() {
		h := New("").
			Nodes(Node("n1").GPUs(8)).
			Queues(Queue("parent").GPUQuota(3).GPULimit(3),
				Queue("a").Parent("parent").GPUQuota(1).ReclaimMinRuntime(time.Hour),
				Queue("b").Parent("parent").GPUQuota(2)).
			Jobs(Job("protected").Queue("a").MinMember(3).Pods(3).GPUs(1).Running("n1", "n1", "n1").StartedAt(Epoch),
				Job("reclaimer").Queue("b").MinMember(2).Pods(2).GPUs(1))
		round := h.RunCycle(ctx)
		Expect(round.Evictions).To(BeEmpty())
		Expect(round.Reasons("reclaimer")).To(ContainElement(ContainSubstring(`queue "parent" would exceed its nvidia.com/gpu limit of 3`)))
	})
})

var _ = Describe("The promise made to a reclaimer", func() {
	// No quotas: fair share (a 2 of 3 GPUs, b the 1 it asks for) justifies the reclaim, and
	// once big is evicted neither queue is owed quota, so without the promise allocate would
	// serve a first (by name) and bind big straight back.
	build := func() *Harness {
		return New("").
			Nodes(Node("n1").GPUs(3)).
			Queues(Queue("a").GPUQuota(0), Queue("b").GPUQuota(0)).
			Jobs(Job("big").Queue("a").GPUs(3).Running("n1"), Job("small").Queue("b").GPUs(1))
	}

	It("holds across cycles while the victim terminates, and the reclaimer is told where it will run", func() {
		h := build()
		Expect(h.RunCycle(ctx).EvictedPods()).To(Equal(map[string]int{"big": 1}))
		waiting := h.RunCycle(ctx) // no time passed: big is still terminating
		Expect(waiting.IsQuiet()).To(BeTrue(), "no new evictions for a preemptor that waits for its victims")
		Expect(waiting.Reasons("small")).To(ConsistOf(
			"waiting for resources being released on n1: they are promised to this job (its pods' nominated node)"))
		Expect(h.PodsIn("small", model.Pipelined)).To(Equal(1))
	})

	It("is withdrawn when the job's queue is deleted, and the GPUs go to others", func() {
		h := New("").
			Nodes(Node("n1").GPUs(3)).
			Queues(Queue("a").GPUQuota(0)).
			Jobs(Job("small").Queue("b").GPUs(1), Job("other").Queue("a").GPUs(3))
		h.JobNamed("small").Pods[0].Status, h.JobNamed("small").Pods[0].NodeName = model.Pipelined, "n1"
		round := h.RunCycle(ctx)
		Expect(round.Withdrawn).To(ConsistOf("ns/small-0"), "queue b is gone: no promise")
		Expect(round.BoundPods()).To(Equal(map[string]int{"other": 1}))
	})

	It("is withdrawn when a queue limit no longer allows the job", func() {
		h := New("").
			Nodes(Node("n1").GPUs(3)).
			Queues(Queue("a").GPUQuota(0), Queue("b").GPUQuota(0).GPULimit(0)).
			Jobs(Job("small").Queue("b").GPUs(1))
		h.JobNamed("small").Pods[0].Status, h.JobNamed("small").Pods[0].NodeName = model.Pipelined, "n1"
		round := h.RunCycle(ctx)
		Expect(round.Withdrawn).To(ConsistOf("ns/small-0"))
		Expect(round.Binds).To(BeEmpty())
		Expect(round.Reasons("small")).To(ContainElement(ContainSubstring(`queue "b" would exceed its nvidia.com/gpu limit of 0`)))
	})

	It("is kept against the victim, which comes back pending and would fit the freed GPUs", func() {
		h := build()
		rounds, stable := h.RunRounds(ctx, 10)
		Expect(stable).To(BeTrue(), "no evict/re-bind loop")
		Expect(evictionsOf(rounds)).To(Equal(map[string]int{"big": 1}))
		Expect(rounds[1].BoundPods()).To(Equal(map[string]int{"small": 1}))
		Expect(h.PodsIn("big", model.Pending)).To(Equal(1))
	})
})

var _ = Describe("Fair share across jobs larger than the quotas between them", func() {
	// foxtrot deserves 3 of 9 GPUs and holds one 4-GPU job; hotel deserves 4, its fair share
	// is 6, and asks for a gang of two 3-GPU pods. foxtrot is 1 GPU above its share, but the
	// only way to free room is its whole job, which leaves it at 0: owed 3 at once, it would
	// reclaim hotel's 6 by the quota rule, and hotel would take them back — a ring.
	It("does not reclaim by fair share what would take the victim's queue below its deserved quota", func() {
		h := New("").
			Nodes(Node("n0").GPUs(4), Node("n1").GPUs(5)).
			Queues(Queue("foxtrot").GPUQuota(3).GPULimit(6).GPUWeight(0), Queue("hotel").GPUQuota(4).GPUWeight(2)).
			Jobs(Job("big").Queue("foxtrot").GPUs(4).Running("n0"),
				Job("waiting").Queue("foxtrot").GPUs(3),
				Job("gang").Queue("hotel").MinMember(2).Pods(2).GPUs(3))
		round := h.RunCycle(ctx)
		Expect(round.Evictions).To(BeEmpty())
		Expect(round.Reasons("gang")).To(ContainElement(ContainSubstring(`reclaiming from queue "foxtrot" for queue "hotel" would not be fair`)))
	})

	It("still reclaims by fair share from a queue that could never win its quota back", func() {
		// b's only job is a gang of 8 against a quota of 2: once evicted, nothing of b fits
		// within its quota, so no reclaim back can follow, and a gets its fair share of 4.
		h := New("").
			Nodes(Node("n1").GPUs(8)).
			Queues(Queue("a").GPUQuota(2), Queue("b").GPUQuota(2)).
			Jobs(Job("wide").Queue("b").MinMember(8).Pods(8).GPUs(1).Running("n1", "n1", "n1", "n1", "n1", "n1", "n1", "n1"),
				Job("four").Queue("a").MinMember(4).Pods(4).GPUs(1))
		Expect(h.RunCycle(ctx).EvictedPods()).To(Equal(map[string]int{"wide": 8}))
	})
})
