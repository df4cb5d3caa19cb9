package victims_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	v1 "k8s.io/api/core/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

var _ = Describe("Preempt", func() {
	It("evicts the lowest-priority jobs of the same queue, and only as many as needed", func() {
		h := New("").
			Nodes(Node("n1").GPUs(4)).
			Queues(Queue("team")).
			Jobs(Job("low").Queue("team").Priority(10).GPUs(2).Running("n1"),
				Job("mid").Queue("team").Priority(40).GPUs(2).Running("n1"),
				Job("urgent").Queue("team").Priority(90).GPUs(2))
		rounds, stable := h.RunRounds(ctx, 10)
		Expect(stable).To(BeTrue())
		Expect(rounds[0].EvictedPods()).To(Equal(map[string]int{"low": 1}))
		Expect(rounds[0].Evictions[0].Reason.Action).To(Equal(framework.Preempt))
		Expect(h.PodsIn("urgent", model.Running)).To(Equal(1))
		Expect(h.PodsIn("mid", model.Running)).To(Equal(1))
		Expect(evictionsOf(rounds)).To(Equal(map[string]int{"low": 1}), "the evicted job does not preempt back")
	})

	It("evicts a gang whole with the surplus pod it turned out not to need on its own", func() {
		// The surplus pod (1 GPU) is tried first and does not free enough; the gang, listed
		// without it, frees 2 GPUs, enough alone. Dropping the surplus unit as unneeded must
		// not leave that pod running alone below the gang's minimum of 2.
		h := New("").
			Nodes(Node("n1").GPUs(3)).
			Queues(Queue("team")).
			Jobs(Job("gang").Queue("team").Priority(10).GPUs(1).Pods(3).MinMember(2).Running("n1", "n1", "n1"),
				Job("urgent").Queue("team").Priority(90).GPUs(2))
		Expect(h.RunCycle(ctx).EvictedPods()).To(Equal(map[string]int{"gang": 3}))
	})

	It("never preempts a job of equal priority", func() {
		h := New("").
			Nodes(Node("n1").GPUs(2)).
			Queues(Queue("team")).
			Jobs(Job("first").Queue("team").Priority(50).GPUs(2).Running("n1"),
				Job("second").Queue("team").Priority(50).GPUs(2))
		round := h.RunCycle(ctx)
		Expect(round.Evictions).To(BeEmpty())
	})

	It("never takes from another queue, whatever the priority", func() {
		h := New("").
			Nodes(Node("n1").GPUs(2)).
			Queues(Queue("a").GPUQuota(1), Queue("b").GPUQuota(1)).
			Jobs(Job("b-low").Queue("b").Priority(10).GPUs(1).Running("n1"),
				Job("a-low").Queue("a").Priority(10).GPUs(1).Running("n1"),
				Job("a-high").Queue("a").Priority(90).GPUs(1))
		round := h.RunCycle(ctx)
		Expect(round.EvictedPods()).To(Equal(map[string]int{"a-low": 1}))
	})

	It("evicts a gang whole: a job at its minimum loses every pod, on every node", func() {
		h := New("").
			Nodes(Node("n1").GPUs(4), Node("n2").GPUs(4)).
			Queues(Queue("team")).
			Jobs(Job("gang").Queue("team").Priority(10).MinMember(2).Pods(2).GPUs(4).Running("n1", "n2"),
				Job("urgent").Queue("team").Priority(90).GPUs(4))
		round := h.RunCycle(ctx)
		Expect(round.EvictedPods()).To(Equal(map[string]int{"gang": 2}))
		Expect(round.PipelinedPods()).To(Equal(map[string]int{"urgent": 1}))
	})

	It("shrinks an elastic job one surplus pod at a time before touching its gang", func() {
		h := New("").
			Nodes(Node("n1").GPUs(4)).
			Queues(Queue("team")).
			Jobs(Job("elastic").Queue("team").Priority(10).MinMember(1).Pods(4).GPUs(1).Running("n1", "n1", "n1", "n1"),
				Job("urgent").Queue("team").Priority(90).GPUs(2))
		round := h.RunCycle(ctx)
		Expect(round.EvictedPods()).To(Equal(map[string]int{"elastic": 2}))
		Expect(round.Evictions).To(ConsistOf(
			HaveField("Pod", "ns/elastic-3"), HaveField("Pod", "ns/elastic-2")), "the last replicas go first")
	})

	It("uses resources already being released before evicting anything new", func() {
		h := New("").
			Nodes(Node("n1").GPUs(4)).
			Queues(Queue("team")).
			Jobs(Job("leaving").Queue("team").Priority(10).GPUs(2).Running("n1"),
				Job("staying").Queue("team").Priority(10).GPUs(2).Running("n1"),
				Job("urgent").Queue("team").Priority(90).GPUs(2))
		h.JobNamed("leaving").Pods[0].Status = model.Releasing
		round := h.RunCycle(ctx)
		Expect(round.Evictions).To(BeEmpty())
		Expect(round.PipelinedPods()).To(Equal(map[string]int{"urgent": 1}))
	})
})

