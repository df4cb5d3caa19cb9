package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

var _ = Describe("A queue's quota", func() {
	// Issue 38's reproduction on a real API server, with the chart's default queues (the very
	// file make run-local applies): production reclaims its 16 GPUs when research's
	// min-runtime ends, though a notebook waits in default-queue, and every number behind the
	// verdicts is where a user looks: the Queue's status, the metrics, explain.
	It("is owed: one waiting notebook does not cancel it, and its numbers are shown", func() {
		const protection = 16 * time.Second
		createNamespace("owed")
		for _, q := range designQueues("queues-default.yaml") {
			create(q)
		}
		create(builders.MakeQueue("production").GPUQuota(16).Obj())
		// Research's protection outlasts the status updater's 10 s between rewrites of a job's
		// condition: serve's first cycles may see its gang before all its pods exist and tell
		// that first; the protection must still hold when the next condition may be written.
		create(builders.MakeQueue("research").GPUQuota(0).ReclaimMinRuntime(protection).Obj())
		createNode("owed-a", 8)
		createNode("owed-b", 8)
		opts := schedulerOptions("")
		DeferCleanup(startScheduler(opts))

		createJob(builders.MakePodGroup("owed", "pretrain").Queue("research").PriorityClass("train").MinMember(2), 2, 8)
		Eventually(runningPods("owed", "pretrain")).Should(Equal(2))
		protectedUntil := startStamp(k8sClient, "owed", "pretrain").Add(protection)
		createJob(builders.MakePodGroup("owed", "serve").Queue("production").PriorityClass("train").MinMember(2), 2, 8)
		createJob(builders.MakePodGroup("owed", "notebook").Queue("default-queue").PriorityClass("train"), 1, 1)

		// While research is protected, production is told whom it waits for, and explain shows
		// that its queue is owed its 16 GPUs and may reclaim them.
		Eventually(func() []string { return eventReasons("owed", "serve") }).Should(ContainElement(model.ReasonMinRuntimeProtected))
		Expect(time.Now()).To(BeTemporally("<", protectedUntil), "the spec needs research still protected here")
		out := kubectlKai("explain", "podgroup", "owed/serve", "--default-config")
		Expect(out).To(ContainSubstring("production: gpu: holds 0, with this job 16; deserved 16, fair share 16"))
		Expect(out).To(ContainSubstring("At production it stays within its share: it may reclaim"))
		out = kubectlKai("explain", "queue", "production", "--default-config")
		Expect(out).To(ContainSubstring("gpu: it is owed 16 GPUs more of its deserved quota"))
		Expect(out).To(ContainSubstring("gpu: the top-level queues share the cluster's 16 GPUs; they deserve 16 in all (default-parent-queue 0, production 16, research 0)."))

		// Research goes when its protection ends, for production, and production runs; the
		// notebook, owed nothing, waits.
		Eventually(runningPods("owed", "serve")).Should(Equal(2))
		expectEvictedAtOrAfter("owed", "pretrain", protectedUntil.Truncate(time.Second))
		Expect(eventMessages("owed", "pretrain", "Reclaimed")).To(ContainElement(ContainSubstring("evicted by reclaim for job owed/serve")))
		Consistently(boundPods("owed", "notebook"), "2s").Should(BeZero())

		// The Queue's status and the metrics give each queue's deserved quota and fair share.
		shares := func(name string) func() []string {
			return func() []string {
				q := &v2.Queue{}
				Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Name: name}, q)).To(Succeed())
				deserved, fair := q.Status.Deserved[model.GPUResourceName], q.Status.FairShare[model.GPUResourceName]
				return []string{deserved.String(), fair.String()}
			}
		}
		Eventually(shares("production"), 30*time.Second).Should(Equal([]string{"16", "16"}))
		Eventually(shares("default-queue"), 30*time.Second).Should(Equal([]string{"0", "0"}), "16 owed to production of 16: nothing left over quota")
		Expect(metric(opts.MetricsRegistry, "kai_scheduler_queue_fair_share", map[string]string{"queue": "production", "resource": "gpu"})()).To(Equal(16.0))
		Expect(metric(opts.MetricsRegistry, "kai_scheduler_queue_allocated", map[string]string{"queue": "production", "resource": "gpu"})()).To(Equal(16.0))
	})
})
