package store

import (
	"context"
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// storeSnapshot assembles a snapshot from an event-fed store, failing the test on error.
func storeSnapshot(t *testing.T, s *Store) (*model.Snapshot, []Problem) {
	t.Helper()
	snapshot, problems, err := (&Builder{Store: s}).Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return snapshot, problems
}

func podNames(job *model.JobInfo) []string {
	var names []string
	for _, p := range job.Pods {
		names = append(names, p.Name+"="+p.Status.String())
	}
	return names
}

// The events an informer delivers, in the orders it may deliver them, leave the store showing
// the cluster as it is: a pod recreated under its name replaces its predecessor even when the
// predecessor's delete arrives late; a pod bound and then running moves with its events; a
// PodGroup deleted before its pods leaves them charged to their node and reported; a changed
// priority class reprioritises jobs that did not change; a tombstone deletes.
func TestStoreFollowsInformerEvents(t *testing.T) {
	s := New("kai-scheduler", scheduling.NodePool{})
	h := s.Handler()
	group := builders.MakePodGroup("ns", "job").Queue("q").PriorityClass("train").Obj()
	h.OnAdd(builders.MakeNode("n1").GPUs(8).Obj(), true)
	h.OnAdd(&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "train"}, Value: 50}, true)
	h.OnAdd(group, true)
	b := pod("b").Obj()
	a := pod("a").Obj()
	h.OnAdd(b, false)
	h.OnAdd(a, false)

	snapshot, problems := storeSnapshot(t, s)
	job := snapshot.Job("ns/job")
	if got := podNames(job); len(got) != 2 || got[0] != "a=Pending" || got[1] != "b=Pending" || len(problems) != 0 {
		t.Fatalf("pods %v (problems %v), want a and b pending, in name order", got, problems)
	}
	if !job.Preemptible || job.Priority != 50 {
		t.Fatalf("job priority %d preemptible %v, want 50 and preemptible", job.Priority, job.Preemptible)
	}

	bound := a.DeepCopy()
	bound.Spec.NodeName = "n1"
	h.OnUpdate(a, bound)
	running := bound.DeepCopy()
	running.Status.Phase = v1.PodRunning
	h.OnUpdate(bound, running)
	h.OnUpdate(&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "train"}, Value: 50},
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "train"}, Value: 125})

	// b is evicted and recreated under its name; the predecessor's delete arrives after.
	successor := pod("b").UID("uid-b-2").Obj()
	h.OnAdd(successor, false)
	h.OnDelete(b)

	snapshot, _ = storeSnapshot(t, s)
	job = snapshot.Job("ns/job")
	if got := podNames(job); len(got) != 2 || got[0] != "a=Running" || got[1] != "b=Pending" || job.Pods[1].UID != "uid-b-2" {
		t.Fatalf("pods %v, want a running and b's successor pending", got)
	}
	if job.Preemptible || job.Priority != 125 {
		t.Fatalf("after the class changed: priority %d preemptible %v, want 125 and not preemptible", job.Priority, job.Preemptible)
	}
	if used := snapshot.Node("n1").Used.Get(model.GPU) / model.MilliGPU; used != 1 {
		t.Fatalf("n1 uses %d GPUs, want a's 1", used)
	}

	h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "ns/job", Obj: group})
	snapshot, problems = storeSnapshot(t, s)
	if snapshot.Job("ns/job") != nil || len(problems) != 2 || problems[0].Reason != "PodGroupNotFound" {
		t.Fatalf("after the PodGroup's tombstone: job %v, problems %v; want no job and both pods reported", snapshot.Job("ns/job"), problems)
	}
	if used := snapshot.Node("n1").Used.Get(model.GPU) / model.MilliGPU; used != 1 {
		t.Fatalf("an orphaned running pod still uses its GPU: n1 uses %d, want 1", used)
	}

	h.OnDelete(running)
	h.OnDelete(successor)
	snapshot, problems = storeSnapshot(t, s)
	if len(problems) != 0 || snapshot.Node("n1").Used.Get(model.GPU) != 0 || len(s.jobs) != 0 || len(s.byUID) != 0 {
		t.Fatalf("after every pod left: problems %v, n1 %s, %d job entries, %d pods by UID; want nothing left",
			problems, snapshot.Node("n1").Used, len(s.jobs), len(s.byUID))
	}
}

