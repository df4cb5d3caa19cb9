package e2e

import (
	"maps"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

const (
	zoneLabel = "example.com/zone"
	rackLabel = "example.com/rack"
)

var _ = Describe("Topology-aware gangs on a real API server", func() {
	It("places upstream's documented example: the fullest zone that holds the gang, its roomiest rack first", func() {
		createNamespace("topology")
		create(builders.MakeQueue("topology-queue").GPUQuota(-1).Obj())
		create(builders.MakeTopology("e2e-dc", zoneLabel+"=zone", rackLabel+"=rack"))
		// Zone a: 5 GPUs in racks of 2, 1, 1 and 1; zone b: 6 in three racks of 2. A node a rack.
		for _, rack := range []struct {
			zone, rack string
			gpus       int64
		}{{"a", "a1", 2}, {"a", "a2", 1}, {"a", "a3", 1}, {"a", "a4", 1}, {"b", "b1", 2}, {"b", "b2", 2}, {"b", "b3", 2}} {
			createLabelledNode("topology-"+rack.rack, rack.gpus, map[string]string{zoneLabel: rack.zone, rackLabel: rack.rack})
		}
		DeferCleanup(startScheduler(schedulerOptions("")))

		createJob(builders.MakePodGroup("topology", "trio").Queue("topology-queue").PriorityClass("train").MinMember(3).
			InTopology("e2e-dc", "zone", "rack"), 3, 1)
		Eventually(runningPods("topology", "trio")).Should(Equal(3), func() string { return pendingMessage("topology", "trio")() })
		Expect(racksOf("topology", "trio")).To(Equal(map[string]int{"a1": 2, "a2": 1}),
			"zone a, the fullest that holds 3 GPUs; two pods in its roomiest rack a1, the third in a2")
	})

	It("keeps a job naming a topology that does not exist pending, and says so on its PodGroup", func() {
		createNamespace("topology")
		create(builders.MakeQueue("topology-missing-queue").GPUQuota(-1).Obj())
		createLabelledNode("topology-roomy", 8, map[string]string{zoneLabel: "a", rackLabel: "a1"})
		DeferCleanup(startScheduler(schedulerOptions("")))

		createJob(builders.MakePodGroup("topology", "lost").Queue("topology-missing-queue").PriorityClass("train").MinMember(2).
			InTopology("e2e-dc-typo", "rack", ""), 2, 1)
		Eventually(pendingMessage("topology", "lost")).Should(ContainSubstring(`topology "e2e-dc-typo", which does not exist`),
			"the PodGroup names the missing topology")
		Consistently(boundPods("topology", "lost"), 2*time.Second).Should(BeZero(), "8 free GPUs, but no domain of a topology that is not there")
	})
})

// createLabelledNode creates a Ready node with gpus GPUs and the labels given beside its own.
func createLabelledNode(name string, gpus int64, labels map[string]string) {
	createNode(name, gpus)
	editNode(name, func(n *v1.Node) {
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		maps.Copy(n.Labels, labels)
	}, nil)
}

// racksOf counts the job's bound pods by their node's rack label, read from the API server.
func racksOf(namespace, job string) map[string]int {
	pods := &v1.PodList{}
	Expect(k8sClient.List(suiteCtx, pods, client.InNamespace(namespace))).To(Succeed())
	racks := map[string]int{}
	for _, p := range pods.Items {
		if p.Annotations[scheduling.PodGroupNameAnnotation] != job || p.Spec.NodeName == "" {
			continue
		}
		node := &v1.Node{}
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Name: p.Spec.NodeName}, node)).To(Succeed())
		racks[node.Labels[rackLabel]]++
	}
	return racks
}
