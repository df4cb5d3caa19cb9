package allocate_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

var _ = Describe("Job order", func() {
	It("serves the higher priority first, even when it is younger", func() {
		h := New(allocateOnly).
			Nodes(Node("n1").GPUs(4)).
			Queues(Queue("default")).
			Jobs(
				Job("old-low").Priority(50).MinMember(4).Pods(4).GPUs(1).CreatedAt(Epoch),
				Job("new-high").Priority(125).MinMember(4).Pods(4).GPUs(1).CreatedAt(Epoch.Add(time.Hour)),
			)
		Expect(h.RunCycle(ctx).BoundPods()).To(Equal(map[string]int{"new-high": 4}))
	})

	It("serves the older of equal priority first", func() {
		h := New(allocateOnly).
			Nodes(Node("n1").GPUs(4)).
			Queues(Queue("default")).
			Jobs(
				Job("younger").MinMember(4).Pods(4).GPUs(1).CreatedAt(Epoch.Add(time.Minute)),
				Job("older").MinMember(4).Pods(4).GPUs(1).CreatedAt(Epoch),
			)
		Expect(h.RunCycle(ctx).BoundPods()).To(Equal(map[string]int{"older": 4}))
	})
})

var _ = Describe("Queues that cannot hold jobs", func() {
	It("reports a parent cycle, schedules nothing in it, and still schedules other queues", func() {
		h := New(allocateOnly).
			Nodes(Node("n1").GPUs(4)).
			Queues(Queue("a").Parent("b"), Queue("b").Parent("a"), Queue("healthy")).
			Jobs(Job("stuck").Queue("a").GPUs(1), Job("fine").Queue("healthy").GPUs(1))
		round := h.RunCycle(ctx)
		Expect(round.BoundPods()).To(Equal(map[string]int{"fine": 1}))
		Expect(round.QueueProblems).To(ConsistOf(
			model.QueueProblem{Queue: "a", Message: "parent cycle: a -> b -> a"},
			model.QueueProblem{Queue: "b", Message: "parent cycle: a -> b -> a"},
		))
		Expect(round.Reasons("stuck")).To(ConsistOf(ContainSubstring(`queue "a" is invalid: parent cycle`)))
	})

	It("reports an orphan queue and its subtree", func() {
		h := New(allocateOnly).
			Nodes(Node("n1").GPUs(4)).
			Queues(Queue("orphan").Parent("gone"), Queue("leaf").Parent("orphan")).
			Jobs(Job("stuck").Queue("leaf").GPUs(1))
		round := h.RunCycle(ctx)
		Expect(round.Binds).To(BeEmpty())
		Expect(round.QueueProblems).To(ConsistOf(
			model.QueueProblem{Queue: "orphan", Message: `parent queue "gone" does not exist`},
			model.QueueProblem{Queue: "leaf", Message: `ancestor queue "orphan" is invalid`},
		))
		Expect(round.Reasons("stuck")).To(ConsistOf(ContainSubstring(`ancestor queue "orphan" is invalid`)))
	})

	It("does not schedule a job in a queue that has children or does not exist", func() {
		h := New(allocateOnly).
			Nodes(Node("n1").GPUs(4)).
			Queues(Queue("org"), Queue("team").Parent("org")).
			Jobs(Job("in-parent").Queue("org").GPUs(1), Job("nowhere").Queue("missing").GPUs(1))
		round := h.RunCycle(ctx)
		Expect(round.Binds).To(BeEmpty())
		Expect(round.Reasons("in-parent")).To(ConsistOf(ContainSubstring("only leaf queues hold jobs")))
		Expect(round.Reasons("nowhere")).To(ConsistOf(`queue "missing" does not exist, or belongs to another node pool`))
	})
})

