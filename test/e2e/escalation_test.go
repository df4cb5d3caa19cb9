package e2e

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/conf"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// escalationConfig triples a job's protection per run it lost, up to a minute.
const escalationConfig = `actions: "allocate, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: proportion
  - name: minruntime
    arguments: {escalationFactor: "3", escalationCeiling: 1m}
  - name: predicates
`

// defaultConfig is the scheduler's built-in configuration, escalation off.
var defaultConfig = string(conf.DefaultYAML())

var _ = Describe("Escalating protection", Label("escalation"), func() {
	// The borrower queue protects its jobs against reclaim for 2s; each run the owner ends
	// triples the next one's protection, by the plugin's arguments or by the borrower
	// queue's annotations. The count lives in the PodGroup's status, so a new scheduler
	// protects the job as the old one would have.
	DescribeTable("counts each run reclaim ends in the PodGroup's status, once, and protects the next run longer, across a restart",
		func(ns, config string, annotations map[string]string) {
			escalates(ns, config, annotations)
		},
		Entry("set by the minruntime plugin's arguments", "escalate", escalationConfig, nil),
		Entry("set by the borrower queue's annotations, the arguments leaving it off", "escalate-queue", defaultConfig,
			map[string]string{scheduling.EscalationFactorAnnotation: "3", scheduling.EscalationCeilingAnnotation: "1m"}),
	)
})

// escalates plays the spec in namespace ns (its queues and node named after it).
func escalates(ns, config string, annotations map[string]string) {
	createNamespace(ns)
	create(builders.MakeQueue(ns + "-owner").GPUQuota(2).Obj())
	borrower := builders.MakeQueue(ns + "-borrower").GPUQuota(0).ReclaimMinRuntime(2 * time.Second).Obj()
	borrower.Annotations = annotations
	create(borrower)
	createNode(ns+"-node", 2)
	stopFirst := startScheduler(schedulerOptionsWith(config))

	evictions := func() *v2alpha2.EvictionCount {
		pg := &v2alpha2.PodGroup{}
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: "train"}, pg)).To(Succeed())
		return pg.Status.Evictions
	}
	// run starts the borrower's two pods again (no controller re-creates them here) and
	// returns its start stamp; reclaim brings the owner's job, which ends the run.
	run := func(first bool) time.Time {
		created := time.Now()
		if first {
			createJob(builders.MakePodGroup(ns, "train").Queue(ns+"-borrower").PriorityClass("train").MinMember(2), 2, 1)
		} else {
			for i := range 2 {
				create(gpuPod(ns, fmt.Sprintf("train-%d", i), 1).PodGroup("train").Obj())
			}
		}
		Eventually(runningPods(ns, "train")).Should(Equal(2))
		// This run's stamp, which protection counts from (not the last run's, seconds older);
		// how it lines up with the pods' start is the start-stamp specs' to check.
		var stamp *time.Time
		Eventually(func(g Gomega) {
			stamp = stampOf(k8sClient, ns, "train")
			g.Expect(stamp).NotTo(BeNil())
			g.Expect(*stamp).To(BeTemporally(">", created.Add(-time.Second)))
		}).Should(Succeed())
		return *stamp
	}
	reclaim := func(protected time.Duration, started time.Time) {
		createJob(builders.MakePodGroup(ns, "owned").Queue(ns+"-owner").PriorityClass("train").MinMember(2), 2, 1)
		until := started.Add(protected)
		Consistently(runningPods(ns, "train"), time.Until(until)-500*time.Millisecond).Should(Equal(2))
		Eventually(runningPods(ns, "owned")).Should(Equal(2))
		expectEvictedAtOrAfter(ns, "train", until)
		// The owner is done: its job leaves, and the borrower's evicted pods are gone.
		for i := range 2 {
			Expect(client.IgnoreNotFound(k8sClient.Delete(suiteCtx, gpuPod(ns, fmt.Sprintf("owned-%d", i), 1).Obj()))).To(Succeed())
		}
		Expect(k8sClient.Delete(suiteCtx, builders.MakePodGroup(ns, "owned").Obj())).To(Succeed())
		Eventually(boundPods(ns, "train")).Should(BeZero())
		Eventually(boundPods(ns, "owned")).Should(BeZero())
	}

	started := run(true)
	Expect(evictions()).To(BeNil(), "a job never evicted has no count")
	reclaim(2*time.Second, started)
	Eventually(evictions).Should(And(Not(BeNil()), HaveField("Reclaim", int32(1)), HaveField("Total", int32(1))))
	Consistently(evictions, time.Second).Should(HaveField("Total", int32(1)), "the run ended once, whatever its two pods")

	// A new scheduler reads the count: the next run is protected 3 × 2s, and its
	// status says what was escalated.
	stopFirst()
	DeferCleanup(startScheduler(schedulerOptionsWith(config)))
	started = run(false)
	Eventually(func(g Gomega) {
		shown := minRuntimeStatus(ns, "train")()
		g.Expect(shown).NotTo(BeNil())
		g.Expect(shown.Reclaim).NotTo(BeEmpty())
		g.Expect(shown.Reclaim[0].MinRuntime.Duration).To(Equal(6 * time.Second))
		g.Expect(shown.Reclaim[0].EscalatedFrom).To(HaveField("Duration", 2*time.Second))
	}).Should(Succeed())
	Expect(printedColumn(ns, "train", "Evictions")).To(Equal("1"))
	reclaim(6*time.Second, started)
	Eventually(evictions).Should(And(HaveField("Reclaim", int32(2)), HaveField("Total", int32(2))))
}
