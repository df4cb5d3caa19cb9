package allocate_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

const fpga v1.ResourceName = "example.com/fpga"

// Pods go only where kube-scheduler would put them; each case is a refusal a user meets on
// a real cluster.
var _ = Describe("Kubernetes placement rules", func() {
	It("keeps pods off a tainted node unless they tolerate the taint", func() {
		h := New(allocateOnly).
			Nodes(Node("inference").GPUs(8).Taint("dedicated", "inference", v1.TaintEffectNoSchedule),
				Node("draining").GPUs(8).Taint("maintenance", "", v1.TaintEffectNoExecute)).
			Queues(Queue("default")).
			Jobs(Job("train").GPUs(4), Job("serve").GPUs(4).Tolerate("dedicated", "inference", v1.TaintEffectNoSchedule))
		round := h.RunCycle(ctx)
		Expect(round.Binds).To(ConsistOf(Placement{Pod: "ns/serve-0", Job: "ns/serve", Node: "inference"}))
		Expect(round.Reasons("train")).To(ConsistOf(ContainSubstring(
			"0/2 nodes are available: 1 node(s) had untolerated taint {dedicated: inference}, 1 node(s) had untolerated taint {maintenance: }.")))
	})

	It("honours required node affinity", func() {
		h := New(allocateOnly).
			Nodes(Node("a100").GPUs(8).Label("gpu", "a100"), Node("h100").GPUs(8).Label("gpu", "h100")).
			Queues(Queue("default")).
			Jobs(Job("picky").GPUs(8).RequireLabelIn("gpu", "h100", "b200"), Job("nowhere").GPUs(1).RequireLabelIn("gpu", "tpu"))
		round := h.RunCycle(ctx)
		Expect(round.Binds).To(ConsistOf(Placement{Pod: "ns/picky-0", Job: "ns/picky", Node: "h100"}))
		Expect(round.Reasons("nowhere")).To(ConsistOf(ContainSubstring(
			"0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.")))
	})

	It("never promises an extended resource twice", func() {
		h := New(allocateOnly).
			Nodes(Node("n1").Extended(fpga, 1), Node("n2")).
			Queues(Queue("default")).
			Jobs(Job("first").Extended(fpga, 1).CreatedAt(Epoch), Job("second").Extended(fpga, 1).CreatedAt(Epoch.Add(1)))
		round := h.RunCycle(ctx)
		Expect(round.Binds).To(ConsistOf(Placement{Pod: "ns/first-0", Job: "ns/first", Node: "n1"}))
		Expect(round.Reasons("second")).To(ConsistOf(ContainSubstring(
			"0/2 nodes are available: 2 Insufficient example.com/fpga.")))
		Expect(h.RunCycle(ctx).Binds).To(BeEmpty(), "nor in a later cycle")
	})

	It("counts pods against the node's pods capacity", func() {
		h := New(allocateOnly).
			Nodes(Node("n1").MaxPods(3)).
			Queues(Queue("default")).
			Jobs(Job("many").Pods(5).MinMember(1))
		round := h.RunCycle(ctx)
		Expect(round.BoundPods()).To(Equal(map[string]int{"many": 3}))
		Expect(h.PodsIn("many", model.Pending)).To(Equal(2))
	})

	It("prefers nodes the pod prefers, and avoids PreferNoSchedule taints it does not tolerate", func() {
		h := New(allocateOnly).
			Nodes(Node("a-spot").GPUs(8).Taint("spot", "true", v1.TaintEffectPreferNoSchedule),
				Node("b-ondemand").GPUs(8)).
			Queues(Queue("default")).
			Jobs(Job("careful").GPUs(1))
		Expect(h.RunCycle(ctx).Binds).To(ConsistOf(Placement{Pod: "ns/careful-0", Job: "ns/careful", Node: "b-ondemand"}))

		h = New(allocateOnly).
			Nodes(Node("a-spot").GPUs(8).Taint("spot", "true", v1.TaintEffectPreferNoSchedule),
				Node("b-ondemand").GPUs(8)).
			Queues(Queue("default")).
			Jobs(Job("tolerant").GPUs(1).Tolerate("spot", "", v1.TaintEffectPreferNoSchedule))
		Expect(h.RunCycle(ctx).Binds).To(ConsistOf(Placement{Pod: "ns/tolerant-0", Job: "ns/tolerant", Node: "a-spot"}),
			"a pod that tolerates the taint is free to go first by name")
	})
})
