package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

var _ = Describe("Preemption delay", func() {
	It("holds a PodGroup's reclaim back until its spec.preemptionDelay ends, then reclaims, and stamps the victim's eviction", func() {
		createNamespace("delay")
		create(builders.MakeQueue("delay-owner").GPUQuota(4).Obj())
		create(builders.MakeQueue("delay-borrower").GPUQuota(0).Obj())
		createNode("delay-node", 4)
		opts := schedulerOptions("")
		DeferCleanup(startScheduler(opts))
		createJob(builders.MakePodGroup("delay", "borrowed").Queue("delay-borrower").PriorityClass("train").MinMember(4), 4, 1)
		Eventually(runningPods("delay", "borrowed")).Should(Equal(4))

		createJob(builders.MakePodGroup("delay", "owned").Queue("delay-owner").PriorityClass("train").MinMember(4).
			PreemptionDelay(4*time.Second), 4, 1)
		owned := &v2alpha2.PodGroup{}
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: "delay", Name: "owned"}, owned)).To(Succeed())
		// The window counts from the creation the API server recorded (whole seconds).
		windowEnd := owned.CreationTimestamp.Add(4 * time.Second)

		// While the window lasts the owner is told why and until when, and nothing is evicted.
		Eventually(func() []string { return eventReasons("delay", "owned") }).Should(ContainElement("PreemptionDelayNotElapsed"))
		Expect(eventMessages("delay", "owned", "PreemptionDelayNotElapsed")).To(ContainElement(
			ContainSubstring("evicts no job before %s", windowEnd.UTC().Format(time.RFC3339))))
		Expect(metric(opts.MetricsRegistry, "kai_scheduler_preemption_delay_held_total", map[string]string{"action": "reclaim"})()).
			To(BeNumerically(">", 0), "the held reclaimer is counted")
		Consistently(runningPods("delay", "borrowed"), time.Until(windowEnd)-500*time.Millisecond).Should(Equal(4))

		// Then the reclaim happens, and the victim's PodGroup records when it was evicted:
		// its own preemption delay would re-arm from there.
		Eventually(runningPods("delay", "owned")).Should(Equal(4))
		Expect(time.Now()).To(BeTemporally(">=", windowEnd))
		expectEvictedAtOrAfter("delay", "borrowed", windowEnd)
	})
})
