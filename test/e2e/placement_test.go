package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

const fpga v1.ResourceName = "example.com/fpga"

var _ = Describe("Kubernetes placement rules on a real API server", func() {
	It("avoid a tainted node, honour required affinity, never over-commit an extended resource, and say why", func() {
		createNamespace("placement")
		create(builders.MakeQueue("placement-queue").GPUQuota(-1).Obj())
		createNode("placement-reserved", 4)
		editNode("placement-reserved", func(n *v1.Node) {
			n.Labels = map[string]string{"zone": "a"}
			n.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "inference", Effect: v1.TaintEffectNoSchedule}}
		}, nil)
		createNode("placement-fpga", 4)
		editNode("placement-fpga", func(n *v1.Node) { n.Labels = map[string]string{"zone": "b"} },
			func(n *v1.Node) { n.Status.Allocatable[fpga] = resource.MustParse("1") })
		DeferCleanup(startScheduler(schedulerOptions("")))

		requireZoneA := func(p *builders.PodWrapper) { p.RequiredNodeAffinityIn("zone", "a") }
		tolerate := func(p *builders.PodWrapper) {
			p.Toleration(v1.Toleration{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "inference", Effect: v1.TaintEffectNoSchedule})
		}
		askFPGA := func(p *builders.PodWrapper) { p.Resource(fpga, "1") }
		// One-pod jobs asking for one GPU, their pods edited.
		createPlacedJob := func(name string, edits ...func(*builders.PodWrapper)) {
			createJob(builders.MakePodGroup("placement", name).Queue("placement-queue"), 1, 1, edits...)
		}

		createPlacedJob("intolerant", requireZoneA)
		createPlacedJob("tolerant", requireZoneA, tolerate)
		createPlacedJob("fpga-1", askFPGA)
		createPlacedJob("fpga-2", askFPGA)

		Eventually(nodeOf("placement", "tolerant-0")).Should(Equal("placement-reserved"), "a tolerating pod uses the tainted node")
		Eventually(func() int { return boundPods("placement", "fpga-1")() + boundPods("placement", "fpga-2")() }).Should(Equal(1))
		Consistently(func() int { return boundPods("placement", "fpga-1")() + boundPods("placement", "fpga-2")() }, 2*time.Second).
			Should(Equal(1), "one FPGA is never given to two pods")
		Expect(boundPods("placement", "intolerant")()).To(BeZero(), "the only zone-a node is tainted")
		bound, waiting := "fpga-1", "fpga-2"
		if boundPods("placement", "fpga-2")() == 1 {
			bound, waiting = waiting, bound
		}
		Expect(nodeOf("placement", bound+"-0")()).To(Equal("placement-fpga"), "the only node with an FPGA")

		Eventually(pendingMessage("placement", "intolerant")).Should(And(
			ContainSubstring("1 node(s) had untolerated taint {dedicated: inference}"),
			ContainSubstring("node(s) didn't match Pod's node affinity/selector")))
		Eventually(pendingMessage("placement", waiting)).Should(And(
			ContainSubstring("1 Insufficient example.com/fpga"),
			ContainSubstring("1 node(s) had untolerated taint {dedicated: inference}")))
	})
})

// editNode changes a node's metadata and spec, then its status (either may be nil), by
// patches: KWOK writes the node's status meanwhile, which would make an update conflict.
func editNode(name string, spec, status func(*v1.Node)) {
	node := &v1.Node{}
	Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Name: name}, node)).To(Succeed())
	if spec != nil {
		before := node.DeepCopy()
		spec(node)
		Expect(k8sClient.Patch(suiteCtx, node, client.MergeFrom(before))).To(Succeed())
	}
	if status != nil {
		before := node.DeepCopy()
		status(node)
		Expect(k8sClient.Status().Patch(suiteCtx, node, client.MergeFrom(before))).To(Succeed())
	}
}

func nodeOf(namespace, pod string) func() string {
	return func() string {
		p := &v1.Pod{}
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: namespace, Name: pod}, p)).To(Succeed())
		return p.Spec.NodeName
	}
}

// pendingMessage reads the message of the PodGroup's scheduling condition.
func pendingMessage(namespace, job string) func() string {
	return func() string {
		pg := &v2alpha2.PodGroup{}
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: namespace, Name: job}, pg)).To(Succeed())
		if len(pg.Status.SchedulingConditions) == 0 {
			return ""
		}
		return pg.Status.SchedulingConditions[0].Message
	}
}
