package allocate_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

// gangCase is one row of the gang table: a cluster of equal GPU nodes and one job.
type gangCase struct {
	nodes, gpusPerNode int64
	pods               int
	minMember          int32
	gpusPerPod         int64
	wantBound          int
}

var _ = DescribeTable("How many pods of one job are bound",
	func(c gangCase) {
		h := New(allocateOnly).Queues(Queue("default")).
			Jobs(Job("job").Pods(c.pods).MinMember(c.minMember).GPUs(c.gpusPerPod))
		for i := range c.nodes {
			h.Nodes(Node(string(rune('a' + i))).GPUs(c.gpusPerNode))
		}
		round := h.RunCycle(ctx)
		Expect(round.BoundPods()["job"]).To(Equal(c.wantBound))
		if c.wantBound == 0 {
			Expect(round.Reasons("job")).NotTo(BeEmpty(), "a job left pending is told why")
		}
	},
	Entry("a gang that fits exactly is bound whole",
		gangCase{nodes: 2, gpusPerNode: 8, pods: 4, minMember: 4, gpusPerPod: 4, wantBound: 4}),
	Entry("a gang one GPU too large binds nothing",
		gangCase{nodes: 2, gpusPerNode: 8, pods: 4, minMember: 4, gpusPerPod: 5, wantBound: 0}),
	Entry("a gang whose pods fit in total but not per node binds nothing",
		gangCase{nodes: 3, gpusPerNode: 3, pods: 2, minMember: 2, gpusPerPod: 4, wantBound: 0}),
	Entry("an elastic job is bound up to capacity",
		gangCase{nodes: 1, gpusPerNode: 8, pods: 12, minMember: 2, gpusPerPod: 1, wantBound: 8}),
	Entry("an elastic job whose gang does not fit binds nothing",
		gangCase{nodes: 1, gpusPerNode: 8, pods: 12, minMember: 9, gpusPerPod: 1, wantBound: 0}),
	Entry("a gang larger than its pods can never start",
		gangCase{nodes: 4, gpusPerNode: 8, pods: 2, minMember: 3, gpusPerPod: 1, wantBound: 0}),
	Entry("CPU-only pods need no GPU node",
		gangCase{nodes: 1, gpusPerNode: 0, pods: 3, minMember: 3, gpusPerPod: 0, wantBound: 3}),
)