var _ = Describe("A job that gained resources by eviction", func() {
	It("is no victim later in the same cycle", func() {
		// urgent may not reclaim, so that partial reclaims first and urgent then tries to preempt it.
		h := New("").Plugins(&noReclaimFor{preemptor: "urgent"}).
			Nodes(Node("n1").GPUs(4)).
			Queues(Queue("a").GPUQuota(4), Queue("b").GPUQuota(0)).
			Jobs(Job("partial").Queue("a").Priority(50).MinMember(2).Pods(2).GPUs(2).Running("n1"),
				Job("borrow").Queue("b").GPUs(2).Running("n1"),
				Job("urgent").Queue("a").Priority(90).GPUs(2))
		round := h.RunCycle(ctx)
		Expect(round.EvictedPods()).To(Equal(map[string]int{"borrow": 1}), "reclaim for partial, then preempt may not undo it")
		Expect(round.Evictions[0].Reason.Action).To(Equal(framework.Reclaim))
		Expect(round.PipelinedPods()).To(Equal(map[string]int{"partial": 1}))
	})
})

// noReclaimFor is a fake plugin that lets one preemptor evict nothing by reclaim.
type noReclaimFor struct{ preemptor string }

func (p *noReclaimFor) Name() string { return "no-reclaim-for" }
func (p *noReclaimFor) OnSessionOpen(ssn *framework.Session) {
	ssn.AddIsPreemptibleFn(p.Name(), func(action framework.ActionType, preemptor, _ *model.JobInfo) framework.Status {
		if action == framework.Reclaim && preemptor.Name == p.preemptor {
			return framework.NewStatus(framework.Unschedulable, "no reclaim for "+p.preemptor)
		}
		return framework.Status{}
	})
}
func (p *noReclaimFor) OnSessionClose(*framework.Session) {}

var _ = Describe("Preempting beyond the queue's fair share", func() {
	// team deserves 2 of 5 GPUs and, with over-quota weight 0, its fair share is 2. Its
	// urgent 3-GPU job could evict low (1 GPU) and take 2 idle GPUs beside it: team would hold
	// 3, above its share, and be reclaimed from at once.
	build := func(teamWeight float64) *Harness {
		return New(`
actions: preempt
tiers:
- plugins:
  - name: priority
  - name: proportion
  - name: minruntime
`).
			Nodes(Node("n1").GPUs(5)).
			Queues(Queue("team").GPUQuota(2).GPUWeight(teamWeight), Queue("other").GPUQuota(0)).
			Jobs(Job("low").Queue("team").Priority(10).GPUs(1).Running("n1"),
				Job("borrowing").Queue("other").GPUs(2).Running("n1"),
				Job("more").Queue("other").GPUs(2), // other wants more: the spare is shared
				Job("urgent").Queue("team").Priority(90).GPUs(3))
	}

	It("is refused: the plan would grow the queue above its share", func() {
		round := build(0).RunCycle(ctx)
		Expect(round.Evictions).To(BeEmpty())
		Expect(round.Reasons("urgent")).To(ContainElement(ContainSubstring(`preempt would take queue "team" above its fair share of nvidia.com/gpu`)))
	})

	It("is allowed when the queue's share covers the growth", func() {
		round := build(4).RunCycle(ctx) // weight 4 against 1: team's share is 2 + 4/5 of the spare
		Expect(round.EvictedPods()).To(Equal(map[string]int{"low": 1}))
	})
})

const fpga v1.ResourceName = "example.com/fpga"

