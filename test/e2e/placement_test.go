package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
)

const fpga v1.ResourceName = "example.com/fpga"

var _ = Describe("Kubernetes placement rules on a real API server", func() {
	It("avoid a tainted node, honour required affinity, never over-commit an extended resource, and say why", func() {
		createNamespace("placement")
		createQueue("placement-queue", -1, nil)
		createNode("placement-reserved", 4)
		editNode("placement-reserved", func(n *v1.Node) {
			n.Labels = map[string]string{"zone": "a"}
			n.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "inference", Effect: v1.TaintEffectNoSchedule}}
		}, nil)
		createNode("placement-fpga", 4)
		editNode("placement-fpga", func(n *v1.Node) { n.Labels = map[string]string{"zone": "b"} },
			func(n *v1.Node) { n.Status.Allocatable[fpga] = resource.MustParse("1") })
		DeferCleanup(startScheduler(schedulerOptions("")))

		requireZoneA := func(p *v1.Pod) {
			p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
				NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
					{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"a"}}}}}}}}
		}
		tolerate := func(p *v1.Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: "dedicated", Operator: v1.TolerationOpEqual,
				Value: "inference", Effect: v1.TaintEffectNoSchedule})
		}
		askFPGA := func(p *v1.Pod) {
			c := &p.Spec.Containers[0].Resources
			c.Requests[fpga], c.Limits[fpga] = resource.MustParse("1"), resource.MustParse("1")
		}

		createPlacedJob("placement", "intolerant", "placement-queue", requireZoneA)
		createPlacedJob("placement", "tolerant", "placement-queue", requireZoneA, tolerate)
		createPlacedJob("placement", "fpga-1", "placement-queue", askFPGA)
		createPlacedJob("placement", "fpga-2", "placement-queue", askFPGA)

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

// createPlacedJob creates a one-pod job asking for one GPU, its pod edited by each edit.
func createPlacedJob(namespace, name, queue string, edits ...func(*v1.Pod)) {
	pg := &v2alpha2.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: v2alpha2.PodGroupSpec{MinMember: 1, Queue: queue}}
	Expect(k8sClient.Create(suiteCtx, pg)).To(Succeed())
	cleanUp(pg)
	pod := newPod(namespace, name+"-0", 1, map[string]string{scheduling.PodGroupNameAnnotation: name}, nil)
	for _, edit := range edits {
		edit(pod)
	}
	Expect(k8sClient.Create(suiteCtx, pod)).To(Succeed())
	cleanUp(pod)
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
