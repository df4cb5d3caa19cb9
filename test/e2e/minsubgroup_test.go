package e2e

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

var _ = Describe("Gangs counted in sub-groups (minSubGroup)", func() {
	It("runs a PodGroup with fewer sub-groups than it has: 3 of 4 replicas where only 3 fit", func() {
		createNamespace("replicas")
		create(builders.MakeQueue("replicas-queue").GPUQuota(-1).Obj())
		createNode("replicas-node-1", 6)
		DeferCleanup(startScheduler(schedulerOptions("")))

		group := builders.MakePodGroup("replicas", "infer").Queue("replicas-queue").PriorityClass("train").MinSubGroup(3)
		for r := range 4 {
			group.SubGroup(fmt.Sprintf("prefill-%d", r), 2)
		}
		create(group.Obj())
		for r := range 4 {
			for k := range 2 {
				create(gpuPod("replicas", fmt.Sprintf("infer-%d-%d", r, k), 1).PodGroup("infer").
					SubGroup(fmt.Sprintf("prefill-%d", r)).Obj())
			}
		}
		Eventually(runningPods("replicas", "infer")).Should(Equal(6), "3 whole replicas of 2 on 6 GPUs")
		Consistently(boundPods("replicas", "infer"), 2*time.Second).Should(Equal(6), "the fourth replica waits: nothing over-commits")
		startStamp(k8sClient, "replicas", "infer") // stamped as started with 3 of its 4 sub-groups, as its pods began

		createNode("replicas-node-2", 2)
		Eventually(runningPods("replicas", "infer")).Should(Equal(8), "the fourth replica grows in when it fits")
	})
})
