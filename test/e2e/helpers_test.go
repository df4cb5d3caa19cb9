package e2e

import (
	"fmt"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
	"github.com/kai-minruntime/kai-scheduler/test/testenv"
)

// cleanUp deletes an object after the spec, at once (grace 0 for pods).
func cleanUp(obj client.Object) {
	DeferCleanup(func() {
		zero := int64(0)
		Expect(client.IgnoreNotFound(k8sClient.Delete(suiteCtx, obj, &client.DeleteOptions{GracePeriodSeconds: &zero}))).To(Succeed())
	})
}

// create creates an object, to be deleted after the spec.
func create[T client.Object](obj T) T {
	Expect(k8sClient.Create(suiteCtx, obj)).To(Succeed())
	cleanUp(obj)
	return obj
}

func createNode(name string, gpus int64) {
	Expect(testenv.CreateNode(suiteCtx, clientset, name, gpus)).To(Succeed())
	cleanUp(builders.MakeNode(name).Obj())
	Expect(testenv.WaitNodeReady(suiteCtx, clientset, name)).To(Succeed())
}

func createNamespace(name string) {
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	Expect(client.IgnoreAlreadyExists(k8sClient.Create(suiteCtx, ns))).To(Succeed())
}

// gpuPod is a pod of this scheduler asking for gpus GPUs and one CPU.
func gpuPod(namespace, name string, gpus int64) *builders.PodWrapper {
	return builders.MakePod(namespace, name).GPUs(gpus).Request(v1.ResourceCPU, "1")
}

// createJob creates a PodGroup and pods of it (name-0, name-1, ...), each a gpuPod asking
// for gpus GPUs, edited by edits.
func createJob(group *builders.PodGroupWrapper, pods int, gpus int64, edits ...func(*builders.PodWrapper)) {
	pg := create(group.Obj())
	for i := range pods {
		pod := gpuPod(pg.Namespace, fmt.Sprintf("%s-%d", pg.Name, i), gpus).PodGroup(pg.Name)
		for _, edit := range edits {
			edit(pod)
		}
		create(pod.Obj())
	}
}

// runningPods counts the job's pods that are bound and running (KWOK starts them). Waiting
// on it stops at once, with kwok's log, if kwok has died.
func runningPods(namespace, job string) func() int {
	return func() int {
		if err := kwok.Err(); err != nil {
			StopTrying("no pod can start").Wrap(err).Now()
		}
		pods := &v1.PodList{}
		Expect(k8sClient.List(suiteCtx, pods, client.InNamespace(namespace))).To(Succeed())
		n := 0
		for _, p := range pods.Items {
			if p.Annotations[scheduling.PodGroupNameAnnotation] == job && p.Spec.NodeName != "" &&
				p.Status.Phase == v1.PodRunning && p.DeletionTimestamp == nil {
				n++
			}
		}
		return n
	}
}

// boundPods counts the job's pods that have a node.
func boundPods(namespace, job string) func() int {
	return func() int {
		pods := &v1.PodList{}
		Expect(k8sClient.List(suiteCtx, pods, client.InNamespace(namespace))).To(Succeed())
		n := 0
		for _, p := range pods.Items {
			if p.Annotations[scheduling.PodGroupNameAnnotation] == job && p.Spec.NodeName != "" {
				n++
			}
		}
		return n
	}
}

// stampOf reads the job's start stamp, the last-start-timestamp annotation the scheduler
// writes (nil while it has none); a stamp that does not parse fails the spec at once.
func stampOf(c client.Client, namespace, job string) *time.Time {
	pg := &v2alpha2.PodGroup{}
	Expect(c.Get(suiteCtx, client.ObjectKey{Namespace: namespace, Name: job}, pg)).To(Succeed())
	stamp, err := scheduling.ParseStartTime(pg.Annotations)
	Expect(err).NotTo(HaveOccurred(), "the start stamp must parse") // within Eventually too, this fails at once
	return stamp
}

// stampLead bounds how much later than its start stamp a job's first pod may start. The
// scheduler stamps a job with its cycle's now, read before the cycle binds the job; the
// binds go out right after the cycle, and KWOK, which watches pods, starts a bound pod at
// once (its pod-ready stage has no delay), writing its own now, in whole seconds, as the
// pod's start. The lead is the rest of one cycle, the binds and two watch deliveries: in
// three runs of this suite on two busy cores (load 5 to 6), every job's first pod started
// in its stamp's own second, one stamped at .985s among them. Two seconds, ten schedule
// periods, leave room for a slower machine and still fail a stamp taken at the wrong
// moment: when the job was first seen, or when a retried write finally landed.
const stampLead = 2 * time.Second

// startStamp waits until the job has a start stamp and its first pod has started, checks
// the stamp against that start, and returns it. The stamp is the moment the scheduler bound
// the job, which the pods' start follows: the first pod's start (status.startTime, whole
// seconds as KWOK writes it) is not before the stamp's second, nor later than stampLead
// after the stamp.
func startStamp(c client.Client, namespace, job string) time.Time {
	var stamp *time.Time
	var first time.Time
	Eventually(func(g Gomega) {
		stamp = stampOf(c, namespace, job)
		g.Expect(stamp).NotTo(BeNil(), "the job has no start stamp yet")
		pods := &v1.PodList{}
		g.Expect(c.List(suiteCtx, pods, client.InNamespace(namespace))).To(Succeed())
		var starts []time.Time
		for _, p := range pods.Items {
			if p.Annotations[scheduling.PodGroupNameAnnotation] == job && p.Status.StartTime != nil {
				starts = append(starts, p.Status.StartTime.Time)
			}
		}
		g.Expect(starts).NotTo(BeEmpty(), "none of the job's pods has started")
		first = slices.MinFunc(starts, time.Time.Compare)
	}).Should(Succeed())
	Expect(first).To(BeTemporally(">=", stamp.Truncate(time.Second)),
		"the job's first pod started at %s, before the scheduler stamped it started at %s", first, stamp)
	Expect(first.Sub(*stamp)).To(BeNumerically("<=", stampLead),
		"the job's first pod started at %s, more than %s after its start stamp %s", first, stampLead, stamp)
	return *stamp
}

// expectEvictedAtOrAfter waits until the job's PodGroup records an eviction (the
// last-eviction-timestamp annotation the scheduler writes) and checks it is not before t; a
// stamp that does not parse fails at once.
func expectEvictedAtOrAfter(namespace, job string, t time.Time) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		pg := &v2alpha2.PodGroup{}
		g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: namespace, Name: job}, pg)).To(Succeed())
		evicted, err := scheduling.ParseEvictionTime(pg.Annotations)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(evicted).NotTo(BeNil(), "the eviction is stamped on the victim's PodGroup")
		g.Expect(*evicted).To(BeTemporally(">=", t))
	}).Should(Succeed())
}
