package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

var _ = Describe("A job's reported checkpoint", func() {
	// Two borrowed jobs, each filling its own node, equal in priority and queue; by name, and
	// by start when they start apart, "older" would be reclaimed. Both report a checkpoint
	// within their run, "recent" the later one: it loses less, and goes.
	It("makes the job that saved its work last the victim among equals, and explain tells the work at risk", func() {
		createNamespace("lostwork")
		create(builders.MakeQueue("lostwork-owner").GPUQuota(2).Obj())
		create(builders.MakeQueue("lostwork-borrower").GPUQuota(0).Obj())
		createNode("lostwork-node-1", 2)
		createNode("lostwork-node-2", 2)
		DeferCleanup(startScheduler(schedulerOptions("")))
		createJob(builders.MakePodGroup("lostwork", "recent").Queue("lostwork-borrower").PriorityClass("train"), 1, 2)
		Eventually(runningPods("lostwork", "recent")).Should(Equal(1))
		createJob(builders.MakePodGroup("lostwork", "older").Queue("lostwork-borrower").PriorityClass("train"), 1, 2)
		Eventually(runningPods("lostwork", "older")).Should(Equal(1))
		startStamp(k8sClient, "lostwork", "recent")
		olderStart := startStamp(k8sClient, "lostwork", "older")

		// The workloads report their checkpoints, as a training job that saves its work would.
		time.Sleep(time.Second) // both checkpoints fall within both runs
		recent := time.Now()
		older := recent.Add(-500 * time.Millisecond)
		checkpoint := func(job string, at time.Time) {
			pg := &v2alpha2.PodGroup{}
			Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: "lostwork", Name: job}, pg)).To(Succeed())
			before := pg.DeepCopy()
			pg.Annotations[scheduling.LastCheckpointTimestampAnnotation] = at.UTC().Format(time.RFC3339Nano)
			Expect(k8sClient.Patch(suiteCtx, pg, client.MergeFrom(before))).To(Succeed())
		}
		checkpoint("older", older)
		checkpoint("recent", recent)
		Expect(older).To(BeTemporally(">", olderStart))

		out := kubectlKai("explain", "pg", "lostwork/older", "--default-config")
		Expect(out).To(ContainSubstring("last checkpoint " + older.UTC().Format(time.RFC3339) + " ("))
		Expect(out).To(ContainSubstring("an eviction now loses the work since then."))

		createJob(builders.MakePodGroup("lostwork", "owned").Queue("lostwork-owner").PriorityClass("train"), 1, 2)
		Eventually(runningPods("lostwork", "owned")).Should(Equal(1))
		expectEvictedAtOrAfter("lostwork", "recent", recent)
		Consistently(runningPods("lostwork", "older"), 2*time.Second).Should(Equal(1))
		Expect(stampOfEviction("lostwork", "older")).To(BeNil(), "the job that would lose more was never evicted")
	})
})

// stampOfEviction is the job's last-eviction-timestamp (nil if it was never evicted).
func stampOfEviction(namespace, job string) *time.Time {
	pg := &v2alpha2.PodGroup{}
	Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: namespace, Name: job}, pg)).To(Succeed())
	evicted, err := scheduling.ParseEvictionTime(pg.Annotations)
	Expect(err).NotTo(HaveOccurred())
	return evicted
}
