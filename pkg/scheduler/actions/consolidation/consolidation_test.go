package consolidation_test

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

var _ = Describe("Consolidation", func() {
	// Two 4-GPU nodes each half used by a 2-GPU job: 4 GPUs are free, but on no one node. A
	// 4-GPU pod fits once one of the jobs moves beside the other; it is moved once, runs
	// again on the other node, and the 4-GPU pod gets the node it left.
	fragmented := func() *Harness {
		h := New(config).Nodes(Node("n1").GPUs(4), Node("n2").GPUs(4)).Queues(Queue("team").GPUQuota(8))
		h.Jobs(Job("a").Queue("team").GPUs(2).Running("n1").StartedAt(Epoch.Add(-time.Hour)),
			Job("b").Queue("team").GPUs(2).Running("n2").StartedAt(Epoch.Add(-time.Hour)),
			Job("big").Queue("team").GPUs(4))
		return h
	}

	It("moves a running job so that a pending one fits, and both run", func() {
		h := fragmented()
		rounds, stable := h.RunRounds(ctx, 10)
		Expect(stable).To(BeTrue())
		moved := evictions(rounds)
		Expect(moved).To(HaveLen(1), "one 2-GPU job moves, once")
		Expect(moved[0].Reason.Action).To(Equal(framework.Consolidation))
		Expect(moved[0].Reason.Preemptor).To(Equal(model.NewJobID(Namespace, "big")))
		Expect(moved[0].Reason.Note.Text).To(HavePrefix("moved to make room; it fits on node "),
			"the moved job's owner is told it was moved, and where it fits")
		Expect(h.PodsIn("big", model.Running)).To(Equal(1))
		Expect(h.PodsIn("a", model.Running)).To(Equal(1))
		Expect(h.PodsIn("b", model.Running)).To(Equal(1))
		nodes := map[string]int64{}
		for _, job := range []string{"a", "b", "big"} {
			for _, p := range h.JobNamed(job).Pods {
				nodes[p.NodeName] += p.Request.Get(model.GPU) / model.MilliGPU
			}
		}
		Expect(nodes).To(Equal(map[string]int64{"n1": 4, "n2": 4}), "every GPU in use")
	})

	It("never moves a job its min-runtime protects, and tells the waiting job until when", func() {
		h := New(config).Nodes(Node("n1").GPUs(4), Node("n2").GPUs(4)).
			Queues(Queue("team").GPUQuota(8).PreemptMinRuntime(2 * time.Hour))
		h.Jobs(Job("a").Queue("team").GPUs(2).Running("n1").StartedAt(Epoch.Add(-time.Hour)).PodsStartedAt(Epoch.Add(-time.Hour)),
			Job("b").Queue("team").GPUs(2).Running("n2").StartedAt(Epoch.Add(-time.Hour)).PodsStartedAt(Epoch.Add(-time.Hour)),
			Job("big").Queue("team").GPUs(4))
		rounds, _ := h.RunRounds(ctx, 3)
		Expect(evictions(rounds)).To(BeEmpty(), "a move is an eviction: both jobs have run 1h of their 2h")
		Expect(rounds[len(rounds)-1].Reasons("big")).To(ContainElement(And(
			HavePrefix("consolidation: victims are protected by min-runtime"), ContainSubstring("until 2026-01-01T01:00:00Z"))))

		h.Clock.SetTime(Epoch.Add(time.Hour))
		rounds, stable := h.RunRounds(ctx, 10)
		Expect(stable).To(BeTrue())
		Expect(evictions(rounds)).To(HaveLen(1), "once the protection ends, one job moves")
		Expect(h.PodsIn("big", model.Running)).To(Equal(1))
	})

	It("moves a job of another queue, protected by its reclaim min-runtime as a reclaim would be", func() {
		h := New(config).Nodes(Node("n1").GPUs(4), Node("n2").GPUs(4)).
			Queues(Queue("team").GPUQuota(4), Queue("other").GPUQuota(4).ReclaimMinRuntime(2*time.Hour))
		h.Jobs(Job("a").Queue("other").GPUs(2).Running("n1").StartedAt(Epoch.Add(-time.Hour)).PodsStartedAt(Epoch.Add(-time.Hour)),
			Job("b").Queue("other").GPUs(2).Running("n2").StartedAt(Epoch.Add(-time.Hour)).PodsStartedAt(Epoch.Add(-time.Hour)),
			Job("big").Queue("team").GPUs(4))
		rounds, _ := h.RunRounds(ctx, 3)
		Expect(evictions(rounds)).To(BeEmpty(), "queue other protects its jobs from other queues for 2h")
		Expect(rounds[len(rounds)-1].Reasons("big")).To(ContainElement(HavePrefix("consolidation: victims are protected by min-runtime")))
	})

	// 4 GPUs are free, 1 and 3, but each running job may only run in its own zone: moving
	// either would leave it nowhere to go, so neither moves.
	It("moves nothing when the moved pods would fit nowhere else", func() {
		h := New(config).Nodes(Node("n1").GPUs(4).Label("zone", "a"), Node("n2").GPUs(4).Label("zone", "b")).
			Queues(Queue("team").GPUQuota(8))
		h.Jobs(Job("a").Queue("team").GPUs(3).NodeSelector("zone", "a").Running("n1").StartedAt(Epoch.Add(-time.Hour)),
			Job("b").Queue("team").GPUs(1).NodeSelector("zone", "b").Running("n2").StartedAt(Epoch.Add(-time.Hour)),
			Job("big").Queue("team").GPUs(4))
		rounds, _ := h.RunRounds(ctx, 3)
		Expect(evictions(rounds)).To(BeEmpty())
		Expect(rounds[len(rounds)-1].Reasons("big")).To(ContainElement(And(HavePrefix("consolidation: "), ContainSubstring("fits on no node"))))
	})

	// Moving pods only rearranges the free GPUs: with 2 free and a 4-GPU job waiting, the
	// cluster is not searched, and the job is told nothing of consolidation.
	It("does not search when the cluster has too little free in all", func() {
		h := New(config).Nodes(Node("n1").GPUs(4), Node("n2").GPUs(4)).Queues(Queue("team").GPUQuota(8))
		h.Jobs(Job("a").Queue("team").GPUs(3).Running("n1").StartedAt(Epoch.Add(-time.Hour)),
			Job("b").Queue("team").GPUs(3).Running("n2").StartedAt(Epoch.Add(-time.Hour)),
			Job("big").Queue("team").GPUs(4))
		round := h.RunCycle(ctx)
		Expect(round.Evictions).To(BeEmpty())
		Expect(round.Reasons("big")).NotTo(ContainElement(HavePrefix("consolidation")))
	})

	// Upstream's case for shares: on a 2-GPU node, a 0.5 share on each device leaves no
	// device free for a whole-GPU pod; moving one share beside the other frees one.
	It("moves a share to another device of its node to free a whole GPU", func() {
		h := New(config).Nodes(Node("n1").GPUs(2)).Queues(Queue("team").GPUQuota(2))
		h.Jobs(Job("s1").Queue("team").Share(0.5, 1).Running("n1").OnDevice("device-0").StartedAt(Epoch.Add(-time.Hour)),
			Job("s2").Queue("team").Share(0.5, 1).Running("n1").OnDevice("device-1").StartedAt(Epoch.Add(-time.Hour)),
			Job("whole").Queue("team").GPUs(1))
		rounds, stable := h.RunRounds(ctx, 10)
		Expect(stable).To(BeTrue())
		Expect(evictions(rounds)).To(HaveLen(1), "one share moves")
		Expect(h.PodsIn("whole", model.Running)).To(Equal(1))
		Expect(h.PodsIn("s1", model.Running) + h.PodsIn("s2", model.Running)).To(Equal(2))
		var groups []string
		for _, job := range []string{"s1", "s2"} {
			groups = append(groups, h.JobNamed(job).Pods[0].GPUGroups...)
		}
		Expect(groups[0]).To(Equal(groups[1]), "both shares on one device")
	})

	It("moves at most the configured number of jobs in a cycle, and none when it is 0", func() {
		h := fragmented().MaxConsolidationPreemptees(0)
		rounds, _ := h.RunRounds(ctx, 3)
		Expect(evictions(rounds)).To(BeEmpty(), "0 turns consolidation off")

		// Two 1-GPU jobs on each node: the 4-GPU pod needs two of them moved.
		h = New(config).Nodes(Node("n1").GPUs(4), Node("n2").GPUs(4)).Queues(Queue("team").GPUQuota(8)).MaxConsolidationPreemptees(1)
		h.Jobs(Job("a").Queue("team").GPUs(1).Running("n1").StartedAt(Epoch.Add(-time.Hour)),
			Job("b").Queue("team").GPUs(1).Running("n1").StartedAt(Epoch.Add(-time.Hour)),
			Job("c").Queue("team").GPUs(1).Running("n2").StartedAt(Epoch.Add(-time.Hour)),
			Job("d").Queue("team").GPUs(1).Running("n2").StartedAt(Epoch.Add(-time.Hour)),
			Job("big").Queue("team").GPUs(4))
		round := h.RunCycle(ctx)
		Expect(round.Evictions).To(BeEmpty())
		Expect(round.Reasons("big")).To(ContainElement("consolidation: it would move 2 jobs, and 1 more may move in this cycle"))

		// Two 4-GPU jobs that each need one job moved: one move a cycle, the other the next.
		h = New(config).Nodes(Node("n1").GPUs(4), Node("n2").GPUs(4), Node("n3").GPUs(4), Node("n4").GPUs(4)).
			Queues(Queue("team").GPUQuota(16)).MaxConsolidationPreemptees(1)
		h.Jobs(Job("a").Queue("team").GPUs(2).Running("n1").StartedAt(Epoch.Add(-time.Hour)),
			Job("b").Queue("team").GPUs(2).Running("n2").StartedAt(Epoch.Add(-time.Hour)),
			Job("c").Queue("team").GPUs(2).Running("n3").StartedAt(Epoch.Add(-time.Hour)),
			Job("d").Queue("team").GPUs(2).Running("n4").StartedAt(Epoch.Add(-time.Hour)),
			Job("big1").Queue("team").GPUs(4), Job("big2").Queue("team").GPUs(4))
		rounds, stable := h.RunRounds(ctx, 10)
		Expect(stable).To(BeTrue())
		Expect(rounds[0].Evictions).To(HaveLen(1), "the cycle's one move")
		Expect(evictions(rounds)).To(HaveLen(2), "the second job's move comes in a later cycle")
		Expect(h.PodsIn("big1", model.Running) + h.PodsIn("big2", model.Running)).To(Equal(2))
	})

	It("makes room only for preemptible jobs, as upstream", func() {
		h := New(config).Nodes(Node("n1").GPUs(4), Node("n2").GPUs(4)).Queues(Queue("team").GPUQuota(8))
		h.Jobs(Job("a").Queue("team").GPUs(2).Running("n1").StartedAt(Epoch.Add(-time.Hour)),
			Job("b").Queue("team").GPUs(2).Running("n2").StartedAt(Epoch.Add(-time.Hour)),
			Job("serving").Queue("team").Priority(125).GPUs(4))
		rounds, _ := h.RunRounds(ctx, 3)
		for _, e := range evictions(rounds) {
			Expect(e.Reason.Action).NotTo(Equal(framework.Consolidation))
		}
	})
	// A queue at its limit may not grow by moving others out of the way: the moved job could
	// never come back under the same limit, and would move the first one in turn.
	It("makes no room for a job its queue's limit refuses", func() {
		h := New(config).Nodes(Node("n1").GPUs(4), Node("n2").GPUs(4)).Queues(Queue("team").GPUQuota(8).GPULimit(4))
		h.Jobs(Job("a").Queue("team").GPUs(2).Running("n1").StartedAt(Epoch.Add(-time.Hour)),
			Job("b").Queue("team").GPUs(2).Running("n2").StartedAt(Epoch.Add(-time.Hour)),
			Job("big").Queue("team").GPUs(4))
		rounds, _ := h.RunRounds(ctx, 5)
		Expect(evictions(rounds)).To(BeEmpty())
	})

	// The victims are chosen before they are moved: when the first choice cannot go anywhere
	// (pinned to its node), the search is made again without it, and the other job moves.
	It("moves another job when the first choice fits nowhere else", func() {
		h := New(config).Nodes(Node("n1").GPUs(4).Label("zone", "a"), Node("n2").GPUs(4)).Queues(Queue("team").GPUQuota(8))
		h.Jobs(Job("pinned").Queue("team").GPUs(2).NodeSelector("zone", "a").Running("n1").StartedAt(Epoch.Add(-10*time.Minute)),
			Job("free").Queue("team").GPUs(2).Running("n2").StartedAt(Epoch.Add(-time.Hour)),
			Job("big").Queue("team").GPUs(4))
		rounds, stable := h.RunRounds(ctx, 10)
		Expect(stable).To(BeTrue())
		moved := evictions(rounds)
		Expect(moved).To(HaveLen(1))
		Expect(moved[0].Job).To(Equal(model.NewJobID(Namespace, "free")))
		Expect(h.PodsIn("big", model.Running)).To(Equal(1))
		Expect(h.PodsIn("free", model.Running)).To(Equal(1))
	})

	// Two jobs that each bind host port 9000 would both have to move to the one node with room
	// for them (n3), where only one can bind the port: neither moves, and the 3-GPU job waits.
	// (The others may not move: one is pinned to its node, two are not preemptible.)
	It("does not move two pods onto one node where their host ports clash", func() {
		h := New(config).Nodes(Node("n1").GPUs(4).Label("zone", "a"), Node("n2").GPUs(4), Node("n3").GPUs(4).Label("zone", "c")).
			Queues(Queue("team").GPUQuota(12))
		h.Jobs(Job("v1").Queue("team").GPUs(1).HostPort(9000).Running("n1").StartedAt(Epoch.Add(-time.Hour)),
			Job("v2").Queue("team").GPUs(1).HostPort(9000).Running("n1").StartedAt(Epoch.Add(-time.Hour)),
			Job("fill").Queue("team").GPUs(1).NodeSelector("zone", "a").Running("n1").StartedAt(Epoch.Add(-time.Hour)),
			Job("full").Queue("team").Priority(125).GPUs(4).Running("n2").StartedAt(Epoch.Add(-time.Hour)),
			Job("half").Queue("team").Priority(125).GPUs(2).Running("n3").StartedAt(Epoch.Add(-time.Hour)),
			Job("big").Queue("team").GPUs(3))
		rounds, _ := h.RunRounds(ctx, 3)
		Expect(evictions(rounds)).To(BeEmpty())
		Expect(rounds[len(rounds)-1].Reasons("big")).To(ContainElement(ContainSubstring("fits on no node")))
	})

	// Each moved pod is told once that it moved: a job of two pods gets the note once per pod,
	// not stacked.
	It("tells each moved pod once where its job fits", func() {
		h := New(config).Nodes(Node("n1").GPUs(4), Node("n2").GPUs(4).Label("zone", "b")).Queues(Queue("team").GPUQuota(8))
		h.Jobs(Job("pair").Queue("team").GPUs(1).Pods(2).MinMember(2).Running("n1", "n1").StartedAt(Epoch.Add(-time.Hour)),
			Job("other").Queue("team").GPUs(2).NodeSelector("zone", "b").Running("n2").StartedAt(Epoch.Add(-time.Hour)),
			Job("big").Queue("team").GPUs(4))
		round := h.RunCycle(ctx)
		Expect(round.Evictions).To(HaveLen(2))
		for _, e := range round.Evictions {
			Expect(strings.Count(e.Reason.Note.Text, "moved to make room")).To(Equal(1), e.Reason.Note.Text)
		}
	})
	// A moved job's queue keeps what it holds while the job is moved: a job of the same queue,
	// under the queue's limit of 4 GPUs, may not take the share the moved job needs to come
	// back, or the move would be a preemption.
	It("keeps the moved job's place under its queue's limit", func() {
		h := New(config).Nodes(Node("n1").GPUs(4), Node("n2").GPUs(4), Node("n3").GPUs(4), Node("n4").GPUs(4)).
			Queues(Queue("q").GPUQuota(4).GPULimit(4), Queue("r").GPUQuota(8).PreemptMinRuntime(time.Hour).ReclaimMinRuntime(time.Hour))
		h.Jobs(Job("a").Queue("q").GPUs(2).Running("n1").StartedAt(Epoch.Add(-2*time.Hour)),
			Job("c1").Queue("r").GPUs(2).Running("n1").StartedAt(Epoch.Add(-10*time.Minute)),
			Job("b").Queue("q").GPUs(2).Running("n2").StartedAt(Epoch.Add(-2*time.Hour)),
			Job("c2").Queue("r").GPUs(2).Running("n3").StartedAt(Epoch.Add(-10*time.Minute)),
			Job("d").Queue("r").GPUs(2).Running("n4").StartedAt(Epoch.Add(-10*time.Minute)),
			Job("g1").Queue("r").GPUs(4), Job("g2").Queue("q").GPUs(2))
		round := h.RunCycle(ctx)
		Expect(round.Evictions).To(HaveLen(1))
		Expect(round.Evictions[0].Job).To(Equal(model.NewJobID(Namespace, "b")), "b moves for g1")
		Expect(round.BoundPods()).NotTo(HaveKey("g2"), "q holds a and b, moved: its limit is reached")
		Expect(round.PipelinedPods()).NotTo(HaveKey("g2"))
		rounds, _ := h.RunRounds(ctx, 3)
		Expect(h.PodsIn("b", model.Running)).To(Equal(1), "b is back: %v", rounds)
		Expect(h.PodsIn("g2", model.Running)).To(BeZero())
	})
})
