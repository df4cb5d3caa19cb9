package victims_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions/victims"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

// The victim search visits only the nodes that can have changed since it last looked; here
// it must decide, round after round, exactly what a search visiting every node decides.
var _ = Describe("Options kept across searches", func() {
	AfterEach(func() { victims.VisitEveryNode(false) })

	It("decide as a visit of every node would, on random contended clusters", func() {
		evictions, refusals := 0, 0
		for seed := range uint64(25) {
			run := func(everyNode bool) []Round {
				victims.VisitEveryNode(everyNode)
				rounds, _ := contendedCluster(seed).RunRounds(ctx, 4)
				return rounds
			}
			kept, visited := run(false), run(true)
			Expect(kept).To(Equal(visited), "seed %d", seed)
			for _, r := range kept {
				evictions += len(r.Evictions)
				refusals += r.ProtectedRefusals[framework.Reclaim] + r.ProtectedRefusals[framework.Preempt]
			}
		}
		Expect(evictions).To(BeNumerically(">", 100), "the clusters must make the search evict")
		Expect(refusals).To(BeNumerically(">", 20), "and refuse protected victims")
	})
})

// contendedCluster is 40 nodes full of borrowed jobs: single- and two-GPU ones, and gangs
// or elastic jobs with a pod on each of two nodes (evicting a gang for room on one node
// changes what the other offers, though no plan made room there); on a few nodes they are
// still protected by a
// reclaim min-runtime. Owners (at two priorities) wait for their quota with jobs of a few
// shapes: many searches of one class in a row, with evictions moving a few nodes between
// them, and a few nodes whose refused victims each search must be told of.
func contendedCluster(seed uint64) *Harness {
	rng := rand.New(rand.NewPCG(seed, 7))
	h := New("").Queues(Queue("owner").GPUQuota(160),
		Queue("borrower").GPUQuota(0).ReclaimMinRuntime(time.Duration(1+rng.IntN(20))*time.Minute),
		Queue("guest").GPUQuota(80))
	const nodes = 40
	node := func(n int) string { return fmt.Sprintf("node-%02d", n%nodes) }
	startOn := func(n int) time.Time {
		if n%8 == int(seed%8) {
			return Epoch.Add(-time.Duration(rng.IntN(30)) * time.Minute) // maybe protected
		}
		return Epoch.Add(-time.Hour) // long past any protection
	}
	used := make([]int, nodes)
	for n := 0; n < nodes; n += 1 + rng.IntN(4) {
		started := startOn(n)
		h.Jobs(Job(fmt.Sprintf("span-%02d", n)).Queue("borrower").Priority(50).GPUs(1).Pods(2).MinMember(int32(1+rng.IntN(2))).
			Running(node(n), node(n+1)).StartedAt(started).PodsStartedAt(started))
		used[n]++
		used[(n+1)%nodes]++
	}
	for n := range nodes {
		h.Nodes(Node(node(n)).GPUs(8))
		for slot := used[n]; slot < 8; {
			gpus := min(1+rng.IntN(2), 8-slot)
			started := startOn(n)
			queue := []string{"borrower", "borrower", "guest"}[rng.IntN(3)]
			h.Jobs(Job(fmt.Sprintf("run-%02d-%d", n, slot)).Queue(queue).Priority(50).GPUs(int64(gpus)).
				Running(node(n)).StartedAt(started).PodsStartedAt(started))
			slot += gpus
		}
	}
	for j := range 30 + rng.IntN(30) {
		pods := 1 + rng.IntN(2)
		h.Jobs(Job(fmt.Sprintf("own-%02d", j)).Queue("owner").Priority([]int32{50, 75}[rng.IntN(2)]).
			GPUs(int64(1 + rng.IntN(3))).Pods(pods).MinMember(int32(pods)))
	}
	return h
}
