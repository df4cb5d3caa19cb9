package e2e

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/test/testenv"
)

// cleanUp deletes an object after the spec, at once (grace 0 for pods).
func cleanUp(obj client.Object) {
	DeferCleanup(func() {
		zero := int64(0)
		Expect(client.IgnoreNotFound(k8sClient.Delete(suiteCtx, obj, &client.DeleteOptions{GracePeriodSeconds: &zero}))).To(Succeed())
	})
}

func createNode(name string, gpus int64) {
	Expect(testenv.CreateNode(suiteCtx, clientset, name, gpus)).To(Succeed())
	cleanUp(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
}

func createNamespace(name string) {
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	Expect(client.IgnoreAlreadyExists(k8sClient.Create(suiteCtx, ns))).To(Succeed())
}

// createQueue creates a top-level or child queue with a GPU quota (unlimited CPU and memory).
func createQueue(name string, gpuQuota float64, edit func(*v2.QueueSpec)) {
	q := newQueue(name, gpuQuota)
	if edit != nil {
		edit(&q.Spec)
	}
	Expect(k8sClient.Create(suiteCtx, q)).To(Succeed())
	cleanUp(q)
}

// newQueue describes a queue with a GPU quota, unlimited CPU and memory.
func newQueue(name string, gpuQuota float64) *v2.Queue {
	return &v2.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v2.QueueSpec{
		Resources: &v2.QueueResources{
			GPU:    v2.QueueResource{Quota: gpuQuota, OverQuotaWeight: 1, Limit: -1},
			CPU:    v2.QueueResource{Quota: -1, OverQuotaWeight: 1, Limit: -1},
			Memory: v2.QueueResource{Quota: -1, OverQuotaWeight: 1, Limit: -1},
		},
	}}
}

// createJob creates a PodGroup and its pods, each asking for gpus GPUs.
func createJob(namespace, name, queue, priorityClass string, minMember int32, pods int, gpus int64) {
	pg := &v2alpha2.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: v2alpha2.PodGroupSpec{MinMember: minMember, Queue: queue, PriorityClassName: priorityClass}}
	Expect(k8sClient.Create(suiteCtx, pg)).To(Succeed())
	cleanUp(pg)
	for i := range pods {
		createPod(namespace, fmt.Sprintf("%s-%d", name, i), gpus, map[string]string{scheduling.PodGroupNameAnnotation: name}, nil)
	}
}

func createPod(namespace, name string, gpus int64, annotations, labels map[string]string) *v1.Pod {
	pod := newPod(namespace, name, gpus, annotations, labels)
	Expect(k8sClient.Create(suiteCtx, pod)).To(Succeed())
	cleanUp(pod)
	return pod
}

// newPod describes a pod of this scheduler asking for gpus GPUs and one CPU.
func newPod(namespace, name string, gpus int64, annotations, labels map[string]string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Annotations: annotations, Labels: labels},
		Spec: v1.PodSpec{
			SchedulerName: "kai-scheduler",
			Containers: []v1.Container{{Name: "main", Image: "busybox", Resources: v1.ResourceRequirements{
				Limits: v1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(gpus, resource.DecimalSI)},
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"),
					"nvidia.com/gpu": *resource.NewQuantity(gpus, resource.DecimalSI)},
			}}},
		},
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
		t, err := scheduling.ParseStartTime(pg.Annotations)
		Expect(err).NotTo(HaveOccurred())
		return t
	}
}
