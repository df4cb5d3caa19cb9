package store

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// pod is a pending one-GPU pod of ns/job.
func pod(name string) *builders.PodWrapper {
	return builders.MakePod("ns", name).UID("uid-" + name).PodGroup("job").GPUs(1)
}

// foreignPod is a one-GPU pod of another scheduler on n1.
func foreignPod(name string) *builders.PodWrapper {
	return builders.MakePod("ns", name).UID("uid-" + name).SchedulerName("default-scheduler").Node("n1").GPUs(1)
}

// job is the PodGroup ns/name in queue q.
func job(name string, minMember int32) *v2alpha2.PodGroup {
	return builders.MakePodGroup("ns", name).Queue("q").MinMember(minMember).Obj()
}

func testScheme() *runtime.Scheme {
	scheme, _ := install.Scheme() // registering fixed types cannot fail
	return scheme
}

func TestSnapshotLeavesGatedPodsAndCountsOthersTerminatingAsReleasing(t *testing.T) {
	scheme, node := testScheme(), builders.MakeNode("n1").GPUs(8).Obj()
	ready := pod("ready").Obj()
	gated := pod("gated").SchedulingGate("example.com/quota").Obj()
	foreign := foreignPod("foreign").DeletedAt(time.Now()).Finalizer("example.com/keep").Obj()
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(node, job("job", 2), ready, gated, foreign).Build()

	snapshot, problems, err := (&Builder{Reader: c, SchedulerName: "kai-scheduler"}).Snapshot(context.Background())
	if err != nil || len(problems) != 0 {
		t.Fatalf("snapshot: %v %v", err, problems)
	}
	job := snapshot.Job("ns/job")
	if len(job.Pods) != 1 || job.Pods[0].Name != "ready" {
		t.Fatalf("a gated pod cannot be bound and must not be scheduled: pods %v", job.Pods)
	}
	if got := snapshot.Node("n1").Releasing.Get(model.GPU); got != model.MilliGPU {
		t.Fatalf("another scheduler's terminating pod releases its GPU, got releasing %d", got)
	}
	if !job.MarkUnschedulable {
		t.Error("markUnschedulable defaults to true")
	}
}

// A pending pod's nominated node is a promise made in an earlier cycle: it must come back as
// a pipelined pod holding its resources there, from the API or, while the informer lags, from
// the scheduler's own write, with when it was promised (its Promised condition, or the write);
// a promise to a node that no longer exists is no promise.
func TestSnapshotKeepsNominatedNodesAsPromises(t *testing.T) {
	scheme, node := testScheme(), builders.MakeNode("n1").GPUs(8).Obj()
	promised, written := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 12, 0, 5, 0, time.UTC)
	fromAPI := pod("from-api").NominatedNode("n1").Condition(v1.PodCondition{Type: scheduling.PromisedCondition, Status: v1.ConditionTrue,
		LastTransitionTime: metav1.NewTime(promised)}).Obj()
	gone := pod("gone-node").NominatedNode("deleted-node").Obj()
	lagging := pod("lagging").Obj()
	withdrawn := pod("withdrawn").NominatedNode("n1").Obj()
	// A victim still terminating after a restart: the condition the scheduler wrote says for
	// whom, so what it releases stays that job's.
	victim := pod("victim").PodGroup("victim-job").Node("n1").Finalizer("example.com/hold").DeletedAt(time.Now()).
		Condition(v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue,
			Message: framework.NewEvictionReason(framework.Reclaim, "ns/job").Message}).Obj()
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(node, job("job", 4), job("victim-job", 1), fromAPI, gone, lagging, withdrawn, victim).Build()
	overlay := NewOverlay(clock.RealClock{})
	overlay.Nominated(lagging.UID, "n1", written, nil)
	overlay.Nominated(withdrawn.UID, "", time.Time{}, nil)

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
	if promised := snapshot.Node("n1").Pipelined.Get(model.GPU) / model.MilliGPU; promised != 2 {
		t.Fatalf("n1 holds %d promised GPUs, want 2", promised)
	}
	for _, p := range snapshot.Job("ns/job").Pods {
		if want := map[string]int64{"from-api": promised.Unix(), "lagging": written.Unix()}[p.Name]; p.PromisedAt != want {
			t.Errorf("%s promised at %v, want %v", p.Name, p.PromisedAt, want)
		}
	}
	releasing := snapshot.Job("ns/victim-job").Pods[0]
	if releasing.Status != model.Releasing || releasing.EvictedFor != "ns/job" {
		t.Fatalf("victim is %s evicted for %q, want releasing for ns/job", releasing.Status, releasing.EvictedFor)
	}
	// 8 GPUs: 1 releasing for ns/job, which covers 1 of its 2 promised; 7 idle less 1.
	if free := snapshot.Node("n1").Bindable().Get(model.GPU) / model.MilliGPU; free != 6 {
		t.Fatalf("n1 can bind %d GPUs for others, want 6", free)
	}
}

