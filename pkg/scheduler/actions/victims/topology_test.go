package victims_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

const rackLabel = "example.com/rack"

// Reclaim for a gang that must run in one rack frees one rack: the one whose freeing costs
// least, never one holding a protected job, and nothing at all when no rack can be freed.
var _ = Describe("Reclaim for a topology-constrained gang", func() {
	// Three racks of two 8-GPU nodes, all lent to the borrower queue.
	racks := func() *Harness {
		return New("").
			Topology("dc", rackLabel+"=rack").
			Nodes(Node("n1").GPUs(8).Label(rackLabel, "r1"), Node("n2").GPUs(8).Label(rackLabel, "r1"),
				Node("n3").GPUs(8).Label(rackLabel, "r2"), Node("n4").GPUs(8).Label(rackLabel, "r2"),
				Node("n5").GPUs(8).Label(rackLabel, "r3"), Node("n6").GPUs(8).Label(rackLabel, "r3")).
			Queues(Queue("owner").GPUQuota(16), Queue("borrower").GPUQuota(0).ReclaimMinRuntime(time.Hour))
	}
	long := Epoch.Add(-2 * time.Hour) // past its min-runtime
	owner := func() *JobBuilder {
		return Job("own").Queue("owner").Pods(2).MinMember(2).GPUs(8).InTopology("dc", "rack", "")
	}

	It("frees the rack whose freeing evicts the fewest jobs, where an unconstrained search would free two halves", func() {
		h := racks().Jobs(
			Job("r1-cheap").Queue("borrower").Priority(10).GPUs(8).Running("n1").StartedAt(long),
			Job("r1-b").Queue("borrower").GPUs(8).Running("n2").StartedAt(long),
			Job("r2-cheap").Queue("borrower").Priority(10).GPUs(8).Running("n3").StartedAt(long),
			Job("r2-b").Queue("borrower").GPUs(8).Running("n4").StartedAt(long),
			Job("r3-whole").Queue("borrower").Pods(2).MinMember(2).GPUs(8).Running("n5", "n6").StartedAt(long),
			owner())
		round := h.RunCycle(ctx)
		Expect(round.EvictedPods()).To(Equal(map[string]int{"r3-whole": 2}))
		Expect(pipelinedNodes(round)).To(ConsistOf("n5", "n6"))
	})

	It("never frees a rack by evicting a protected job; among the others, the least precious victims go", func() {
		h := racks().Jobs(
			Job("r1-cheap").Queue("borrower").Priority(10).GPUs(8).Running("n1").StartedAt(long),
			Job("r1-b").Queue("borrower").GPUs(8).Running("n2").StartedAt(long),
			Job("r2-cheap").Queue("borrower").Priority(10).GPUs(8).Running("n3").StartedAt(long),
			Job("r2-b").Queue("borrower").Priority(40).GPUs(8).Running("n4").StartedAt(long),
			Job("r3-whole").Queue("borrower").Pods(2).MinMember(2).GPUs(8).Running("n5", "n6").StartedAt(Epoch.Add(-time.Minute)),
			owner())
		round := h.RunCycle(ctx)
		Expect(round.EvictedPods()).To(Equal(map[string]int{"r2-cheap": 1, "r2-b": 1}),
			"r3's job is inside its min-runtime; r2's dearer victim is cheaper than r1's")
		Expect(pipelinedNodes(round)).To(ConsistOf("n3", "n4"))
	})

	It("evicts nothing when no one rack can be freed, and says which came closest", func() {
		h := racks().Jobs(
			Job("r1-a").Queue("borrower").GPUs(8).Running("n1").StartedAt(long),
			Job("r1-b").Queue("borrower").GPUs(8).Running("n2").StartedAt(Epoch.Add(-time.Minute)),
			Job("r2-a").Queue("borrower").GPUs(8).Running("n3").StartedAt(Epoch.Add(-time.Minute)),
			Job("r2-b").Queue("borrower").GPUs(8).Running("n4").StartedAt(Epoch.Add(-time.Minute)),
			Job("r3-a").Queue("borrower").GPUs(8).Running("n5").StartedAt(Epoch.Add(-time.Minute)),
			Job("r3-b").Queue("borrower").GPUs(8).Running("n6").StartedAt(long),
			owner())
		round := h.RunCycle(ctx)
		Expect(round.Evictions).To(BeEmpty(), "r1's and r3's free halves are in different racks")
		Expect(round.Reasons("own")).To(ContainElement(And(
			ContainSubstring("does not fit in one rack of topology dc even with every allowed victim gone: 3 domains tried"),
			ContainSubstring("closest, rack r1: no allowed victims make room for pod 2 of 2"))))
	})

	It("evicts nothing for a gang larger than any rack", func() {
		h := racks().Jobs(
			Job("r1-a").Queue("borrower").GPUs(8).Running("n1").StartedAt(long),
			Job("big").Queue("owner").Pods(3).MinMember(3).GPUs(8).InTopology("dc", "rack", ""))
		round := h.RunCycle(ctx)
		Expect(round.Evictions).To(BeEmpty())
		Expect(round.Reasons("big")).To(ContainElement(ContainSubstring("no rack is large enough for it")))
	})
})

