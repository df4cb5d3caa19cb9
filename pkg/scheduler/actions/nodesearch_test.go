package actions_test

import (
	"fmt"
	"math/rand/v2"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework/frameworktest"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

var _ = Describe("Node search", func() {
	// The answers a search keeps across pods of many classes are checked against a search
	// started afresh for each pod: the same node, or, when none fits, the same explanation.
	// Pods of more classes than a search keeps take turns in random order, in idle and in
	// releasing capacity, while placements change the nodes.
	It("keeps answers right", func() {
		h := New("").Queues(Queue("q"))
		for _, rack := range []string{"r1", "r2", "r3", "r4"} {
			h.Nodes(Node(rack+"-a").GPUs(8), Node(rack+"-b").GPUs(8).Label("zone", "east"),
				Node(rack+"-c").GPUs(4).Taint("dedicated", "infer", v1.TaintEffectNoSchedule),
				Node(rack+"-d").GPUs(8).MaxPods(6), Node(rack+"-e").GPUs(2).Label("zone", "west"))
		}
		h.Jobs(Job("old").Queue("q").GPUs(3).Running("r1-a"), Job("leaving").Queue("q").GPUs(4).Running("r1-b"))
		for i := range 40 {
			job := Job(fmt.Sprintf("p%02d", i)).Queue("q").GPUs(int64(1 + i%8)).Pods(3).MinMember(1)
			switch i % 5 {
			case 1:
				job.Tolerate("dedicated", "infer", v1.TaintEffectNoSchedule)
			case 2:
				job.RequireLabelIn("zone", "east", "west")
			case 3:
				job.CPUs(int64(8 + i))
			}
			h.Jobs(job)
		}
		ssn, snapshot := openSession(h)
		// Releasing GPUs on r1-b: idle and releasing capacity answer differently there.
		st := ssn.NewStatement()
		for _, p := range snapshot.Job("ns/leaving").Pods {
			Expect(st.Evict(p, framework.NewEvictionReason(framework.Reclaim, "ns/p00"))).To(Succeed())
		}
		Expect(st.Commit(ctx)).To(Succeed())
		Expect(snapshot.Node("r1-b").Releasing.Get(model.GPU)).To(BeEquivalentTo(4*model.MilliGPU), "r1-b releases 4 GPUs")
		var pending []*model.PodInfo
		for _, job := range snapshot.Jobs {
			pending = append(pending, job.PendingPods()...)
		}

		kept := actions.NewNodeSearch(ssn)
		rng := rand.New(rand.NewPCG(14, 16))
		placed, refused := 0, 0
		for step := range 1000 {
			pod := pending[rng.IntN(len(pending))]
			if pod.Status != model.Pending {
				continue
			}
			capacity := []actions.Capacity{actions.IdleNow, actions.IdleOrReleasing}[rng.IntN(2)]
			fresh := actions.NewNodeSearch(ssn)
			got, want := kept.BestNode(pod, capacity), fresh.BestNode(pod, capacity)
			Expect(got == want).To(BeTrue(), "step %d, pod %s, capacity %d: the kept answers give node %v, a fresh search %v",
				step, pod.Key(), capacity, name(got), name(want))
			switch {
			case got == nil:
				refused++
				Expect(kept.Explain()).To(Equal(fresh.Explain()), "step %d, pod %s: the kept answers explain otherwise than a fresh search", step, pod.Key())
			case rng.IntN(3) == 0: // change the node, so that answers kept for it must be asked again
				st := ssn.NewStatement()
				if err := st.Allocate(pod, got.Name); err == nil && st.Commit(ctx) == nil {
					placed++
				}
			}
		}
		Expect(placed).To(BeNumerically(">=", 20), "pods placed: too few to exercise kept answers")
		Expect(refused).To(BeNumerically(">=", 50), "refusals: too few to exercise kept answers")
	})

	// Asked twice why a pod fits nowhere, with a placement between that gives a node a second
	// reason, the second explanation counts it.
	It("explains what changed since it was last asked", func() {
		h := New("").Queues(Queue("q")).Nodes(Node("n1").GPUs(2).MaxPods(1), Node("n2").GPUs(2)).
			Jobs(Job("big").Queue("q").GPUs(4), Job("small").Queue("q").CPUs(1))
		ssn, snapshot := openSession(h)
		search := actions.NewNodeSearch(ssn)
		big, small := snapshot.Job("ns/big").Pods[0], snapshot.Job("ns/small").Pods[0]
		Expect(search.BestNode(big, actions.IdleNow)).To(BeNil(), "the 4-GPU pod fits nowhere")
		Expect(search.Explain()).To(Equal("0/2 nodes are available: 2 Insufficient nvidia.com/gpu."))
		st := ssn.NewStatement()
		Expect(st.Allocate(small, "n1")).To(Succeed())
		Expect(st.Commit(ctx)).To(Succeed())
		search.BestNode(big, actions.IdleNow)
		Expect(search.Explain()).To(Equal("0/2 nodes are available: 1 Too many pods, 2 Insufficient nvidia.com/gpu."),
			"after n1 took its last pod")
	})
})

// openSession opens a session of the default configuration on h's cluster, closed when
// the spec ends.
func openSession(h *Harness) (*framework.Session, *model.Snapshot) {
	GinkgoHelper()
	policy, _, err := scheduler.LoadPolicy(nil)
	Expect(err).NotTo(HaveOccurred())
	snapshot := h.Snapshot()
	ssn := framework.OpenSession(ctx, framework.SessionOptions{
		Snapshot: snapshot, Clock: clocktesting.NewFakePassiveClock(Epoch), Plugins: policy.Plugins, Effects: frameworktest.Discard{},
	})
	DeferCleanup(ssn.Close)
	return ssn, snapshot
}

func name(n *model.NodeInfo) string {
	if n == nil {
		return "none"
	}
	return n.Name
}