// Objects the API server would refuse never corrupt the accounting: a pod requesting a
// negative amount is reported and not scheduled, a node reporting a negative allocatable is
// reported and offers none of it, and a pod of another scheduler holding host ports keeps
// them taken.
func TestSnapshotReportsImpossibleQuantitiesAndKeepsForeignPorts(t *testing.T) {
	node := builders.MakeNode("n1").GPUs(8).Allocatable("example.com/fpga", "-1").Obj()
	negative := pod("negative").Request(model.GPUResourceName, "-4").Obj()
	foreign := foreignPod("foreign").HostPort(80, 8080).Obj()
	c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(node, job("job", 1), negative, foreign).Build()
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
	if got := n1.Used.Get(model.Pods); got != 1 {
		t.Fatalf("the foreign pod takes %d pod slots, want 1", got)
	}
	if len(n1.OtherPorts) != 1 || n1.OtherPorts[0].Port != 8080 {
		t.Fatalf("foreign host ports %v, want 8080", n1.OtherPorts)
	}
}

// On API servers that keep no pod generation (before Kubernetes 1.33), a toleration added
// to a pending pod still reaches the snapshot: the pod's resource version says it changed.
func TestPodSpecChangesAreSeenWithoutAGeneration(t *testing.T) {
	p := pod("p").Obj()
	c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(builders.MakeNode("n1").GPUs(8).Obj(), job("job", 1), p).Build()
	b := &Builder{Reader: c, SchedulerName: "kai-scheduler"}
	placement := func() *model.Placement {
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

// The staleness grace period comes from the PodGroup's field, else its annotation, else a
// pod's annotation; a bad annotation is reported naming it, and the job keeps the default.
// A failed pod's end and the succeeded pods are what stalegangeviction reads of finished pods.
func TestSnapshotReadsStalenessSettings(t *testing.T) {
	grace := scheduling.StalenessGracePeriodAnnotation
	failedAt := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	failed := pod("failed").PodGroup("field").Phase(v1.PodFailed).Obj()
	failed.Status.ContainerStatuses = []v1.ContainerStatus{{State: v1.ContainerState{
		Terminated: &v1.ContainerStateTerminated{FinishedAt: metav1.NewTime(failedAt)}}}}
	objects := []client.Object{
		builders.MakeNode("n1").GPUs(8).Obj(),
		builders.MakePodGroup("ns", "field").Queue("q").MinMember(2).StalenessGracePeriod(3*time.Second).Annotation(grace, "1m").Obj(),
		builders.MakePodGroup("ns", "annotated").Queue("q").MinMember(2).Annotation(grace, "90s").Obj(),
		builders.MakePodGroup("ns", "bad").Queue("q").MinMember(2).Annotation(grace, "soon").Obj(),
		builders.MakePodGroup("ns", "by-pod").Queue("q").MinMember(2).Obj(),
		builders.MakePodGroup("ns", "unset").Queue("q").MinMember(2).Obj(),
		pod("p-field").PodGroup("field").Obj(), failed,
		pod("p-succeeded").PodGroup("field").Phase(v1.PodSucceeded).Obj(),
		pod("p-annotated").PodGroup("annotated").Obj(), pod("p-bad").PodGroup("bad").Obj(),
		pod("p-by-pod").PodGroup("by-pod").Annotation(grace, "45s").Obj(), pod("p-unset").PodGroup("unset").Obj(),
	}
	c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(objects...).Build()
	snapshot, problems, err := (&Builder{Reader: c, SchedulerName: "kai-scheduler"}).Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]time.Duration{"field": 3 * time.Second, "annotated": 90 * time.Second, "by-pod": 45 * time.Second} {
		if got := snapshot.Job(model.NewJobID("ns", name)).StalenessGracePeriod; got == nil || *got != want {
			t.Errorf("%s: grace period %v, want %v", name, got, want)
		}
	}
	for _, name := range []string{"bad", "unset"} {
		if got := snapshot.Job(model.NewJobID("ns", name)).StalenessGracePeriod; got != nil {
			t.Errorf("%s: grace period %v, want none (the configuration's default)", name, *got)
		}
	}
	if len(problems) != 1 || problems[0].Reason != "InvalidStalenessGracePeriod" ||
		!strings.Contains(problems[0].Message, `annotation kai.scheduler/staleness-grace-period: "soon" is not a duration`) {
		t.Errorf("problems %v, want the bad annotation named", problems)
	}
	field := snapshot.Job("ns/field")
	if !field.LastPodFailure.Equal(failedAt) || field.SucceededPods != 1 || len(field.Pods) != 1 {
		t.Errorf("field: failure %v, succeeded %d, pods %d; want %v, 1 and the one live pod", field.LastPodFailure, field.SucceededPods, len(field.Pods), failedAt)
	}
}

// A pod consolidation moved is told apart from one reclaimed, while it terminates: after a
// restart by the condition the scheduler wrote, before the informer shows the deletion by
// the overlay. Its queue keeps its place under limits, and other moves the room it needs.
func TestSnapshotTellsMovedPodsFromTakenOnes(t *testing.T) {
	moved := func(name string) *v1.Pod {
		return pod(name).PodGroup("victim-job").Node("n1").Finalizer("example.com/hold").DeletedAt(time.Now()).
			Condition(v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue,
				Message: framework.NewEvictionReason(framework.Consolidation, "ns/job").Message}).Obj()
	}
	taken := pod("taken").PodGroup("victim-job").Node("n1").Finalizer("example.com/hold").DeletedAt(time.Now()).
		Condition(v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue,
			Message: framework.NewEvictionReason(framework.Reclaim, "ns/job").Message}).Obj()
	lagging := pod("lagging").PodGroup("victim-job").Node("n1").Obj()            // its deletion not seen yet
	laggingTaken := pod("lagging-taken").PodGroup("victim-job").Node("n1").Obj() // nor this one's
	c := fake.NewClientBuilder().WithScheme(testScheme()).
		WithObjects(builders.MakeNode("n1").GPUs(8).Obj(), job("job", 1), job("victim-job", 4), moved("moved"), taken, lagging, laggingTaken).Build()
	overlay := NewOverlay(clock.RealClock{})
	overlay.Evicted(lagging.UID, "ns/job", true)
	overlay.Evicted(laggingTaken.UID, "ns/job", false)

	snapshot, problems, err := (&Builder{Reader: c, SchedulerName: "kai-scheduler", Overlay: overlay}).Snapshot(context.Background())
	if err != nil || len(problems) != 0 {
		t.Fatalf("snapshot: %v %v", err, problems)
	}
	got := map[string]string{}
	for _, p := range snapshot.Job("ns/victim-job").Pods {
		got[p.Name] = fmt.Sprintf("%s for %s moved=%v", p.Status, p.EvictedFor, p.Moved)
	}
	want := map[string]string{
		"moved":         "Releasing for ns/job moved=true",
		"taken":         "Releasing for ns/job moved=false",
		"lagging":       "Releasing for ns/job moved=true",
		"lagging-taken": "Releasing for ns/job moved=false",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("pods %v, want %v", got, want)
	}
}