var _ = Describe("Node choice", func() {
	It("packs GPUs onto the fullest node so that whole nodes stay free", func() {
		h := New(allocateOnly).
			Nodes(Node("empty").GPUs(8), Node("busy").GPUs(8)).
			Queues(Queue("default")).
			Jobs(Job("running").Pods(6).GPUs(1).MinMember(6).Running("busy", "busy", "busy", "busy", "busy", "busy"),
				Job("new").GPUs(1))
		round := h.RunCycle(ctx)
		Expect(round.Binds).To(ConsistOf(Placement{Pod: "ns/new-0", Job: "ns/new", Node: "busy"}))
	})

	It("spreads when configured to", func() {
		h := New(`
actions: allocate
tiers:
- plugins:
  - name: nodeplacement
    arguments: {gpu: spread}
`).
			Nodes(Node("empty").GPUs(8), Node("busy").GPUs(8)).
			Queues(Queue("default")).
			Jobs(Job("running").GPUs(1).Running("busy"), Job("new").GPUs(1))
		Expect(h.RunCycle(ctx).Binds).To(ConsistOf(Placement{Pod: "ns/new-0", Job: "ns/new", Node: "empty"}))
	})

	It("respects node selectors and cordoned nodes", func() {
		h := New(allocateOnly).
			Nodes(Node("a100").GPUs(8).Label("gpu", "a100").Cordoned(),
				Node("a100-2").GPUs(8).Label("gpu", "a100"),
				Node("h100").GPUs(8).Label("gpu", "h100")).
			Queues(Queue("default")).
			Jobs(Job("picky").GPUs(8).NodeSelector("gpu", "a100"), Job("also-picky").GPUs(8).NodeSelector("gpu", "a100"))
		round := h.RunCycle(ctx)
		Expect(round.Binds).To(HaveLen(1))
		Expect(round.Binds[0].Node).To(Equal("a100-2"))
		Expect(round.BoundPods()).To(HaveKey("also-picky"), "equal jobs go in name order")
		Expect(round.Reasons("picky")).To(ConsistOf(ContainSubstring(
			"0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) were unschedulable.")))
	})
})

var _ = Describe("Resources being released", func() {
	It("pipelines a gang onto them instead of binding, then binds once they are free", func() {
		h := New(allocateOnly).
			Nodes(Node("n1").GPUs(4)).
			Queues(Queue("default")).
			Jobs(Job("leaving").MinMember(4).Pods(4).GPUs(1).Running("n1", "n1", "n1", "n1"),
				Job("next").Priority(90).MinMember(2).Pods(2).GPUs(2))
		for _, pod := range h.JobNamed("leaving").Pods {
			pod.Status = model.Releasing
		}
		rounds, stable := h.RunRounds(ctx, 5)
		Expect(stable).To(BeTrue())
		Expect(rounds[0].Binds).To(BeEmpty())
		Expect(rounds[0].PipelinedPods()).To(Equal(map[string]int{"next": 2}))
		Expect(rounds[0].Started).To(BeEmpty(), "a pipelined job has not started")
		Expect(rounds[1].BoundPods()).To(Equal(map[string]int{"next": 2}))
		Expect(rounds[1].Started).To(HaveLen(1))
	})
})

var _ = Describe("Determinism", func() {
	build := func() *Harness {
		h := New(allocateOnly).Nodes(Node("n1").GPUs(8), Node("n2").GPUs(8), Node("n3").GPUs(8)).
			Queues(Queue("org"), Queue("a").Parent("org"), Queue("b").Parent("org"))
		for i, name := range []string{"j1", "j2", "j3", "j4", "j5", "j6", "j7"} {
			queue := "a"
			if i%2 == 1 {
				queue = "b"
			}
			h.Jobs(Job(name).Queue(queue).MinMember(int32(1 + i%3)).Pods(2 + i%4).GPUs(int64(1 + i%2)))
		}
		return h
	}

	It("makes identical decisions on identical input and reaches a fixed point", func() {
		first, stable := build().RunRounds(ctx, 10)
		Expect(stable).To(BeTrue())
		second, _ := build().RunRounds(ctx, 10)
		Expect(second).To(Equal(first))
		Expect(first[len(first)-1].IsQuiet()).To(BeTrue())
	})
})

var _ = Describe("Queue order", func() {
	// Both queues have unlimited CPU quotas, which once made both look "below quota"; then
	// the queue name decided, and a job that takes its queue over quota could be served
	// before one its queue is owed.
	DescribeTable("serves the queue whose next job stays within quota, whatever the names",
		func(borrower, owner string) {
			h := New(`
actions: allocate
tiers:
- plugins:
  - name: priority
  - name: proportion
  - name: predicates
  - name: nodeplacement
`).
				Nodes(Node("n1").GPUs(3)).
				Queues(Queue(borrower).GPUQuota(2), Queue(owner).GPUQuota(2)).
				Jobs(Job("over-quota").Queue(borrower).GPUs(3), Job("within-quota").Queue(owner).GPUs(1))
			round := h.RunCycle(ctx)
			Expect(round.BoundPods()).To(Equal(map[string]int{"within-quota": 1}))
			Expect(round.Reasons("over-quota")).NotTo(BeEmpty())
		},
		Entry("the owner's name sorts last", "a", "b"),
		Entry("the owner's name sorts first", "b", "a"),
	)
})
