package victims_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

// placedOn returns the GPU groups of a job's pod placement in the rounds, the first found.
func placedOn(rounds []Round, name string) []string {
	for _, r := range rounds {
		for _, p := range append(r.Nominated, r.Binds...) {
			if p.Job == model.NewJobID(Namespace, name) {
				return p.GPUGroups
			}
		}
	}
	return nil
}

var _ = Describe("Reclaim of GPU shares", func() {
	// Upstream's case: on a 2-GPU node whose device 0 holds two half-GPU borrowers and whose
	// device 1 its owner uses whole, the owner's 0.4 share needs one share gone: one
	// borrower is evicted, not both, and the 0.4 goes onto the device its eviction frees.
	It("evicts one share for a share, and the preemptor takes that device", func() {
		h := New("").
			Nodes(Node("n1").GPUs(2)).
			Queues(Queue("owner").GPUQuota(2), Queue("borrower").GPUQuota(0))
		h.Jobs(Job("whole").Queue("owner").GPUs(1).Running("n1"),
			Job("half-a").Queue("borrower").Share(0.5, 1).Running("n1").OnDevice("device-0"),
			Job("half-b").Queue("borrower").Share(0.5, 1).Running("n1").OnDevice("device-0"),
			Job("small").Queue("owner").Share(0.4, 1))

		rounds, stable := h.RunRounds(ctx, 10)
		Expect(stable).To(BeTrue())
		Expect(evictionsOf(rounds)).To(HaveLen(1), "one half frees the 0.4 the owner needs")
		Expect(h.PodsIn("small", model.Running)).To(Equal(1))
		Expect(placedOn(rounds, "small")).To(Equal([]string{"device-0"}), "the preemptor takes the room its victim left")
	})

	// A whole GPU is freed only with every share on it gone, each allowed: two borrowers'
	// halves on the one device both go for the owner's whole-GPU job; with one of them
	// protected by min-runtime, neither does, and the owner is told of the protection.
	It("frees a device for a whole GPU only by evicting every share on it, each allowed", func() {
		for _, protected := range []bool{false, true} {
			start := Epoch.Add(-2 * time.Hour)
			if protected {
				start = Epoch.Add(-time.Minute)
			}
			h := New("").
				Nodes(Node("n1").GPUs(1)).
				Queues(Queue("owner").GPUQuota(1), Queue("borrower").GPUQuota(0).ReclaimMinRuntime(time.Hour))
			h.Jobs(Job("half-a").Queue("borrower").Share(0.5, 1).Running("n1").OnDevice("device-0").
				StartedAt(Epoch.Add(-2*time.Hour)).PodsStartedAt(Epoch.Add(-2*time.Hour)),
				Job("half-b").Queue("borrower").Share(0.5, 1).Running("n1").OnDevice("device-0").
					StartedAt(start).PodsStartedAt(start),
				Job("whole").Queue("owner").GPUs(1))

			rounds, stable := h.RunRounds(ctx, 10)
			Expect(stable).To(BeTrue())
			if !protected {
				Expect(evictionsOf(rounds)).To(HaveLen(2), "both halves hold the one device")
				Expect(h.PodsIn("whole", model.Running)).To(Equal(1))
				continue
			}
			Expect(evictionsOf(rounds)).To(BeEmpty(), "evicting the unprotected half alone frees no whole GPU")
			Expect(h.PodsIn("whole", model.Running)).To(BeZero())
			Expect(rounds[len(rounds)-1].Reasons("whole")).To(ContainElement(ContainSubstring("min-runtime")))
		}
	})

	// Min-runtime protects a share exactly as a whole job: the owner's half waits until the
	// borrower's half has run its reclaimMinRuntime, and then gets its device.
	It("protects a share by min-runtime until it has run", func() {
		h := New("").
			Nodes(Node("n1").GPUs(1)).
			Queues(Queue("owner").GPUQuota(1), Queue("borrower").GPUQuota(0).ReclaimMinRuntime(10*time.Minute))
		started := Epoch.Add(-5 * time.Minute)
		h.Jobs(Job("borrowed").Queue("borrower").Share(0.6, 1).Running("n1").StartedAt(started).PodsStartedAt(started),
			Job("owned").Queue("owner").Share(0.6, 1))

		rounds := h.RunUntil(ctx, Epoch.Add(4*time.Minute))
		Expect(evictionsOf(rounds)).To(BeEmpty(), "protected for 5 more minutes")
		rounds = h.RunUntil(ctx, Epoch.Add(7*time.Minute))
		Expect(evictionsOf(rounds)).To(HaveLen(1))
		Expect(rounds[len(rounds)-1].Time).To(BeTemporally(">=", started.Add(10*time.Minute)))
		h.RunRounds(ctx, 5)
		Expect(h.PodsIn("owned", model.Running)).To(Equal(1))
	})
})