// Each snapshot gets its own objects: what a session changes in one never shows in the next.
func TestStoreSnapshotsDoNotShareState(t *testing.T) {
	s := New("kai-scheduler", scheduling.NodePool{})
	s.Upsert(builders.MakeNode("n1").GPUs(8).Obj())
	s.Upsert(job("job", 1))
	s.Upsert(pod("p").Obj())
	first, _ := storeSnapshot(t, s)
	if err := first.SetPodStatus(first.Job("ns/job").Pods[0], model.Allocated, "n1"); err != nil {
		t.Fatal(err)
	}
	second, _ := storeSnapshot(t, s)
	if p := second.Job("ns/job").Pods[0]; p.Status != model.Pending || second.Node("n1").Used.Get(model.GPU) != 0 {
		t.Fatalf("the next snapshot shows the last session's allocation: pod %s, n1 uses %s", p.Status, second.Node("n1").Used)
	}
}

// Equal clusters give equal snapshots whatever order the store met their objects in: the
// host ports of other schedulers' pods are listed in one order, and a PodGroup's late delete
// (after it was recreated) leaves its successor.
func TestStoreSnapshotsDoNotDependOnEventOrder(t *testing.T) {
	var ports [][]int32
	for _, order := range [][]string{{"a", "b", "c"}, {"c", "b", "a"}, {"b", "c", "a"}} {
		s := New("kai-scheduler", scheduling.NodePool{})
		s.Upsert(builders.MakeNode("n1").GPUs(8).Obj())
		for _, name := range order {
			s.Upsert(foreignPod(name).HostPort(80, map[string]int32{"a": 9000, "b": 8080, "c": 8443}[name]).Obj())
		}
		snapshot, _ := storeSnapshot(t, s)
		var got []int32
		for _, p := range snapshot.Node("n1").OtherPorts {
			got = append(got, p.Port)
		}
		ports = append(ports, got)
	}
	for _, got := range ports[1:] {
		if !reflect.DeepEqual(got, ports[0]) || len(got) != 3 {
			t.Fatalf("host ports %v and %v for the same pods met in other orders", ports[0], got)
		}
	}

	s := New("kai-scheduler", scheduling.NodePool{})
	old := builders.MakePodGroup("ns", "job").UID("first").Queue("q").Obj()
	successor := old.DeepCopy()
	successor.UID = "second"
	s.Upsert(successor)
	s.Delete(old)
	if snapshot, _ := storeSnapshot(t, s); snapshot.Job("ns/job") == nil {
		t.Fatal("the predecessor's late delete removed the recreated PodGroup")
	}
}

