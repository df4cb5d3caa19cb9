package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

var _ = Describe("A job's own min-runtime annotation", func() {
	// The borrower queue protects its jobs against reclaim for an hour, longer than the
	// spec runs: only a job's own, shorter annotation can let the owner in.
	It("shortens the job's reclaim protection, and is declined with a Warning event when it would lengthen it", func() {
		createNamespace("shorten")
		create(builders.MakeQueue("shorten-owner").GPUQuota(2).Obj())
		create(builders.MakeQueue("shorten-borrower").GPUQuota(0).ReclaimMinRuntime(time.Hour).Obj())
		createNode("shorten-node", 4)
		opts := schedulerOptions("")
		DeferCleanup(startScheduler(opts))
		createJob(builders.MakePodGroup("shorten", "short").Queue("shorten-borrower").PriorityClass("train").MinMember(2).
			Annotation(scheduling.ReclaimMinRuntimeAnnotation, "3s"), 2, 1)
		createJob(builders.MakePodGroup("shorten", "long").Queue("shorten-borrower").PriorityClass("train").MinMember(2).
			Annotation(scheduling.ReclaimMinRuntimeAnnotation, "2h"), 2, 1)
		Eventually(runningPods("shorten", "short")).Should(Equal(2))
		Eventually(runningPods("shorten", "long")).Should(Equal(2))
		protectedUntil := startStamp(k8sClient, "shorten", "short").Add(3 * time.Second)

		// The shortened job's status names the annotation as what sets its protection; the
		// declined one keeps its queue's hour and is told why in a Warning event.
		setBy := func(job string) func(Gomega) []string {
			return func(g Gomega) []string {
				shown := minRuntimeStatus("shorten", job)()
				g.Expect(shown).NotTo(BeNil())
				var by []string
				for _, l := range shown.Reclaim {
					by = append(by, l.SetBy)
				}
				return by
			}
		}
		Eventually(setBy("short")).Should(And(Not(BeEmpty()), HaveEach(scheduling.ReclaimMinRuntimeAnnotation)))
		Eventually(setBy("long")).Should(And(Not(BeEmpty()), HaveEach("shorten-borrower")))
		Eventually(func() []string { return eventReasons("shorten", "long") }).Should(ContainElement(model.ReasonMinRuntimeNotShortened))
		Expect(eventMessages("shorten", "long", model.ReasonMinRuntimeNotShortened)).To(ContainElement(
			ContainSubstring("annotation %s=2h0m0s is not below", scheduling.ReclaimMinRuntimeAnnotation)))
		Expect(eventReasons("shorten", "short")).NotTo(ContainElement(model.ReasonMinRuntimeNotShortened))

		// The owner reclaims: the short job goes once its 3s have passed, not before; the
		// long job stays.
		createJob(builders.MakePodGroup("shorten", "owned").Queue("shorten-owner").PriorityClass("train").MinMember(2), 2, 1)
		Consistently(runningPods("shorten", "short"), time.Until(protectedUntil)-500*time.Millisecond).Should(Equal(2))
		Eventually(runningPods("shorten", "owned")).Should(Equal(2))
		Expect(time.Now()).To(BeTemporally(">=", protectedUntil))
		expectEvictedAtOrAfter("shorten", "short", protectedUntil) // its pods ran at least 3s
		Expect(runningPods("shorten", "short")()).To(BeZero())
		Consistently(runningPods("shorten", "long"), 2*time.Second).Should(Equal(2))
		long := &v2alpha2.PodGroup{}
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: "shorten", Name: "long"}, long)).To(Succeed())
		Expect(scheduling.ParseEvictionTime(long.Annotations)).To(BeNil(), "the long job was never evicted")
	})
})
