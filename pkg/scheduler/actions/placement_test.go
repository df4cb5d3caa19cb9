package actions_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework/frameworktest"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/scenario"
)

// TestNodeSearchKeepsAnswersRight checks the answers a search keeps across pods of many
// classes against a search started afresh for each pod: the same node, or, when none fits,
// the same explanation. Pods of more classes than a search keeps take turns in random
// order, in idle and in releasing capacity, while placements change the nodes.
func TestNodeSearchKeepsAnswersRight(t *testing.T) {
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
	ssn, snapshot := openSession(t, h)
	// Releasing GPUs on r1-b: idle and releasing capacity answer differently there.
	st := ssn.NewStatement()
	for _, p := range snapshot.Job("ns/leaving").Pods {
		if err := st.Evict(p, framework.NewEvictionReason(framework.Reclaim, "ns/p00")); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if node := snapshot.Node("r1-b"); node.Releasing.Get(model.GPU) != 4 {
		t.Fatalf("r1-b releases %d GPUs, want 4", node.Releasing.Get(model.GPU))
	}
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
		switch {
		case got != want:
			t.Fatalf("step %d, pod %s, capacity %d: the kept answers give node %v, a fresh search %v", step, pod.Key(), capacity, name(got), name(want))
		case got == nil:
			refused++
			if kept.Explain() != fresh.Explain() {
				t.Fatalf("step %d, pod %s: the kept answers explain %q, a fresh search %q", step, pod.Key(), kept.Explain(), fresh.Explain())
			}
		case rng.IntN(3) == 0: // change the node, so that answers kept for it must be asked again
			st := ssn.NewStatement()
			if err := st.Allocate(pod, got.Name); err == nil && st.Commit(context.Background()) == nil {
				placed++
			}
		}
	}
	if placed < 20 || refused < 50 {
		t.Fatalf("the sequence placed %d pods and was refused %d times: too few to exercise kept answers", placed, refused)
	}
}

// openSession opens a session of the default configuration on h's cluster, closed when
// the test ends.
func openSession(t *testing.T, h *Harness) (*framework.Session, *model.Snapshot) {
	policy, _, err := scheduler.LoadPolicy(nil)
	if err != nil {
		t.Fatal(err)
	}
	snapshot := h.Snapshot()
	ssn := framework.OpenSession(context.Background(), framework.SessionOptions{
		Snapshot: snapshot, Clock: clocktesting.NewFakePassiveClock(Epoch), Plugins: policy.Plugins, Effects: frameworktest.Discard{},
	})
	t.Cleanup(ssn.Close)
	return ssn, snapshot
}

func name(n *model.NodeInfo) string {
	if n == nil {
		return "none"
	}
	return n.Name
}

// TestNodeSearchExplainsWhatChangedSince asks twice why a pod fits nowhere, with a
// placement between that gives a node a second reason: the second explanation counts it.
func TestNodeSearchExplainsWhatChangedSince(t *testing.T) {
	h := New("").Queues(Queue("q")).Nodes(Node("n1").GPUs(2).MaxPods(1), Node("n2").GPUs(2)).
		Jobs(Job("big").Queue("q").GPUs(4), Job("small").Queue("q").CPUs(1))
	ssn, snapshot := openSession(t, h)
	search := actions.NewNodeSearch(ssn)
	big, small := snapshot.Job("ns/big").Pods[0], snapshot.Job("ns/small").Pods[0]
	if node := search.BestNode(big, actions.IdleNow); node != nil {
		t.Fatalf("the 4-GPU pod fits on %s", node.Name)
	}
	if got, want := search.Explain(), "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."; got != want {
		t.Fatalf("explained %q, want %q", got, want)
	}
	st := ssn.NewStatement()
	if err := st.Allocate(small, "n1"); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	search.BestNode(big, actions.IdleNow)
	if got, want := search.Explain(), "0/2 nodes are available: 1 Too many pods, 2 Insufficient nvidia.com/gpu."; got != want {
		t.Fatalf("after n1 took its last pod, explained %q, want %q", got, want)
	}
}
