package reclaim_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

var _ = Describe("Reclaim of a large job", func() {
	// The benchmark's scenario does what it measures: the gang of 10 eight-GPU pods reclaims
	// exactly ten whole nodes (80 single-GPU jobs) and is pipelined onto them.
	It("evicts whole nodes, as BenchmarkLargeJobReclaim measures", func() {
		h := largeJobReclaim(100)
		round := h.RunCycle(ctx)
		Expect(round.Evictions).To(HaveLen(80))
		nodes := map[string]int{}
		for _, e := range round.Evictions {
			nodes[e.Node]++
		}
		Expect(nodes).To(HaveLen(10), "evictions on 10 whole nodes: %v", nodes)
		Expect(round.PipelinedPods()).To(HaveKeyWithValue("large", 10), "gang pods pipelined")
		Expect(h.PodsIn("large", model.Pipelined)).To(Equal(10),
			"the gang waits for the victims to terminate, holding the promise of their nodes")
	})
})