// A Builder that lists keeps its store equal to the lists: what was deleted between two
// snapshots is gone from the second, and a pod whose PodGroup was deleted is reported.
func TestListingBuilderForgetsDeletedObjects(t *testing.T) {
	ctx := context.Background()
	group := job("job", 1)
	gone := pod("gone").Obj()
	kept := pod("kept").Obj()
	n2 := builders.MakeNode("n2").GPUs(8).Obj()
	c := fake.NewClientBuilder().WithScheme(testScheme()).
		WithObjects(builders.MakeNode("n1").GPUs(8).Obj(), n2, group, gone, kept,
			&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "train"}, Value: 50}).Build()
	b := &Builder{Reader: c, SchedulerName: "kai-scheduler"}
	if snapshot, _, err := b.Snapshot(ctx); err != nil || len(snapshot.Nodes) != 2 || len(snapshot.Job("ns/job").Pods) != 2 {
		t.Fatalf("first snapshot: %v", err)
	}
	for _, obj := range []client.Object{n2, gone, group} {
		if err := c.Delete(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	snapshot, problems, err := b.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(snapshot.Nodes) != 1 || snapshot.Job("ns/job") != nil || len(b.Store.pods) != 1 || len(b.Store.priorities) != 1 {
		t.Fatalf("after deletes: %d nodes, job %v, %d pods and %d priority classes in the store; want 1, none, 1, 1",
			len(snapshot.Nodes), snapshot.Job("ns/job"), len(b.Store.pods), len(b.Store.priorities))
	}
	if len(problems) != 1 || problems[0].Reason != "PodGroupNotFound" || problems[0].Object.GetName() != "kept" {
		t.Fatalf("problems %v, want the kept pod's PodGroupNotFound", problems)
	}
}

// A store serving a node pool keeps only the pool's nodes, queues and PodGroups, following
// relabels both ways; the pods of another pool's job are neither scheduled nor reported as
// orphans, but still use a node of this pool they stand on.
func TestStoreKeepsOnlyItsNodePool(t *testing.T) {
	pool := scheduling.NodePool{LabelKey: scheduling.NodePoolLabel, Name: "a100"}
	inPool := func() map[string]string { return map[string]string{scheduling.NodePoolLabel: "a100"} }
	s := New("kai-scheduler", pool)
	h := s.Handler()
	mine, theirs := builders.MakeNode("mine").GPUs(8).NodePool("a100").Obj(), builders.MakeNode("theirs").GPUs(8).NodePool("h100").Obj()
	h.OnAdd(mine, true)
	h.OnAdd(theirs, true)
	h.OnAdd(builders.MakeQueue("q").NodePool("a100").Obj(), true)
	h.OnAdd(builders.MakeQueue("unlabelled").Obj(), true)
	group := builders.MakePodGroup("ns", "job").UID("uid-job").NodePool("h100").Queue("q").Obj()
	h.OnAdd(group, true)
	// One pod of the other pool's job was bound, by hand, onto this pool's node.
	h.OnAdd(pod("a").Node("mine").Obj(), false)
	h.OnAdd(pod("b").Obj(), false)

	snapshot, problems := storeSnapshot(t, s)
	if len(snapshot.Nodes) != 1 || snapshot.Node("mine") == nil {
		t.Fatalf("nodes %v, want only the pool's node", snapshot.Nodes)
	}
	if snapshot.Queues.Get("q") == nil || snapshot.Queues.Get("unlabelled") != nil {
		t.Fatal("want only the pool's queue")
	}
	if snapshot.Job("ns/job") != nil || len(problems) != 0 {
		t.Fatalf("job %v, problems %v: another pool's job is neither scheduled nor an orphan", snapshot.Job("ns/job"), problems)
	}
	if used := snapshot.Node("mine").Used.Get(model.GPU) / model.MilliGPU; used != 1 {
		t.Fatalf("the pool's node uses %d GPUs, want the 1 of the pod standing on it", used)
	}

	// Relabelled: the PodGroup joins the pool, the other node too; this pool's node leaves.
	moved := group.DeepCopy()
	moved.Labels = inPool()
	h.OnUpdate(group, moved)
	joined := theirs.DeepCopy()
	joined.Labels = inPool()
	h.OnUpdate(theirs, joined)
	left := mine.DeepCopy()
	left.Labels = nil
	h.OnUpdate(mine, left)
	snapshot, problems = storeSnapshot(t, s)
	// a stands on the node that left the pool: a job of this pool on a node it cannot see,
	// reported; b is the job's pending pod.
	if job := snapshot.Job("ns/job"); job == nil || len(job.Pods) != 1 || job.Pods[0].Name != "b" {
		t.Fatalf("job %v: the relabelled PodGroup is this pool's job, with b pending", job)
	}
	if len(problems) != 1 || problems[0].Reason != "UnknownNode" || problems[0].Object.GetName() != "a" {
		t.Fatalf("problems %v, want pod a reported on a node outside the pool", problems)
	}
	if len(snapshot.Nodes) != 1 || snapshot.Node("theirs") == nil {
		t.Fatalf("nodes %v, want only the node relabelled into the pool", snapshot.Nodes)
	}

	// Moved back out, and recreated there: the predecessor's late delete spares the
	// successor, whose pods stay another pool's, not orphans.
	h.OnUpdate(moved, group)
	successor := group.DeepCopy()
	successor.UID = "uid-job-2"
	h.OnAdd(successor, false)
	h.OnDelete(group)
	if _, problems = storeSnapshot(t, s); len(problems) != 0 {
		t.Fatalf("problems %v: the recreated PodGroup's pods are another pool's", problems)
	}
	group = successor

	// Deleted: nothing of the job remains once its pods are gone.
	h.OnDelete(group)
	h.OnDelete(pod("a").Obj())
	h.OnDelete(pod("b").Obj())
	if _, problems = storeSnapshot(t, s); len(problems) != 0 || len(s.jobs) != 0 {
		t.Fatalf("problems %v, %d job entries; want nothing left", problems, len(s.jobs))
	}
}

// The store tells the loop of the changes that may let a waiting job move, and only of those:
// a cluster busy starting pods must not make the scheduler cycle on every status update.
func TestStoreTellsOfChangesThatMayLetAJobMove(t *testing.T) {
	s := New("kai-scheduler", scheduling.NodePool{})
	h := s.Handler()
	told := func() bool {
		select {
		case <-s.Changes():
			return true
		default:
			return false
		}
	}
	waiting := pod("p").Obj()
	bound := pod("p").Node("n1").Obj()
	running := pod("p").Node("n1").Phase(v1.PodRunning).Obj()
	marked := pod("p").Condition(v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionFalse}).Obj()
	finished := pod("p").Node("n1").Phase(v1.PodSucceeded).Obj()
	gated := pod("g").SchedulingGate("example.com/quota").Obj()
	ungated := pod("g").Obj()
	node := builders.MakeNode("n1").GPUs(8).Obj()
	heartbeat := node.DeepCopy()
	heartbeat.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, LastHeartbeatTime: metav1.Now()}}
	cordoned := heartbeat.DeepCopy()
	cordoned.Spec.Unschedulable = true
	group := builders.MakePodGroup("ns", "job").UID("g").Generation(1).Queue("q").Obj()
	stamped := group.DeepCopy()
	stamped.Annotations = map[string]string{scheduling.LastStartTimestampAnnotation: "2026-01-01T00:00:00Z"}
	stamped.Status.MinRuntime = &v2alpha2.MinRuntimeStatus{}
	respecced := stamped.DeepCopy()
	respecced.Generation, respecced.Spec.MinMember = 2, 2
	queue := builders.MakeQueue("q").Generation(1).Obj()
	allocated := queue.DeepCopy()
	allocated.Status.Allocated = v1.ResourceList{model.GPUResourceName: resource.MustParse("1")}
	requota := allocated.DeepCopy()
	requota.Generation = 2
	// Escalation is set by annotations, which do not move the generation.
	escalated := requota.DeepCopy()
	escalated.Annotations = map[string]string{scheduling.EscalationFactorAnnotation: "2"}
	reallocated := escalated.DeepCopy()
	reallocated.Status.Allocated = v1.ResourceList{model.GPUResourceName: resource.MustParse("2")}
	refactored := reallocated.DeepCopy()
	refactored.Annotations = map[string]string{scheduling.EscalationFactorAnnotation: "3"}
	ceilinged := refactored.DeepCopy()
	ceilinged.Annotations[scheduling.EscalationCeilingAnnotation] = "10m"
	for _, step := range []struct {
		what string
		do   func()
		tell bool
	}{
		{"a node is added", func() { h.OnAdd(node, false) }, true},
		{"the node's heartbeat", func() { h.OnUpdate(node, heartbeat) }, false},
		{"the node is cordoned", func() { h.OnUpdate(heartbeat, cordoned) }, true},
		{"a queue is added", func() { h.OnAdd(queue, false) }, true},
		{"the queue's allocation is written", func() { h.OnUpdate(queue, allocated) }, false},
		{"the queue's spec changes", func() { h.OnUpdate(allocated, requota) }, true},
		{"the queue's escalation factor is set", func() { h.OnUpdate(requota, escalated) }, true},
		{"the escalated queue's allocation is written", func() { h.OnUpdate(escalated, reallocated) }, false},
		{"the queue's escalation factor changes", func() { h.OnUpdate(reallocated, refactored) }, true},
		{"the queue's escalation ceiling is set", func() { h.OnUpdate(refactored, ceilinged) }, true},
		{"a job is created", func() { h.OnAdd(group, false) }, true},
		{"the job's start stamp and protection are written", func() { h.OnUpdate(group, stamped) }, false},
		{"the job's spec changes", func() { h.OnUpdate(stamped, respecced) }, true},
		{"a job's pod waits", func() { h.OnAdd(waiting, false) }, true},
		{"the waiting pod is told why it waits", func() { h.OnUpdate(waiting, marked) }, false},
		{"the pod is bound", func() { h.OnUpdate(marked, bound) }, false},
		{"the pod runs", func() { h.OnUpdate(bound, running) }, false},
		{"the pod finishes", func() { h.OnUpdate(running, finished) }, true},
		{"the pod is deleted", func() { h.OnDelete(finished) }, true},
		{"a pod held back by a scheduling gate is created", func() { h.OnAdd(gated, false) }, false},
		{"its gate is lifted", func() { h.OnUpdate(gated, ungated) }, true},
	} {
		told() // drain
		step.do()
		if got := told(); got != step.tell {
			t.Errorf("%s: told = %v, want %v", step.what, got, step.tell)
		}
	}
}

