package e2e

import (
	"encoding/json"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

var _ = Describe("Gang scheduling", func() {
	It("binds a gang all at once or not at all, and stamps its start on the PodGroup", func() {
		createNamespace("gang")
		create(builders.MakeQueue("gang-queue").GPUQuota(-1).Obj())
		createNode("gang-node-1", 4)
		DeferCleanup(startScheduler(schedulerOptions("")))

		createJob(builders.MakePodGroup("gang", "trainer").Queue("gang-queue").PriorityClass("train").MinMember(3), 3, 2)
		Consistently(boundPods("gang", "trainer"), 2*time.Second).Should(BeZero(), "6 GPUs do not fit on 4: nothing partial")
		Expect(stampOf(k8sClient, "gang", "trainer")).To(BeNil())
		Eventually(pendingMessage("gang", "trainer")).Should(ContainSubstring("gang of 3 pods does not fit"), "the PodGroup tells why it waits")
		Eventually(func() []string { return eventReasons("gang", "trainer") }).Should(ContainElement("Unschedulable"))
		Eventually(func() string {
			pod := &v1.Pod{}
			Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: "gang", Name: "trainer-0"}, pod)).To(Succeed())
			for _, c := range pod.Status.Conditions {
				if c.Type == v1.PodScheduled {
					return string(c.Status) + "/" + c.Reason
				}
			}
			return ""
		}).Should(Equal("False/Unschedulable"), "cluster autoscalers see the waiting pods")

		before := time.Now()
		createNode("gang-node-2", 4)
		Eventually(runningPods("gang", "trainer")).Should(Equal(3))
		Expect(startStamp(k8sClient, "gang", "trainer")).To(And(BeTemporally(">=", before), BeTemporally("<", before.Add(10*time.Second))),
			"the gang starts once the node it needed is there, and not before")
		Eventually(func() int {
			pg := &v2alpha2.PodGroup{}
			Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: "gang", Name: "trainer"}, pg)).To(Succeed())
			return len(pg.Status.SchedulingConditions)
		}).Should(BeZero(), "the condition is cleared once the job runs")
	})
})

