package minruntime_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

var _ = Describe("A job that shortens its own protection", func() {
	// borrowed runs in a queue that protects it for 10m; owned's quota wants its GPUs back.
	cluster := func(borrowed *JobBuilder) *Harness {
		return New(withMinRuntime(`defaultReclaimMinRuntime: 0s`)).
			Nodes(Node("n1").GPUs(4)).
			Queues(Queue("owner").GPUQuota(4), Queue("borrower").GPUQuota(0).ReclaimMinRuntime(10*time.Minute)).
			Jobs(borrowed.Queue("borrower").MinMember(4).Pods(4).GPUs(1).Running("n1", "n1", "n1", "n1").StartedAt(Epoch),
				Job("owned").Queue("owner").MinMember(4).Pods(4).GPUs(1))
	}

	It("is reclaimed after its own 1m under a queue of 10m, and the eviction says so", func() {
		h := cluster(Job("borrowed").OwnMinRuntimes(nil, dur(time.Minute)))
		rounds := h.RunUntil(ctx, Epoch.Add(2*time.Minute))
		at := firstEviction(rounds)
		Expect(at).NotTo(Equal(-1), "the reclaim must happen once the job's own 1m ends")
		Expect(rounds[at].Time).To(Equal(Epoch.Add(time.Minute)))
		Expect(rounds[at].EvictedPods()).To(Equal(map[string]int{"borrowed": 4}))
		Expect(rounds[at].Evictions[0].Reason.Note.Text).To(ContainSubstring(
			"1m0s from the job's annotation " + scheduling.ReclaimMinRuntimeAnnotation))
	})

	It("keeps its queue's 10m when it asks for more, and its status tells it was declined", func() {
		h := cluster(Job("borrowed").OwnMinRuntimes(nil, dur(time.Hour)))
		rounds := h.RunUntil(ctx, Epoch.Add(2*time.Minute))
		Expect(firstEviction(rounds)).To(Equal(-1), "an annotation may not lengthen the queue's 10m")
		Expect(rounds[0].ProtectionChanges).To(HaveLen(1))
		p := rounds[0].ProtectionChanges[0].Protection
		Expect(p.Reclaim[0].MinRuntime.Duration).To(Equal(10 * time.Minute))
		Expect(p.Declined()).To(ConsistOf(ContainSubstring("=1h0m0s is not below the 10m0s")))
	})

	It("is decided as before without the annotation", func() {
		rounds := cluster(Job("borrowed")).RunUntil(ctx, Epoch.Add(11*time.Minute))
		Expect(rounds[firstEviction(rounds)].Time).To(Equal(Epoch.Add(10 * time.Minute)))
		Expect(rounds[0].ProtectionChanges[0].Protection.Declined()).To(BeEmpty())
		Expect(rounds[0].ProtectionChanges[0].Protection.Reclaim[0].Source()).To(Equal("queue borrower"))
	})
})