// A reservation pod (GPU sharing on the node) holds the device its shares are on: counted
// once, by the shares' group, while a share holds it; once none does, it still holds a whole
// device, for the kubelet as for the scheduler, until it is collected: releasing.
func TestReservationPodsHoldTheirDeviceOnce(t *testing.T) {
	s := New("kai-scheduler", scheduling.NodePool{})
	h := s.Handler()
	h.OnAdd(builders.MakeNode("n1").GPUs(8).Obj(), true)
	share := builders.MakePod("team", "infer").SchedulerName("other").Node("n1").Phase(v1.PodRunning).Obj()
	share.Annotations = map[string]string{scheduling.GPUFractionAnnotation: "0.5"}
	share.Labels = map[string]string{scheduling.GPUGroupLabel: "g1"}
	h.OnAdd(share, true)
	reservation := func(group string) *v1.Pod {
		p := builders.MakePod(scheduling.ReservationNamespace, "gpu-reservation-"+group).Node("n1").GPUs(1).
			Request(v1.ResourceCPU, "10m").Phase(v1.PodRunning).Obj()
		p.Labels = map[string]string{scheduling.ReservationAppLabel: scheduling.ReservationApp, scheduling.GPUGroupLabel: group}
		return p
	}
	h.OnAdd(reservation("g1"), true)
	usedGPUs := func() int64 {
		snapshot, _ := storeSnapshot(t, s)
		return snapshot.Node("n1").Used.Get(model.GPU) / model.MilliGPU
	}
	if got := usedGPUs(); got != 1 {
		t.Fatalf("a share's device and its reservation hold %d GPUs, want 1: the device, once", got)
	}
	snapshot, _ := storeSnapshot(t, s)
	if cpu := snapshot.Node("n1").Used.Get(model.CPU); cpu != 10 {
		t.Fatalf("node n1 has %d mCPU used, want the reservation's 10: what it asks beside the GPU is its own", cpu)
	}
	h.OnAdd(reservation("g2"), true)
	snapshot, _ = storeSnapshot(t, s)
	if used, releasing := snapshot.Node("n1").Used.Get(model.GPU), snapshot.Node("n1").Releasing.Get(model.GPU); used != model.MilliGPU || releasing != model.MilliGPU {
		t.Fatalf("with a reservation no share holds, %dm GPUs used and %dm releasing, want %dm each: its device is not free, "+
			"but going with it once collected", used, releasing, model.MilliGPU)
	}
}