var _ = Describe("Reclaim min-runtime", func() {
	It("holds a reclaim back until the victim's protection ends, then reclaims", func() {
		createNamespace("reclaim")
		create(builders.MakeQueue("owner").GPUQuota(4).Obj())
		// The usual setup: a reclaim min-runtime only; the preempt one is the default's 0s.
		create(builders.MakeQueue("borrower").GPUQuota(0).ReclaimMinRuntime(4 * time.Second).Obj())
		// A job within its queue's quota, on a node of its own, protected against
		// preemption only.
		create(builders.MakeQueue("steady").GPUQuota(1).PreemptMinRuntime(time.Hour).Obj())
		createNode("reclaim-steady-node", 1)
		opts := schedulerOptions("")
		DeferCleanup(startScheduler(opts))
		createJob(builders.MakePodGroup("reclaim", "steady").Queue("steady").PriorityClass("train"), 1, 1)
		Eventually(runningPods("reclaim", "steady")).Should(Equal(1))
		createNode("reclaim-node", 4)

		createJob(builders.MakePodGroup("reclaim", "borrowed").Queue("borrower").PriorityClass("train").MinMember(4), 4, 1)
		Eventually(runningPods("reclaim", "borrowed")).Should(Equal(4))
		stamp := startStamp(k8sClient, "reclaim", "borrowed")
		protectedUntil := stamp.Add(4 * time.Second)

		// The running job's status shows the start counted and what protects it until when,
		// and kubectl get pg shows when the protection against reclaim ends, and no end of
		// a protection against preemption it does not have (not its start).
		Eventually(minRuntimeStatus("reclaim", "borrowed")).ShouldNot(BeNil())
		shown := minRuntimeStatus("reclaim", "borrowed")()
		endShown := protectedUntil.Truncate(time.Second) // whole seconds, an end rounded up
		if !endShown.Equal(protectedUntil) {
			endShown = endShown.Add(time.Second)
		}
		Expect(shown.Start.Time).To(BeTemporally("==", stamp.Truncate(time.Second)))
		Expect(shown.Preempt.MinRuntime.Duration).To(BeZero())
		Expect(shown.Preempt.SetBy).To(BeEmpty(), "the default's")
		Expect(shown.Preempt.Until).To(BeNil(), "a min-runtime of 0s protects nothing and has no end")
		Expect(shown.Reclaim).To(HaveLen(1))
		Expect(shown.Reclaim[0].FromOutside).To(Equal("borrower"))
		Expect(shown.Reclaim[0].SetBy).To(Equal("borrower"))
		Expect(shown.Reclaim[0].Until).NotTo(BeNil())
		Expect(shown.Reclaim[0].Until.Time).To(BeTemporally("==", endShown))
		Expect(shown.ReclaimUntil).NotTo(BeNil())
		Expect(shown.ReclaimUntil.Time).To(BeTemporally("==", endShown))
		Expect(shown.ProtectedUntil).NotTo(BeNil())
		Expect(shown.ProtectedUntil.Time).To(BeTemporally("==", endShown))
		Expect(printedColumn("reclaim", "borrowed", "Reclaim-Until")).To(Equal(endShown.UTC().Format(time.RFC3339)))
		Expect(printedColumn("reclaim", "borrowed", "Preempt-Until")).To(BeEmpty(), "preemptMinRuntime 0s: no protection to show")

		reclaim := map[string]string{"action": "reclaim"}
		protectedJobs := metric(opts.MetricsRegistry, "kai_scheduler_min_runtime_protected_jobs", map[string]string{"queue": "borrower", "action": "reclaim"})
		Eventually(protectedJobs).Should(Equal(1.0), "the gauge counts the protected job")

		createJob(builders.MakePodGroup("reclaim", "owned").Queue("owner").PriorityClass("train").MinMember(4), 4, 1)
		Eventually(metric(opts.MetricsRegistry, "kai_scheduler_min_runtime_refusals_total", reclaim)).
			Should(BeNumerically(">", 0), "the blocked reclaim is counted")
		Consistently(runningPods("reclaim", "borrowed"), time.Until(protectedUntil)-500*time.Millisecond).Should(Equal(4))
		Eventually(runningPods("reclaim", "owned")).Should(Equal(4))
		Expect(time.Now()).To(BeTemporally(">=", protectedUntil))
		Eventually(minRuntimeStatus("reclaim", "borrowed")).Should(BeNil(), "a job no longer running shows no protection")
		Eventually(protectedJobs).Should(BeZero())
		Eventually(metric(opts.MetricsRegistry, "kai_scheduler_runtime_at_eviction_seconds", reclaim)).Should(Equal(4.0),
			"each evicted pod's runtime is observed")
		Eventually(metric(opts.MetricsRegistry, "kai_scheduler_min_runtime_wait_seconds", nil)).Should(Equal(1.0),
			"the owner's wait on protection is observed")
		Eventually(func() []string { return eventReasons("reclaim", "borrowed") }).Should(ContainElement("Reclaimed"))
		// The victim's owner is told who took the GPUs, how long the job ran, and which
		// protection it had.
		Expect(eventMessages("reclaim", "borrowed", "Reclaimed")).To(ContainElement(MatchRegexp(
			`evicted by reclaim for job reclaim/owned: it ran \d+s; its reclaim min-runtime of 4s from queue borrower ended at `)))
		// While it waited, the owner was told it waits on a protection, by reason and by name.
		Eventually(func() []string { return eventReasons("reclaim", "owned") }).Should(ContainElement("MinRuntimeProtected"))
		Expect(eventMessages("reclaim", "owned", "MinRuntimeProtected")).To(ContainElement(
			ContainSubstring("reclaim/borrowed until %s (4s from queue borrower)", endShown.UTC().Format(time.RFC3339))))

		// The job protected against preemption only shows its preempt end and no reclaim
		// end; the owner's job, which no min-runtime protects, shows neither.
		steady := minRuntimeStatus("reclaim", "steady")()
		Expect(steady).NotTo(BeNil())
		Expect(steady.Preempt.Until).NotTo(BeNil())
		Expect(printedColumn("reclaim", "steady", "Preempt-Until")).To(Equal(steady.Preempt.Until.UTC().Format(time.RFC3339)))
		Expect(steady.Preempt.Until.Time).To(BeTemporally("~", time.Now().Add(time.Hour), time.Minute))
		Expect(printedColumn("reclaim", "steady", "Reclaim-Until")).To(BeEmpty(), "reclaimMinRuntime 0s: no protection to show")
		Expect(runningPods("reclaim", "steady")()).To(Equal(1), "within its quota, it was never a victim")
		Expect(minRuntimeStatus("reclaim", "owned")()).To(BeNil())
		Expect(printedColumn("reclaim", "owned", "Preempt-Until")).To(BeEmpty())
		Expect(printedColumn("reclaim", "owned", "Reclaim-Until")).To(BeEmpty())
	})

	It("keeps protecting across a scheduler restart, binding nothing twice", func() {
		createNamespace("restart")
		create(builders.MakeQueue("restart-owner").GPUQuota(4).Obj())
		create(builders.MakeQueue("restart-borrower").GPUQuota(0).ReclaimMinRuntime(6 * time.Second).Obj())
		createNode("restart-node", 4)
		stopFirst := startScheduler(schedulerOptions(""))
		createJob(builders.MakePodGroup("restart", "borrowed").Queue("restart-borrower").PriorityClass("train").MinMember(4), 4, 1)
		Eventually(runningPods("restart", "borrowed")).Should(Equal(4))
		protectedUntil := startStamp(k8sClient, "restart", "borrowed").Add(6 * time.Second)
		stopFirst()

		createJob(builders.MakePodGroup("restart", "owned").Queue("restart-owner").PriorityClass("train").MinMember(4), 4, 1)
		restarted := schedulerOptions("")
		DeferCleanup(startScheduler(restarted))
		Consistently(runningPods("restart", "borrowed"), time.Until(protectedUntil)-500*time.Millisecond).Should(Equal(4),
			"the new scheduler reads the stamp back and keeps protecting")
		Eventually(runningPods("restart", "owned")).Should(Equal(4))
		Expect(metric(restarted.MetricsRegistry, "kai_scheduler_bind_errors_total", nil)()).To(BeZero(), "no pod was bound twice")
	})
})

