package e2e

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/app"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// Two schedulers serve two node pools of one cluster, each with its own configuration: pool
// a protects running jobs from reclaim for an hour by default, pool b not at all.
var _ = Describe("Node pools", func() {
	It("are served by one scheduler each, with its own min-runtime defaults, never across pools", func() {
		const ns = "pools"
		createNamespace(ns)
		// A preemptible gang of one-GPU pods, of the pool's scheduler.
		createPoolJob := func(name, queue, pool string, gang int) {
			createJob(builders.MakePodGroup(ns, name).Queue(queue).PriorityClass("train").NodePool(pool).MinMember(int32(gang)), gang, 1)
		}
		for _, pool := range []string{"a", "b"} {
			node := "pool-" + pool + "-node"
			createNode(node, 4)
			patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, scheduling.NodePoolLabel, pool)
			Expect(k8sClient.Patch(suiteCtx, builders.MakeNode(node).Obj(),
				client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
			create(builders.MakeQueue("owner-" + pool).GPUQuota(4).NodePool(pool).Obj())
			create(builders.MakeQueue("borrower-" + pool).GPUQuota(0).NodePool(pool).Obj())
		}
		DeferCleanup(startScheduler(poolOptions("a", "1h")))
		DeferCleanup(startScheduler(poolOptions("b", "0s")))

		for _, pool := range []string{"a", "b"} {
			createPoolJob("borrowed-"+pool, "borrower-"+pool, pool, 4)
		}
		// Pool a's 4 GPUs cannot hold 8, and pool b's free GPUs are not pool a's to give.
		createPoolJob("too-big-a", "owner-a", "a", 8)
		for _, pool := range []string{"a", "b"} {
			Eventually(runningPods(ns, "borrowed-"+pool)).Should(Equal(4))
			Expect(nodesOf(ns, "borrowed-"+pool)).To(ConsistOf("pool-" + pool + "-node"))
		}
		Expect(boundPods(ns, "too-big-a")()).To(BeZero())

		// Owners come back to both pools: pool b reclaims at once, pool a's borrower is
		// protected by its scheduler's default and the owner is told so, for pool a.
		for _, pool := range []string{"a", "b"} {
			createPoolJob("owned-"+pool, "owner-"+pool, pool, 4)
		}
		Eventually(runningPods(ns, "owned-b")).Should(Equal(4))
		Expect(nodesOf(ns, "owned-b")).To(ConsistOf("pool-b-node"))
		Eventually(func() []string { return eventReasons(ns, "owned-a") }).Should(ContainElement("MinRuntimeProtected"))
		Expect(eventMessages(ns, "owned-a", "MinRuntimeProtected")).To(ContainElement(ContainSubstring("(1h0m0s from the default)")))
		Eventually(conditionPools(ns, "owned-a")).Should(Equal([]string{"a"}))
		Consistently(runningPods(ns, "borrowed-a"), 2*time.Second).Should(Equal(4))
		Expect(boundPods(ns, "too-big-a")()).To(BeZero())
		Expect(nodesOf(ns, "borrowed-a")).To(ConsistOf("pool-a-node"))
	})
})

// poolOptions run a scheduler for pool with the given reclaim min-runtime default.
func poolOptions(pool, reclaimMinRuntime string) app.Options {
	opts := schedulerOptionsWith(fmt.Sprintf(`actions: "allocate, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: proportion
  - name: minruntime
    arguments: {defaultReclaimMinRuntime: %q}
  - name: predicates
`, reclaimMinRuntime))
	opts.PartitionLabelValue = pool
	return opts
}

// nodesOf lists the nodes the job's pods are bound to, once each.
func nodesOf(namespace, job string) []string {
	pods := &v1.PodList{}
	Expect(k8sClient.List(suiteCtx, pods, client.InNamespace(namespace))).To(Succeed())
	seen := map[string]bool{}
	var nodes []string
	for _, p := range pods.Items {
		if p.Annotations[scheduling.PodGroupNameAnnotation] == job && p.Spec.NodeName != "" && !seen[p.Spec.NodeName] {
			seen[p.Spec.NodeName] = true
			nodes = append(nodes, p.Spec.NodeName)
		}
	}
	return nodes
}

// conditionPools returns the pools the job's scheduling conditions are about.
func conditionPools(namespace, job string) func() []string {
	return func() []string {
		pg := &v2alpha2.PodGroup{}
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: namespace, Name: job}, pg)).To(Succeed())
		var pools []string
		for _, c := range pg.Status.SchedulingConditions {
			pools = append(pools, c.NodePool)
		}
		return pools
	}
}
