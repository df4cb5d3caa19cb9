package cache

import (
	"context"
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
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

func testScheme() *runtime.Scheme {
	scheme, _ := install.Scheme() // registering fixed types cannot fail
	return scheme
}

func gpuNode(name string, gpus int64) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{api.GPUResourceName: *resource.NewQuantity(gpus, resource.DecimalSI)}}}
}

func TestSnapshotLeavesGatedPodsAndCountsOthersTerminatingAsReleasing(t *testing.T) {
	scheme, node := testScheme(), gpuNode("n1", 8)
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
	if got := snapshot.Node("n1").Releasing.Get(api.GPU); got != 1 {
		t.Fatalf("another scheduler's terminating pod releases its GPU, got releasing %d", got)
	}
	if !job.MarkUnschedulable {
		t.Error("markUnschedulable defaults to true")
	}
}

// A pending pod's nominated node is a promise made in an earlier cycle: it must come back as
// a pipelined pod holding its resources there, from the API or, while the informer lags, from
// the scheduler's own write; a promise to a node that no longer exists is no promise.
func TestSnapshotKeepsNominatedNodesAsPromises(t *testing.T) {
	scheme, node := testScheme(), gpuNode("n1", 8)
	group := &v2alpha2.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job"}, Spec: v2alpha2.PodGroupSpec{MinMember: 4, Queue: "q"}}
	fromAPI := pod("from-api", func(p *v1.Pod) { p.Status.NominatedNodeName = "n1" })
	gone := pod("gone-node", func(p *v1.Pod) { p.Status.NominatedNodeName = "deleted-node" })
	lagging := pod("lagging", nil)
	withdrawn := pod("withdrawn", func(p *v1.Pod) { p.Status.NominatedNodeName = "n1" })
	// A victim still terminating after a restart: the condition the scheduler wrote says for
	// whom, so what it releases stays that job's.
	victim := pod("victim", func(p *v1.Pod) {
		p.Annotations = nil
		p.Spec.NodeName = "n1"
		p.Finalizers = []string{"example.com/hold"}
		p.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		p.Status.Conditions = []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue,
			Message: framework.NewEvictionReason(framework.Reclaim, "ns/job").Message}}
	})
	victimGroup := &v2alpha2.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "victim-job"}, Spec: v2alpha2.PodGroupSpec{MinMember: 1, Queue: "q"}}
	victim.Annotations = map[string]string{scheduling.PodGroupNameAnnotation: "victim-job"}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(node, group, victimGroup, fromAPI, gone, lagging, withdrawn, victim).Build()
	overlay := NewOverlay(time.Now)
	overlay.Nominated(lagging.UID, "n1")
	overlay.Nominated(withdrawn.UID, "")

	snapshot, problems, err := (&Builder{Reader: c, SchedulerName: "kai-scheduler", Overlay: overlay}).Snapshot(context.Background())
	if err != nil || len(problems) != 0 {
		t.Fatalf("snapshot: %v %v", err, problems)
	}
	got := map[string]string{}
	for _, p := range snapshot.Job("ns/job").Pods {
		got[p.Name] = p.Status.String() + "@" + p.NodeName
	}
	want := map[string]string{"from-api": "Pipelined@n1", "gone-node": "Pending@", "lagging": "Pipelined@n1", "withdrawn": "Pending@"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("pods %v, want %v", got, want)
	}
	if promised := snapshot.Node("n1").Pipelined.Get(api.GPU); promised != 2 {
		t.Fatalf("n1 holds %d promised GPUs, want 2", promised)
	}
	releasing := snapshot.Job("ns/victim-job").Pods[0]
	if releasing.Status != api.Releasing || releasing.EvictedFor != "ns/job" {
		t.Fatalf("victim is %s evicted for %q, want releasing for ns/job", releasing.Status, releasing.EvictedFor)
	}
	// 8 GPUs: 1 releasing for ns/job, which covers 1 of its 2 promised; 7 idle less 1.
	if free := snapshot.Node("n1").Bindable().Get(api.GPU); free != 6 {
		t.Fatalf("n1 can bind %d GPUs for others, want 6", free)
	}
}

// Objects the API server would refuse never corrupt the accounting: a pod requesting a
// negative amount is reported and not scheduled, a node reporting a negative allocatable is
// reported and offers none of it, and a pod of another scheduler holding host ports keeps
// them taken.
func TestSnapshotReportsImpossibleQuantitiesAndKeepsForeignPorts(t *testing.T) {
	node := gpuNode("n1", 8)
	node.Status.Allocatable["example.com/fpga"] = resource.MustParse("-1")
	group := &v2alpha2.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job"}, Spec: v2alpha2.PodGroupSpec{MinMember: 1, Queue: "q"}}
	negative := pod("negative", func(p *v1.Pod) {
		p.Spec.Containers[0].Resources.Requests[api.GPUResourceName] = resource.MustParse("-4")
	})
	foreign := pod("foreign", func(p *v1.Pod) {
		p.Spec.SchedulerName, p.Spec.NodeName, p.Annotations = "default-scheduler", "n1", nil
		p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
	})
	c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(node, group, negative, foreign).Build()
	snapshot, problems, err := (&Builder{Reader: c, SchedulerName: "kai-scheduler"}).Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, p := range problems {
		reasons[p.Object.GetName()] = p.Reason
	}
	if reasons["negative"] != "InvalidRequest" || reasons["n1"] != "InvalidAllocatable" {
		t.Fatalf("problems %v, want the pod's InvalidRequest and the node's InvalidAllocatable", reasons)
	}
	if pods := snapshot.Job("ns/job").Pods; len(pods) != 0 {
		t.Fatalf("the pod with a negative request is schedulable: %v", pods)
	}
	n1 := snapshot.Node("n1")
	if got := n1.Allocatable.Amount("example.com/fpga"); got != 0 {
		t.Fatalf("negative allocatable counted as %d, want 0", got)
	}
	if got := n1.Used.Get(api.Pods); got != 1 {
		t.Fatalf("the foreign pod takes %d pod slots, want 1", got)
	}
	if len(n1.OtherPorts) != 1 || n1.OtherPorts[0].Port != 8080 {
		t.Fatalf("foreign host ports %v, want 8080", n1.OtherPorts)
	}
}

// On API servers that keep no pod generation (before Kubernetes 1.33), a toleration added
// to a pending pod still reaches the snapshot: the pod's resource version says it changed.
func TestPodSpecChangesAreSeenWithoutAGeneration(t *testing.T) {
	group := &v2alpha2.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job"}, Spec: v2alpha2.PodGroupSpec{MinMember: 1, Queue: "q"}}
	p := pod("p", nil)
	c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(gpuNode("n1", 8), group, p).Build()
	b := &Builder{Reader: c, SchedulerName: "kai-scheduler"}
	placement := func() *api.Placement {
		snapshot, _, err := b.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return snapshot.Job("ns/job").Pods[0].Placement
	}
	if placement() != nil {
		t.Fatal("a pod without constraints has no placement")
	}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(p), p); err != nil {
		t.Fatal(err)
	}
	p.Spec.Tolerations = []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpExists}}
	if err := c.Update(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if got := placement(); got == nil || len(got.Tolerations) != 1 || p.Generation != 0 {
		t.Fatalf("placement %+v after the toleration was added (generation %d)", got, p.Generation)
	}
}