// minRuntimeStatus reads the protection a PodGroup's status shows.
func minRuntimeStatus(namespace, name string) func() *v2alpha2.MinRuntimeStatus {
	return func() *v2alpha2.MinRuntimeStatus {
		pg := &v2alpha2.PodGroup{}
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: namespace, Name: name}, pg)).To(Succeed())
		return pg.Status.MinRuntime
	}
}

// printedColumn is a PodGroup's cell in the named column of kubectl get, as the API server
// prints it (the Table kubectl asks for); empty where the object has no value (kubectl
// prints <none>).
func printedColumn(namespace, name, column string) string {
	raw, err := clientset.Discovery().RESTClient().Get().
		AbsPath("/apis", v2alpha2.SchemeGroupVersion.Group, v2alpha2.SchemeGroupVersion.Version, "namespaces", namespace, "podgroups", name).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(suiteCtx).Raw()
	Expect(err).NotTo(HaveOccurred())
	table := &metav1.Table{}
	Expect(json.Unmarshal(raw, table)).To(Succeed())
	Expect(table.Rows).To(HaveLen(1))
	for i, c := range table.ColumnDefinitions {
		if c.Name == column {
			if cell := table.Rows[0].Cells[i]; cell != nil {
				return fmt.Sprint(cell)
			}
			return ""
		}
	}
	Fail(fmt.Sprintf("kubectl get podgroups has no column %q", column))
	return ""
}

// eventReasons lists the reasons of the events about a PodGroup.
func eventReasons(namespace, podGroup string) []string {
	events := &v1.EventList{}
	Expect(k8sClient.List(suiteCtx, events, client.InNamespace(namespace))).To(Succeed())
	var reasons []string
	for _, e := range events.Items {
		if e.InvolvedObject.Kind == "PodGroup" && e.InvolvedObject.Name == podGroup {
			reasons = append(reasons, e.Reason)
		}
	}
	return reasons
}

