package victims_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

var _ = Describe("Evicting only what is needed", func() {
	It("leaves a CPU-only victim alone when the preemptor needs GPUs", func() {
		h := New("").
			Nodes(Node("n1").GPUs(8)).
			Queues(Queue("team")).
			Jobs(Job("cpu-only").Queue("team").Priority(10).CPUs(4).Running("n1"),
				Job("gpu").Queue("team").Priority(20).GPUs(8).Running("n1"),
				Job("urgent").Queue("team").Priority(90).GPUs(8))
		Expect(h.RunCycle(ctx).EvictedPods()).To(Equal(map[string]int{"gpu": 1}))
	})

	It("drops a cheaper victim that a larger one made unnecessary", func() {
		h := New("").
			Nodes(Node("n1").GPUs(8)).
			Queues(Queue("team")).
			Jobs(Job("small").Queue("team").Priority(10).GPUs(1).Running("n1"),
				Job("large").Queue("team").Priority(20).GPUs(7).Running("n1"),
				Job("urgent").Queue("team").Priority(90).GPUs(7))
		Expect(h.RunCycle(ctx).EvictedPods()).To(Equal(map[string]int{"large": 1}))
	})
})

var _ = Describe("Reclaim from elastic jobs", func() {
	It("stops taking surplus pods once the victim's queue is down to its share", func() {
		h := New("").
			Nodes(Node("n1").GPUs(8)).
			Queues(Queue("r").GPUQuota(4), Queue("v").GPUQuota(4)).
			Jobs(Job("elastic").Queue("v").MinMember(1).Pods(5).GPUs(1).Running("n1", "n1", "n1", "n1", "n1"),
				Job("reclaimer").Queue("r").MinMember(1).Pods(1).GPUs(4))
		round := h.RunCycle(ctx)
		Expect(round.EvictedPods()["elastic"]).To(BeNumerically("<=", 1),
			"v holds 5 of its fair 4: at most one pod is above its share")
	})
})

var _ = Describe("Jobs whose queue is gone", func() {
	It("do not crash reclaim, and give way first", func() {
		h := New("").
			Nodes(Node("n1").GPUs(4)).
			Queues(Queue("owner").GPUQuota(4), Queue("other").GPUQuota(0)).
			Jobs(Job("orphaned").Queue("deleted").GPUs(2).Running("n1"),
				Job("borrowing").Queue("other").GPUs(2).Running("n1"),
				Job("own").Queue("owner").GPUs(2))
		round := h.RunCycle(ctx)
		Expect(round.EvictedPods()).To(Equal(map[string]int{"orphaned": 1}))
	})
})

var _ = Describe("Victims still terminating", func() {
	It("do not inflate their queue's share into a reclaim fair share does not justify", func() {
		h := New("").
			Nodes(Node("n1").GPUs(4), Node("n2").GPUs(4)).
			Queues(Queue("a").GPUQuota(0), Queue("b").GPUQuota(0)).
			Jobs(Job("a1").Queue("a").MinMember(3).Pods(3).GPUs(1).Running("n1", "n1", "n1"),
				Job("a2").Queue("a").MinMember(2).Pods(2).GPUs(1).Running("n2", "n2"),
				Job("b-old").Queue("b").MinMember(2).Pods(2).GPUs(1).Running("n2", "n2"),
				Job("b-new").Queue("b").MinMember(1).Pods(1).GPUs(3))
		for _, p := range h.JobNamed("b-old").Pods {
			p.Status = model.Releasing
		}
		Expect(h.RunCycle(ctx).Evictions).To(BeEmpty())
	})
})