// While a share's bind is being written, its reservation pod exists before the share carries
// its group's label: the device is counted once, by the group the overlay says it is bound to.
func TestAReservationOfAShareBeingBoundCountsItsDeviceOnce(t *testing.T) {
	s := New("kai-scheduler", scheduling.NodePool{})
	h := s.Handler()
	h.OnAdd(builders.MakeNode("n1").GPUs(2).Obj(), true)
	h.OnAdd(builders.MakePodGroup("team", "infer").Queue("q").Obj(), true)
	share := builders.MakePod("team", "infer-0").UID("share-uid").PodGroup("infer").
		Annotation(scheduling.GPUFractionAnnotation, "0.5").Obj()
	h.OnAdd(share, true)
	r := builders.MakePod(scheduling.ReservationNamespace, "gpu-reservation-g1").Node("n1").GPUs(1).Obj()
	r.Labels = map[string]string{scheduling.ReservationAppLabel: scheduling.ReservationApp, scheduling.GPUGroupLabel: "g1"}
	h.OnAdd(r, true)
	overlay := NewOverlay(clocktesting.NewFakePassiveClock(time.Now()))
	overlay.BindQueued("share-uid", "n1", []string{"g1"})
	snapshot, _, err := (&Builder{Store: s, Overlay: overlay}).Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := snapshot.Node("n1").Used.Get(model.GPU); got != model.MilliGPU {
		t.Fatalf("node n1 has %dm GPUs used, want %dm: the share's device, once", got, model.MilliGPU)
	}
}