// eventMessages lists the messages of a PodGroup's events with the given reason.
func eventMessages(namespace, podGroup, reason string) []string {
	events := &v1.EventList{}
	Expect(k8sClient.List(suiteCtx, events, client.InNamespace(namespace))).To(Succeed())
	var messages []string
	for _, e := range events.Items {
		if e.InvolvedObject.Kind == "PodGroup" && e.InvolvedObject.Name == podGroup && e.Reason == reason {
			messages = append(messages, e.Message)
		}
	}
	return messages
}

var _ = Describe("The promise made to a reclaimer", func() {
	// Queues without GPU quota: fair share justifies the reclaim, and afterwards neither
	// queue is owed quota, so only the promise keeps the victim's replacement (whose queue's
	// name sorts first) from taking the freed GPUs back.
	It("is kept on the pod as its nominated node, across a restart, against the victim's replacement", func() {
		createNamespace("promise")
		create(builders.MakeQueue("promise-a").GPUQuota(0).Obj())
		create(builders.MakeQueue("promise-b").GPUQuota(0).Obj())
		createNode("promise-node", 3)
		stopFirst := startScheduler(schedulerOptions(""))

		create(builders.MakePodGroup("promise", "big").Queue("promise-a").PriorityClass("train").Obj())
		// The finalizer keeps the victim terminating until the test lets go.
		create(gpuPod("promise", "big-0", 3).PodGroup("big").Finalizer("e2e.kai.scheduler/hold").Obj())
		DeferCleanup(func() { _ = releaseFinalizers("promise", "big-0") }) // runs first: lets the cleanup delete it
		Eventually(runningPods("promise", "big")).Should(Equal(1))

		createJob(builders.MakePodGroup("promise", "small").Queue("promise-b").PriorityClass("train"), 1, 1)
		Eventually(func() string { return getPod("promise", "small-0").Status.NominatedNodeName }).Should(Equal("promise-node"))
		// The pod says since when it is promised: promises on a node are kept in that order.
		Expect(getPod("promise", "small-0").Status.Conditions).To(ContainElement(And(
			HaveField("Type", v1.PodConditionType(scheduling.PromisedCondition)), HaveField("Status", v1.ConditionTrue),
			HaveField("LastTransitionTime.Time", BeTemporally("~", time.Now(), 10*time.Second)))))
		// The promise is written before the eviction it is made of.
		Eventually(func() *metav1.Time { return getPod("promise", "big-0").DeletionTimestamp }).ShouldNot(BeNil(), "big was evicted for small")
		stopFirst()

		// The job controller's replacement arrives, then the victim is gone: the 3 GPUs are
		// idle and would fit it, but 1 of them is promised to small.
		create(gpuPod("promise", "big-1", 3).PodGroup("big").Obj())
		Expect(releaseFinalizers("promise", "big-0")).To(Succeed())
		DeferCleanup(startScheduler(schedulerOptions("")))
		Eventually(runningPods("promise", "small")).Should(Equal(1))
		Expect(getPod("promise", "small-0").Spec.NodeName).To(Equal("promise-node"))
		Consistently(func() string {
			pod := &v1.Pod{}
			if err := k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: "promise", Name: "big-1"}, pod); err != nil {
				return err.Error() // bound and evicted again: the bounce the promise prevents
			}
			return pod.Spec.NodeName
		}, 2*time.Second).Should(BeEmpty(), "the victim's replacement never takes back what was evicted for small")
	})
})

func getPod(namespace, name string) *v1.Pod {
	pod := &v1.Pod{}
	Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: namespace, Name: name}, pod)).To(Succeed())
	return pod
}

// releaseFinalizers removes a pod's finalizers, letting a terminating pod go. It patches:
// KWOK writes the pod meanwhile (deleting it), which would make an update conflict.
func releaseFinalizers(namespace, name string) error {
	pod := &v1.Pod{}
	if err := k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: namespace, Name: name}, pod); err != nil {
		return client.IgnoreNotFound(err)
	}
	released := pod.DeepCopy()
	released.Finalizers = nil
	return client.IgnoreNotFound(k8sClient.Patch(suiteCtx, released, client.MergeFrom(pod)))
}
