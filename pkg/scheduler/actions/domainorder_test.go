package actions_test

import (
	"fmt"
	"math/rand/v2"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

// Which domain a constrained gang goes to decides what the next gangs find: upstream tries
// the fullest domain that fits, to keep roomy domains whole for large gangs. Measured here on
// a mix of rack-constrained gangs (1 to 16 GPUs of single-GPU pods, and 1, 2, 4 or 8 whole
// 8-GPU nodes) arriving one per cycle into 16 racks of 16 8-GPU nodes until 130% of the GPUs
// were asked for, none leaving: the share of GPUs allocated at the end, per order.
var _ = Describe("Domain order", func() {
	fill := func(order actions.DomainOrder, seed uint64) float64 {
		defer actions.UseDomainOrder(order)()
		const racks, perRack, gpus = 16, 16, 8
		h := New("").Topology("dc", "example.com/rack=rack").Queues(Queue("default"))
		for r := range racks {
			for n := range perRack {
				h.Nodes(Node(fmt.Sprintf("r%02d-n%02d", r, n)).GPUs(gpus).Label("example.com/rack", fmt.Sprintf("r%02d", r)))
			}
		}
		rng := rand.New(rand.NewPCG(seed, 0))
		capacity, asked := racks*perRack*gpus, 0
		for i := 0; asked < capacity*13/10; i++ {
			job := Job(fmt.Sprintf("j%04d", i)).InTopology("dc", "rack", "")
			if rng.IntN(2) == 0 {
				pods := 1 + rng.IntN(16)
				job, asked = job.Pods(pods).MinMember(int32(pods)).GPUs(1), asked+pods
			} else {
				nodes := []int{1, 2, 4, 8}[rng.IntN(4)]
				job, asked = job.Pods(nodes).MinMember(int32(nodes)).GPUs(gpus), asked+nodes*gpus
			}
			h.Jobs(job)
			h.RunCycle(ctx)
		}
		allocated := 0
		for _, j := range h.Snapshot().Jobs {
			for _, p := range j.Pods {
				if p.Status.IsActive() {
					allocated += int(p.Request.Get(model.GPU) / model.MilliGPU)
				}
			}
		}
		return float64(allocated) / float64(capacity)
	}

	It("packs a rack-constrained mix at least as well fullest-first as emptiest-first or by name", func() {
		for _, seed := range []uint64{1, 2, 3} {
			fullest, emptiest, byName := fill(actions.FullestFirst, seed), fill(actions.EmptiestFirst, seed), fill(actions.ByName, seed)
			GinkgoWriter.Printf("seed %d: GPUs allocated fullest-first %.1f%%, emptiest-first %.1f%%, by name %.1f%%\n",
				seed, 100*fullest, 100*emptiest, 100*byName)
			Expect(fullest).To(BeNumerically(">=", emptiest), "seed %d", seed)
			Expect(fullest).To(BeNumerically(">=", byName), "seed %d", seed)
		}
	})
})
