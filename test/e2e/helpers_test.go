package e2e

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/cache"
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

// startStamp reads the job's last-start-timestamp annotation (nil when absent).
func startStamp(namespace, job string) func() *time.Time {
	return func() *time.Time {
		pg := &v2alpha2.PodGroup{}
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: namespace, Name: job}, pg)).To(Succeed())
		t, err := cache.ParseStartTime(pg.Annotations)
		Expect(err).NotTo(HaveOccurred())
		return t
	}
}
