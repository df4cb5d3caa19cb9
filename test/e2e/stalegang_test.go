package e2e

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/conf"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// staleConfig is the built-in default running stalegangeviction too, with a default long
// enough that only the jobs' own grace periods can evict within the spec.
var staleConfig = strings.Replace(string(conf.DefaultYAML()), `actions: "allocate, reclaim, preempt"`,
	"actions: \"allocate, reclaim, preempt, stalegangeviction\"\nglobalDefaultStalenessGracePeriod: 1h", 1)

var _ = Describe("Stale gangs", func() {
	It("are evicted whole once a deleted pod has left them below their minimum for their grace period, min-runtime or not", func() {
		createNamespace("stale")
		// Both jobs are protected for an hour: protection is against other jobs, not this.
		create(builders.MakeQueue("stale-queue").GPUQuota(-1).PreemptMinRuntime(time.Hour).ReclaimMinRuntime(time.Hour).Obj())
		createNode("stale-node", 8)
		Expect(staleConfig).To(ContainSubstring("stalegangeviction"), "the built-in default's actions line changed")
		opts := schedulerOptionsWith(staleConfig)
		DeferCleanup(startScheduler(opts))

		createJob(builders.MakePodGroup("stale", "train").Queue("stale-queue").PriorityClass("train").MinMember(3).
			StalenessGracePeriod(3*time.Second), 3, 1)
		createJob(builders.MakePodGroup("stale", "keep").Queue("stale-queue").PriorityClass("train").MinMember(2).
			Annotation(scheduling.StalenessGracePeriodAnnotation, "-1s"), 2, 1)
		Eventually(runningPods("stale", "train")).Should(Equal(3))
		Eventually(runningPods("stale", "keep")).Should(Equal(2))

		deleted := time.Now()
		for _, name := range []string{"train-2", "keep-1"} {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "stale", Name: name}}
			Expect(k8sClient.Delete(suiteCtx, pod)).To(Succeed())
		}
		Consistently(runningPods("stale", "train"), 2*time.Second).Should(Equal(2), "within its grace period the gang is kept")
		Eventually(runningPods("stale", "train"), 10*time.Second).Should(BeZero(), "after it, what is left of the gang is evicted")
		Expect(time.Since(deleted)).To(BeNumerically(">=", 3*time.Second))

		Eventually(func() []string { return eventMessages("stale", "train", "Evicted") }).Should(ContainElement(
			MatchRegexp(`evicted by stalegangeviction: stale gang: its gang has had 2 of the 3 pods it needs since .*, longer than its staleness grace period 3s`)))
		Eventually(metric(opts.MetricsRegistry, "kai_scheduler_stale_gang_evictions_total", nil)).Should(Equal(1.0))
		Expect(metric(opts.MetricsRegistry, "kai_scheduler_evictions_total", map[string]string{"action": "stalegangeviction"})()).To(Equal(2.0))
		Expect(metric(opts.MetricsRegistry, "kai_scheduler_min_runtime_refusals_total", map[string]string{"action": "reclaim"})()).To(BeZero())
		Expect(runningPods("stale", "keep")()).To(Equal(1), "a negative grace period never evicts")
	})
})