// Victims only where they help: a node the preemptor cannot run on is never emptied for it.
var _ = Describe("Victims where the preemptor could not run", func() {
	It("are never evicted: a tainted node keeps its pods, the node the preemptor may use gives them up", func() {
		h := New("").
			Nodes(Node("a-reserved").GPUs(4).Taint("dedicated", "inference", v1.TaintEffectNoSchedule),
				Node("b-open").GPUs(4)).
			Queues(Queue("team")).
			Jobs(Job("low-reserved").Queue("team").Priority(10).GPUs(4).Tolerate("dedicated", "", "").Running("a-reserved"),
				Job("mid-open").Queue("team").Priority(40).GPUs(4).Running("b-open"),
				Job("urgent").Queue("team").Priority(90).GPUs(4))
		rounds, stable := h.RunRounds(ctx, 10)
		Expect(stable).To(BeTrue())
		Expect(evictionsOf(rounds)).To(Equal(map[string]int{"mid-open": 1}),
			"the lowest-priority job runs where urgent may not go: evicting it would free nothing urgent can use")
		Expect(h.PodsIn("urgent", model.Running)).To(Equal(1))
	})

	It("are never evicted for a resource their node does not have", func() {
		h := New("").
			Nodes(Node("n1").GPUs(4), Node("n2").GPUs(4).Extended(fpga, 1)).
			Queues(Queue("team")).
			Jobs(Job("a").Queue("team").Priority(10).GPUs(4).Running("n1").CreatedAt(Epoch),
				Job("b").Queue("team").Priority(10).GPUs(4).Running("n2").CreatedAt(Epoch.Add(1)),
				Job("urgent").Queue("team").Priority(90).GPUs(4).Extended(fpga, 1))
		rounds, stable := h.RunRounds(ctx, 10)
		Expect(stable).To(BeTrue())
		Expect(evictionsOf(rounds)).To(Equal(map[string]int{"b": 1}), "only n2 has the FPGA the preemptor needs")
		Expect(h.PodsIn("urgent", model.Running)).To(Equal(1))
	})

	It("are not evicted at all when no node could take the preemptor", func() {
		h := New("").
			Nodes(Node("n1").GPUs(4)).
			Queues(Queue("team")).
			Jobs(Job("low").Queue("team").Priority(10).GPUs(4).Running("n1"),
				Job("urgent").Queue("team").Priority(90).GPUs(4).Extended(fpga, 1))
		rounds, _ := h.RunRounds(ctx, 3)
		Expect(evictionsOf(rounds)).To(BeEmpty())
		Expect(rounds[0].Reasons("urgent")).To(ContainElement(ContainSubstring(
			"0/1 nodes are available: 1 Insufficient example.com/fpga, 1 Insufficient nvidia.com/gpu.")))
	})
})

// Host ports are part of a node's state that a plan must respect for its own gang too.
var _ = Describe("A preemptor with host ports", func() {
	It("keeps its promise while its victim terminates: its own port does not refuse it", func() {
		h := New("").
			Nodes(Node("n1").GPUs(8)).
			Queues(Queue("team")).
			Jobs(Job("low").Queue("team").Priority(10).GPUs(8).Running("n1"),
				Job("urgent").Queue("team").Priority(90).GPUs(8).HostPort(8080))
		rounds, stable := h.RunRounds(ctx, 10)
		Expect(stable).To(BeTrue())
		for i, r := range rounds {
			Expect(r.Withdrawn).To(BeEmpty(), "round %d withdrew the promise", i)
		}
		Expect(evictionsOf(rounds)).To(Equal(map[string]int{"low": 1}))
		Expect(h.PodsIn("urgent", model.Running)).To(Equal(1))
	})

	It("never puts two pods of its gang binding one port on the same node", func() {
		h := New("").
			Nodes(Node("n1").GPUs(8), Node("n2").GPUs(8)).
			Queues(Queue("team")).
			Jobs(Job("low").Queue("team").Priority(10).MinMember(2).Pods(2).GPUs(4).Running("n1", "n1"),
				Job("mid").Queue("team").Priority(20).MinMember(2).Pods(2).GPUs(4).Running("n2", "n2"),
				Job("urgent").Queue("team").Priority(90).MinMember(2).Pods(2).GPUs(4).HostPort(8080))
		rounds, stable := h.RunRounds(ctx, 10)
		Expect(stable).To(BeTrue())
		Expect(h.PodsIn("urgent", model.Running)).To(Equal(2), "one pod on each node, as kube-scheduler would place them")
		nodes := map[string]bool{}
		for _, p := range h.JobNamed("urgent").Pods {
			nodes[p.NodeName] = true
		}
		Expect(nodes).To(HaveLen(2))
		Expect(evictionsOf(rounds)).To(HaveKey("low"))
	})
})
