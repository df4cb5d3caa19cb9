package allocate_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

// withGPUStrategy is allocate with nodeplacement's gpu argument set.
func withGPUStrategy(strategy string) string {
	return `
actions: allocate
tiers:
- plugins:
  - name: priority
  - name: predicates
  - name: nodeplacement
    arguments: {gpu: ` + strategy + `}
`
}

var _ = Describe("Device choice for GPU shares", func() {
	// A 2-GPU node whose device-a holds a 0.3 share; a 0.3 share arrives, then three 0.6
	// shares. Packing puts the 0.3 on device-a, leaving 0.4 there that no 0.6 can use: one
	// 0.6 runs. Weighing the mix (mostly 0.6), fragmentation puts the 0.3 on the free device,
	// leaving 0.7 on each: two 0.6 run. Spreading does the same here, by emptiest first.
	It("leaves room the mix can use, where packing strands it", func() {
		for strategy, bigs := range map[string]int{"binpack": 1, "fragmentation": 2, "spread": 2} {
			h := New(withGPUStrategy(strategy)).
				Nodes(Node("n1").GPUs(2)).
				Queues(Queue("default")).
				Jobs(Job("running").Share(0.3, 1).Running("n1").OnDevice("device-a"),
					Job("small").Share(0.3, 1).CreatedAt(Epoch.Add(-time.Hour)))
			for _, name := range []string{"big-a", "big-b", "big-c"} {
				h.Jobs(Job(name).Share(0.6, 1))
			}
			h.RunCycle(ctx)
			Expect(h.PodsIn("small", model.Running)).To(Equal(1), strategy)
			placed := 0
			for _, name := range []string{"big-a", "big-b", "big-c"} {
				placed += h.PodsIn(name, model.Running)
			}
			Expect(placed).To(Equal(bigs), "%s: 0.6 shares placed", strategy)
		}
	})

	// Packing a mix of shares and whole GPUs: a share goes onto a device already shared
	// rather than breaking a whole one, so that the whole-GPU pod that follows still fits.
	It("keeps whole devices whole for whole-GPU pods", func() {
		for _, strategy := range []string{"binpack", "fragmentation"} {
			h := New(withGPUStrategy(strategy)).
				Nodes(Node("n1").GPUs(2)).
				Queues(Queue("default")).
				Jobs(Job("running").Share(0.5, 1).Running("n1").OnDevice("device-a"),
					Job("half").Share(0.5, 1).CreatedAt(Epoch.Add(-time.Hour)),
					Job("whole").GPUs(1))
			h.RunCycle(ctx)
			Expect(h.PodsIn("half", model.Running)).To(Equal(1), strategy)
			Expect(h.PodsIn("whole", model.Running)).To(Equal(1), "%s: the whole GPU kept free", strategy)
		}
	})
})
