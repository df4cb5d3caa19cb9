package cache

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
)

func pod(name string, mutate func(*v1.Pod)) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name),
			Annotations: map[string]string{scheduling.PodGroupNameAnnotation: "job"}},
		Spec: v1.PodSpec{SchedulerName: "kai-scheduler", Containers: []v1.Container{{Name: "c",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{api.GPUResourceName: resource.MustParse("1")}}}}},
	}
	if mutate != nil {
		mutate(p)
	}
	return p
}

func TestSnapshotLeavesGatedPodsAndCountsOthersTerminatingAsReleasing(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = install.AddToScheme(scheme)
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{api.GPUResourceName: resource.MustParse("8")}}}
	group := &v2alpha2.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job"}, Spec: v2alpha2.PodGroupSpec{MinMember: 2, Queue: "q"}}
	ready := pod("ready", nil)
	gated := pod("gated", func(p *v1.Pod) { p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/quota"}} })
	now := metav1.Now()
	foreign := pod("foreign", func(p *v1.Pod) {
		p.Spec.SchedulerName, p.Spec.NodeName, p.Annotations = "default-scheduler", "n1", nil
		p.DeletionTimestamp, p.Finalizers = &now, []string{"example.com/keep"}
	})
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(node, group, ready, gated, foreign).Build()

	snapshot, problems, err := (&Builder{Reader: c, SchedulerName: "kai-scheduler"}).Snapshot(context.Background())
	if err != nil || len(problems) != 0 {
		t.Fatalf("snapshot: %v %v", err, problems)
	}
	job := snapshot.Job("ns/job")
	if len(job.Pods) != 1 || job.Pods[0].Name != "ready" {
		t.Fatalf("a gated pod cannot be bound and must not be scheduled: pods %v", job.Pods)
	}
	if got := snapshot.Node("n1").Releasing[api.GPU]; got != 1 {
		t.Fatalf("another scheduler's terminating pod releases its GPU, got releasing %d", got)
	}
	if !job.MarkUnschedulable {
		t.Error("markUnschedulable defaults to true")
	}
}
