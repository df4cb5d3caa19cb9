package allocate_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

// runningPerSubGroup counts a job's pods holding a node, by sub-group.
func runningPerSubGroup(job *model.JobInfo) map[string]int {
	counts := map[string]int{}
	for _, p := range job.Pods {
		if p.Status.IsActive() {
			counts[p.SubGroup]++
		}
	}
	return counts
}

// onNodes is allocate alone on nodes of the given GPUs (n1, n2, ...) and the default queue.
func onNodes(gpus ...int64) *Harness {
	var nodes []*NodeBuilder
	for i, n := range gpus {
		nodes = append(nodes, Node(fmt.Sprintf("n%d", i+1)).GPUs(n))
	}
	return New(allocateOnly).Nodes(nodes...).Queues(Queue("default"))
}

var _ = Describe("Gangs counted in sub-groups (minSubGroup)", func() {
	// Upstream's example: 4 replicas of 8 pods, any 3 of them enough.
	replicas := func() *JobBuilder {
		return Job("infer").MinSubGroup(3).Replicas("prefill", 4, 8).GPUs(1)
	}

	It("runs 3 of 4 replicas, whole, when only 24 pods fit", func() {
		h := onNodes(8, 8, 8).Jobs(replicas())
		round := h.RunCycle(ctx)
		Expect(round.BoundPods()).To(Equal(map[string]int{"infer": 24}))
		Expect(round.Started).To(HaveLen(1))
		Expect(runningPerSubGroup(h.JobNamed("infer"))).To(Equal(map[string]int{"prefill-0": 8, "prefill-1": 8, "prefill-2": 8}),
			"whole replicas, the first in name order among equals")
	})

	It("grows into the fourth replica when it fits", func() {
		h := onNodes(16, 16).Jobs(replicas())
		Expect(h.RunCycle(ctx).BoundPods()).To(Equal(map[string]int{"infer": 32}))
	})

	It("does not run with 2 replicas, and binds nothing of it", func() {
		h := onNodes(8, 8, 7).Jobs(replicas())
		round := h.RunCycle(ctx)
		Expect(round.Binds).To(BeEmpty(), "23 GPUs hold 2 replicas and part of a third: not a gang")
		Expect(round.Reasons("infer")).To(ContainElement(HaveSuffix(
			"(its gang needs 3 of its 4 sub-groups ready (at least 24 pods): 0 are)")), "the reason says the gang is 3 of 4 replicas")
	})

	It("leaves jobs without minSubGroup to need every sub-group", func() {
		h := onNodes(8, 8, 8).Jobs(Job("infer").MinMember(32).Replicas("prefill", 4, 8).GPUs(1))
		Expect(h.RunCycle(ctx).Binds).To(BeEmpty())
	})

	It("places nested levels: both parts, each with its leader and its workers", func() {
		h := onNodes(10).Jobs(Job("train").MinSubGroup(1).GPUs(1).
			SubGroupOfGroups("", "decode", 2).
			SubGroupUnder("decode", "decode-leaders", 1, 1).SubGroupUnder("decode", "decode-workers", 4, 4).
			SubGroupOfGroups("", "prefill", 2).
			SubGroupUnder("prefill", "prefill-leaders", 1, 1).SubGroupUnder("prefill", "prefill-workers", 4, 5))
		round := h.RunCycle(ctx)
		Expect(round.BoundPods()).To(Equal(map[string]int{"train": 10}), "one part is the gang (5); the rest grows into the 10 GPUs")
		counts := runningPerSubGroup(h.JobNamed("train"))
		Expect(counts["decode-leaders"]+counts["decode-workers"]).To(Equal(5), "decode, first in name order, is whole")
	})
})
