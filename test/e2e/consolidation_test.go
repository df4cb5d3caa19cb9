package e2e

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

// consolidationConfig runs upstream's default actions but stalegangeviction.
var consolidationConfig = harness.DefaultConfigWith("allocate, consolidation, reclaim, preempt")

var _ = Describe("Consolidation", func() {
	// Two 4-GPU nodes, each running a 2-GPU job: 4 GPUs free, but on no one node. A 4-GPU job
	// arrives; one of the running jobs is moved: evicted, told why and where it fits, and,
	// recreated as its controller would, bound on the other node; the 4-GPU job gets the node
	// it left.
	It("moves a running job to the other node so that a 4-GPU job fits", func() {
		createNamespace("consolidate")
		create(builders.MakeQueue("consolidate-queue").GPUQuota(-1).Obj())
		createNode("consolidate-a", 4)
		createNode("consolidate-b", 4)
		onNode := func(node string) func(*builders.PodWrapper) {
			return func(p *builders.PodWrapper) { p.Node(node) }
		}
		createJob(builders.MakePodGroup("consolidate", "left").Queue("consolidate-queue").PriorityClass("train"), 1, 2, onNode("consolidate-a"))
		createJob(builders.MakePodGroup("consolidate", "right").Queue("consolidate-queue").PriorityClass("train"), 1, 2, onNode("consolidate-b"))
		Eventually(runningPods("consolidate", "left")).Should(Equal(1))
		Eventually(runningPods("consolidate", "right")).Should(Equal(1))
		DeferCleanup(startScheduler(schedulerOptionsWith(consolidationConfig)))

		createJob(builders.MakePodGroup("consolidate", "big").Queue("consolidate-queue").PriorityClass("train"), 1, 4)
		var moved, stays string
		Eventually(func() string {
			for _, job := range []string{"left", "right"} {
				if len(eventMessages("consolidate", job, "Consolidated")) > 0 {
					moved = job
				}
			}
			return moved
		}).ShouldNot(BeEmpty(), "one of the 2-GPU jobs is moved")
		stays = map[string]string{"left": "right", "right": "left"}[moved]
		from := map[string]string{"left": "consolidate-a", "right": "consolidate-b"}[moved]
		to := map[string]string{"left": "consolidate-b", "right": "consolidate-a"}[moved]
		Expect(eventMessages("consolidate", moved, "Consolidated")).To(ContainElement(ContainSubstring(
			"evicted by consolidation for job consolidate/big: moved to make room; it fits on node %s once recreated", to)))
		Expect(runningPods("consolidate", stays)()).To(Equal(1), "one move is enough")

		// The moved pod goes; its controller (here the test) recreates it, pending.
		Eventually(func() error {
			return k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: "consolidate", Name: moved + "-0"}, &v1.Pod{})
		}).Should(Satisfy(apierrors.IsNotFound), "the moved pod is gone before it is recreated under its name")
		create(gpuPod("consolidate", moved+"-0", 2).PodGroup(moved).Obj())

		Eventually(runningPods("consolidate", "big")).Should(Equal(1))
		Expect(getPod("consolidate", "big-0").Spec.NodeName).To(Equal(from), "the 4-GPU job gets the node the moved job left")
		Eventually(runningPods("consolidate", moved)).Should(Equal(1))
		Expect(getPod("consolidate", moved+"-0").Spec.NodeName).To(Equal(to), fmt.Sprintf("job %s runs again, beside %s", moved, stays))
		Consistently(runningPods("consolidate", stays), 2*time.Second).Should(Equal(1))
	})
})