// pipelinedNodes lists the nodes a round promised pods to.
func pipelinedNodes(round Round) []string {
	var nodes []string
	for _, p := range round.Pipelined {
		nodes = append(nodes, p.Node)
	}
	return nodes
}

// A job whose replicas (sub-groups) each must run in one rack has each freed a rack of its
// own: where an unconstrained search takes the cheapest victims in every rack, the replicas
// would span racks.
var _ = Describe("Reclaim for sub-groups that each must run in one rack", func() {
	It("frees one rack per replica, two replicas never sharing a rack too small for both", func() {
		h := New("").
			Topology("dc", rackLabel+"=rack").
			Nodes(Node("n1").GPUs(8).Label(rackLabel, "r1"), Node("n2").GPUs(8).Label(rackLabel, "r1"),
				Node("n3").GPUs(8).Label(rackLabel, "r2"), Node("n4").GPUs(8).Label(rackLabel, "r2"),
				Node("n5").GPUs(8).Label(rackLabel, "r3"), Node("n6").GPUs(8).Label(rackLabel, "r3")).
			Queues(Queue("owner").GPUQuota(32), Queue("borrower").GPUQuota(0))
		long := Epoch.Add(-2 * time.Hour)
		for i, node := range []string{"n1", "n2", "n3", "n4", "n5", "n6"} {
			job := Job("b-" + node).Queue("borrower").GPUs(8).Running(node).StartedAt(long)
			if i%2 == 0 {
				job = job.Priority(10) // the cheapest victims: one in every rack
			}
			h.Jobs(job)
		}
		h.Jobs(Job("replicas").Queue("owner").GPUs(8).
			SubGroup("r0", 2, 2).SubGroupInTopology("dc", "rack", "").
			SubGroup("r1", 2, 2).SubGroupInTopology("dc", "rack", ""))
		round := h.RunCycle(ctx)
		Expect(round.EvictedPods()).To(HaveLen(4))
		racks := map[string]map[string]bool{}
		for _, p := range round.Pipelined {
			group := "r0"
			if p.Pod >= "ns/replicas-2" {
				group = "r1"
			}
			if racks[group] == nil {
				racks[group] = map[string]bool{}
			}
			racks[group][map[string]string{"n1": "r1", "n2": "r1", "n3": "r2", "n4": "r2", "n5": "r3", "n6": "r3"}[p.Node]] = true
		}
		Expect(racks["r0"]).To(HaveLen(1), "%v", round.Pipelined)
		Expect(racks["r1"]).To(HaveLen(1), "%v", round.Pipelined)
		Expect(racks["r0"]).NotTo(Equal(racks["r1"]), "a rack of two nodes holds one replica")
	})
})
