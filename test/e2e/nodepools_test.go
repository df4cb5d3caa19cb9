package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/app"
)

// Two schedulers serve two node pools of one cluster, each with its own configuration: pool
// a protects running jobs from reclaim for an hour by default, pool b not at all.
var _ = Describe("Node pools", func() {
	It("are served by one scheduler each, with its own min-runtime defaults, never across pools", func() {
		const ns = "pools"
		createNamespace(ns)
		inPool := func(pool string) map[string]string { return map[string]string{scheduling.NodePoolLabel: pool} }
		for _, pool := range []string{"a", "b"} {
			node := "pool-" + pool + "-node"
			createNode(node, 4)
			patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, scheduling.NodePoolLabel, pool)
			Expect(k8sClient.Patch(suiteCtx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}},
				client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
			createPoolQueue("owner-"+pool, pool, 4)
			createPoolQueue("borrower-"+pool, pool, 0)
		}
		DeferCleanup(startScheduler(poolOptions("a", "1h")))
		DeferCleanup(startScheduler(poolOptions("b", "0s")))

		for _, pool := range []string{"a", "b"} {
			createPoolJob(ns, "borrowed-"+pool, "borrower-"+pool, inPool(pool), 4, 4)
		}
		// Pool a's 4 GPUs cannot hold 8, and pool b's free GPUs are not pool a's to give.
		createPoolJob(ns, "too-big-a", "owner-a", inPool("a"), 8, 8)
		for _, pool := range []string{"a", "b"} {
			Eventually(runningPods(ns, "borrowed-"+pool)).Should(Equal(4))
			Expect(nodesOf(ns, "borrowed-"+pool)).To(ConsistOf("pool-" + pool + "-node"))
		}
		Expect(boundPods(ns, "too-big-a")()).To(BeZero())

		// Owners come back to both pools: pool b reclaims at once, pool a's borrower is
		// protected by its scheduler's default and the owner is told so, for pool a.
		for _, pool := range []string{"a", "b"} {
			createPoolJob(ns, "owned-"+pool, "owner-"+pool, inPool(pool), 4, 4)
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
	config := filepath.Join(GinkgoT().TempDir(), "scheduler-config.yaml")
	Expect(os.WriteFile(config, []byte(fmt.Sprintf(`actions: "allocate, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: proportion
  - name: minruntime
    arguments: {defaultReclaimMinRuntime: %q}
  - name: predicates
`, reclaimMinRuntime)), 0o600)).To(Succeed())
	opts := schedulerOptions(config)
	opts.PartitionLabelValue = pool
	return opts
}

func createPoolQueue(name, pool string, gpuQuota float64) {
	q := newQueue(name, gpuQuota)
	q.Labels = map[string]string{scheduling.NodePoolLabel: pool}
	Expect(k8sClient.Create(suiteCtx, q)).To(Succeed())
	cleanUp(q)
}

// createPoolJob creates a preemptible gang of one-GPU pods whose PodGroup carries labels.
func createPoolJob(namespace, name, queue string, labels map[string]string, minMember int32, pods int) {
	pg := &v2alpha2.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Spec: v2alpha2.PodGroupSpec{MinMember: minMember, Queue: queue, PriorityClassName: "train"}}
	Expect(k8sClient.Create(suiteCtx, pg)).To(Succeed())
	cleanUp(pg)
	for i := range pods {
		createPod(namespace, fmt.Sprintf("%s-%d", name, i), 1, map[string]string{scheduling.PodGroupNameAnnotation: name}, nil)
	}
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
