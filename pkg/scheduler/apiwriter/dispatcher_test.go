package apiwriter_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/apiwriter"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/metrics"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/status"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/store"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// cluster is a fake API server with one 8-GPU node and a job of n pending pods, whose binds
// go through bind (the fake client has no binding subresource of its own).
func cluster(t *testing.T, n int, bind func(ctx context.Context, c client.Client, pod, node string) error) client.Client {
	t.Helper()
	scheme := clientgoscheme.Scheme
	if err := install.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	objects := []client.Object{
		builders.MakeNode("n1").GPUs(8).MaxPods(110).Obj(),
		builders.MakePodGroup("ns", "job").Queue("q").Obj(),
	}
	for i := range n {
		objects = append(objects, builders.MakePod("ns", fmt.Sprintf("p%d", i)).UID(fmt.Sprint("uid-", i)).PodGroup("job").Obj())
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).WithInterceptorFuncs(interceptor.Funcs{
		SubResourceCreate: func(ctx context.Context, c client.Client, sub string, obj client.Object, subObj client.Object, _ ...client.SubResourceCreateOption) error {
			if sub != "binding" {
				return fmt.Errorf("unexpected subresource %s", sub)
			}
			return bind(ctx, c, obj.GetName(), subObj.(*v1.Binding).Target.Name)
		},
	}).Build()
}

// setNode is what the API server does for a binding.
func setNode(ctx context.Context, c client.Client, name, node string) error {
	pod := &v1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: name}, pod); err != nil {
		return err
	}
	pod.Spec.NodeName = node
	return c.Update(ctx, pod)
}

// statuses reads the pods as the next snapshot will see them.
func statuses(t *testing.T, c client.Client, overlay *store.Overlay) map[string]string {
	t.Helper()
	snapshot, _, err := (&store.Builder{Reader: c, SchedulerName: "kai-scheduler", Overlay: overlay}).Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range snapshot.Job("ns/job").Pods {
		got[p.Name] = p.Status.String() + "@" + p.NodeName
	}
	return got
}

func podInfo(i int) *model.PodInfo {
	return &model.PodInfo{Namespace: "ns", Name: fmt.Sprintf("p%d", i), UID: fmt.Sprint("uid-", i), Job: "ns/job"}
}

// A bind leaves the cycle at once and the next snapshot already sees it; the API call is
// made by a worker, and a call that fails is taken back, so the cycle after it sees the pod
// pending again and places it anew.
func TestDispatchedBindsAreSeenAtOnceAndFailuresTakenBack(t *testing.T) {
	release := make(chan struct{})
	c := cluster(t, 2, func(ctx context.Context, c client.Client, pod, node string) error {
		<-release // the API server is slow: the cycle must not wait for it
		if pod == "p1" {
			return errors.New("injected: the API server refused the binding")
		}
		return setNode(ctx, c, pod, node)
	})
	overlay := store.NewOverlay(clock.RealClock{})
	d := apiwriter.NewDispatcher(&apiwriter.Effects{Client: c, Clock: clock.RealClock{}, Overlay: overlay}, 2)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = d.Start(ctx); close(stopped) }()
	var answer sync.Once // a failing check must not leave the workers blocked forever
	defer func() { answer.Do(func() { close(release) }); cancel(); <-stopped }()

	for i := range 2 {
		if err := d.Bind(ctx, podInfo(i), "n1"); err != nil {
			t.Fatal(err)
		}
	}
	if got := statuses(t, c, overlay); got["p0"] != "Bound@n1" || got["p1"] != "Bound@n1" {
		t.Fatalf("while the binds are in flight the snapshot shows %v, want both bound", got)
	}
	answer.Do(func() { close(release) })
	d.Wait()
	if got := statuses(t, c, overlay); got["p0"] != "Bound@n1" || got["p1"] != "Pending@" {
		t.Fatalf("after the API answered the snapshot shows %v, want p0 bound and p1 pending again", got)
	}
}

// No more calls are in flight than there are workers, however many decisions a cycle makes.
func TestDispatchIsBounded(t *testing.T) {
	const workers, binds = 3, 12
	var inflight, most atomic.Int32
	release := make(chan struct{})
	c := cluster(t, binds, func(ctx context.Context, c client.Client, pod, node string) error {
		n := inflight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release
		inflight.Add(-1)
		return setNode(ctx, c, pod, node)
	})
	d := apiwriter.NewDispatcher(&apiwriter.Effects{Client: c, Clock: clock.RealClock{}, Overlay: store.NewOverlay(clock.RealClock{})}, workers)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = d.Start(ctx); close(stopped) }()
	for i := range binds {
		_ = d.Bind(ctx, podInfo(i), "n1")
	}
	// Let the workers fill up before anything is answered: an unbounded dispatcher would
	// have all 12 calls waiting by then.
	for deadline := time.Now().Add(10 * time.Second); inflight.Load() < workers && time.Now().Before(deadline); {
		runtime.Gosched()
	}
	for range binds {
		release <- struct{}{}
	}
	d.Wait()
	if got := most.Load(); got != workers {
		t.Fatalf("%d calls were in flight at once, want %d (the workers)", got, workers)
	}
	// Shutting down sends what is still queued: a decision made is never dropped.
	_ = d.Bind(ctx, podInfo(0), "n1")
	close(release)
	cancel()
	<-stopped
	if n := inflight.Load(); n != 0 {
		t.Fatalf("%d calls still running after Start returned", n)
	}
}

// A decision waiting behind a long queue of API calls is trusted however long it waits:
// if it expired, the scheduler would place the pod a second time.
func TestQueuedDecisionsDoNotExpireWhileTheyWait(t *testing.T) {
	release := make(chan struct{})
	c := cluster(t, 1, func(ctx context.Context, c client.Client, pod, node string) error {
		<-release
		return setNode(ctx, c, pod, node)
	})
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	overlay := store.NewOverlay(clk)
	d := apiwriter.NewDispatcher(&apiwriter.Effects{Client: c, Clock: clock.RealClock{}, Overlay: overlay}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = d.Start(ctx); close(stopped) }()
	var answer sync.Once
	defer func() { answer.Do(func() { close(release) }); cancel(); <-stopped }()
	_ = d.Bind(ctx, podInfo(0), "n1")
	clk.Step(time.Hour)
	if got := statuses(t, c, overlay)["p0"]; got != "Bound@n1" {
		t.Fatalf("a bind queued an hour ago shows as %s, want Bound@n1", got)
	}
	answer.Do(func() { close(release) })
	d.Wait()
	if got := statuses(t, c, overlay)["p0"]; got != "Bound@n1" {
		t.Fatalf("after it was sent the pod shows as %s", got)
	}
}

// Once the scheduler stops, what it still decides is not sent: it is taken back from the
// overlay and counted, and the next leader decides anew from what the API server holds.
func TestDecisionsAfterShutdownAreDropped(t *testing.T) {
	c := cluster(t, 1, setNode)
	overlay := store.NewOverlay(clock.RealClock{})
	recorded := &metrics.Recording{}
	d := apiwriter.NewDispatcher(&apiwriter.Effects{Client: c, Clock: clock.RealClock{}, Overlay: overlay, Metrics: recorded}, 2)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = d.Start(ctx); close(stopped) }()
	cancel()
	<-stopped
	if err := d.Bind(ctx, podInfo(0), "n1"); err != nil {
		t.Fatal(err)
	}
	d.Wait() // returns: nothing is left queued
	pod := &v1.Pod{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "p0"}, pod); err != nil || pod.Spec.NodeName != "" {
		t.Fatalf("a bind decided after shutdown was sent: node %q, %v", pod.Spec.NodeName, err)
	}
	if got := statuses(t, c, overlay)["p0"]; got != "Pending@" {
		t.Fatalf("the dropped bind still shows in the overlay: %s", got)
	}
	if got := recorded.Recorded().DecisionsDropped; !maps.Equal(got, map[[2]string]int{{"bind", "stopped"}: 1}) {
		t.Fatalf("counted as dropped: %v, want the bind alone", got)
	}
}

// At shutdown, what is queued is sent for up to DrainTimeout; then Start returns, whatever
// the API server is doing, and the rest is dropped.
func TestShutdownDrainsWithinItsTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	c := cluster(t, 3, func(ctx context.Context, c client.Client, pod, node string) error {
		if pod == "p0" {
			return setNode(ctx, c, pod, node) // answered at once
		}
		select { // the API server hangs for the others, until the call is cut short
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		return setNode(ctx, c, pod, node)
	})
	clk := clocktesting.NewFakeClock(time.Now())
	overlay := store.NewOverlay(clk)
	d := apiwriter.NewDispatcher(&apiwriter.Effects{Client: c, Clock: clock.RealClock{}, Overlay: overlay}, 1)
	d.DrainTimeout, d.Clock = time.Second, clk
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = d.Start(ctx); close(stopped) }()
	for i := range 3 {
		_ = d.Bind(ctx, podInfo(i), "n1")
	}
	cancel()
	select {
	case <-stopped:
		t.Fatal("Start returned before its drain timeout")
	case <-time.After(50 * time.Millisecond):
	}
	for !clk.HasWaiters() { // the drain's timer
		runtime.Gosched()
	}
	clk.Step(time.Second)
	<-stopped
	d.Wait()
	got := statuses(t, c, overlay)
	if got["p0"] != "Bound@n1" || got["p1"] != "Pending@" || got["p2"] != "Pending@" {
		t.Fatalf("after the drain the snapshot shows %v, want p0 bound (sent in time), p1 and p2 pending (cut short or dropped)", got)
	}
}

// evictionCluster is a fake API server with a node, a preemptor's pending pod (ns/pre-0 of
// job ns/pre) and a victim running on the node (ns/victim-0 of ns/victim). Every pod status
// write and delete goes through record, which may fail it.
func evictionCluster(t *testing.T, record func(call string) error) client.Client {
	return evictionClusterOf(t, 1, record)
}

// callLog records, in order, the calls a fake cluster received from any worker.
type callLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *callLog) record(call string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, call)
}

func (l *callLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}

// evictionClusterOf has n preemptor pods pre-I pending and n victim pods victim-I running.
func evictionClusterOf(t *testing.T, n int, record func(call string) error) client.Client {
	t.Helper()
	scheme := clientgoscheme.Scheme
	if err := install.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	pod := func(name, job string) *builders.PodWrapper {
		return builders.MakePod("ns", name).UID("uid-" + name).PodGroup(job)
	}
	objects := []client.Object{
		builders.MakeNode("n1").Obj(),
		builders.MakePodGroup("ns", "pre").Queue("q").Obj(),
		builders.MakePodGroup("ns", "victim").Queue("q").Obj(),
	}
	for i := range n {
		objects = append(objects, pod(fmt.Sprint("pre-", i), "pre").Obj(), pod(fmt.Sprint("victim-", i), "victim").Node("n1").Phase(v1.PodRunning).Obj())
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).WithInterceptorFuncs(interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			data, _ := patch.Data(obj)
			call := "condition " + obj.GetName()
			if strings.Contains(string(data), "nominatedNodeName") {
				call = "nominate " + obj.GetName()
			}
			if err := record(call); err != nil {
				return err
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			if err := record("delete " + obj.GetName()); err != nil {
				return err
			}
			return c.Delete(ctx, obj, opts...)
		},
	}).Build()
}

// An eviction is sent only once the nomination its preemptor counts on is written, however
// slow that write is, and the cycle waits for neither; a nomination that fails takes its
// evictions with it, so the next snapshot shows the victim running and the preemptor pending,
// and nothing was freed for nobody.
func TestEvictionsWaitForTheirPromise(t *testing.T) {
	for _, nominationFails := range []bool{false, true} {
		t.Run(fmt.Sprintf("nomination fails=%v", nominationFails), func(t *testing.T) {
			var sent callLog
			promised := make(chan struct{})
			c := evictionCluster(t, func(call string) error {
				if call == "nominate pre-0" {
					<-promised
					if nominationFails {
						return errors.New("injected: the API server refused the nomination")
					}
				}
				sent.record(call)
				return nil
			})
			overlay := store.NewOverlay(clock.RealClock{})
			d := apiwriter.NewDispatcher(&apiwriter.Effects{Client: c, Clock: clock.RealClock{}, Overlay: overlay}, 4)
			ctx, cancel := context.WithCancel(context.Background())
			stopped := make(chan struct{})
			go func() { _ = d.Start(ctx); close(stopped) }()
			var answer sync.Once
			defer func() { answer.Do(func() { close(promised) }); cancel(); <-stopped }()

			preemptor := &model.PodInfo{Namespace: "ns", Name: "pre-0", UID: "uid-pre-0", Job: "ns/pre"}
			victim := &model.PodInfo{Namespace: "ns", Name: "victim-0", UID: "uid-victim-0", Job: "ns/victim", NodeName: "n1"}
			_ = d.Nominate(ctx, preemptor, "n1")
			_ = d.Evict(ctx, victim, framework.EvictionReason{Action: framework.Reclaim, Preemptor: "ns/pre"})
			if got := jobStatuses(t, c, overlay); got["pre-0"] != "Pipelined@n1" || got["victim-0"] != "Releasing@n1" {
				t.Fatalf("while the nomination is in flight the snapshot shows %v, want the promise and the eviction", got)
			}
			time.Sleep(20 * time.Millisecond) // four idle workers: an eviction not held back would go now
			if early := sent.list(); len(early) > 0 {
				t.Fatalf("%v sent before the nomination was written", early)
			}
			answer.Do(func() { close(promised) })
			d.Wait()
			got, calls := jobStatuses(t, c, overlay), sent.list()
			if nominationFails {
				if len(calls) != 0 || got["victim-0"] != "Running@n1" || got["pre-0"] != "Pending@" {
					t.Fatalf("after a failed nomination: calls %v, snapshot %v; want no eviction, the victim running, the preemptor pending", calls, got)
				}
				return
			}
			if want := []string{"nominate pre-0", "condition victim-0", "delete victim-0"}; !slices.Equal(calls, want) {
				t.Fatalf("calls %v, want %v", calls, want)
			}
		})
	}
}

// A reclaim's evictions follow their preemptors' nominations one by one: an eviction
// released by its nomination goes before the nominations decided after it, so that the
// first victim goes a few calls after the cycle, not after every reclaimer's nomination.
func TestReleasedEvictionsGoBeforeLaterNominations(t *testing.T) {
	var sent callLog
	c := evictionClusterOf(t, 3, func(call string) error { sent.record(call); return nil })
	d := apiwriter.NewDispatcher(&apiwriter.Effects{Client: c, Clock: clock.RealClock{}, Overlay: store.NewOverlay(clock.RealClock{})}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	for i := range 3 { // as a cycle decides them, before any is sent
		preemptor := &model.PodInfo{Namespace: "ns", Name: fmt.Sprint("pre-", i), UID: fmt.Sprint("uid-pre-", i), Job: model.JobID(fmt.Sprint("ns/pre-", i))}
		victim := &model.PodInfo{Namespace: "ns", Name: fmt.Sprint("victim-", i), UID: fmt.Sprint("uid-victim-", i), Job: "ns/victim", NodeName: "n1"}
		_ = d.Nominate(ctx, preemptor, "n1")
		_ = d.Evict(ctx, victim, framework.EvictionReason{Action: framework.Reclaim, Preemptor: preemptor.Job})
	}
	stopped := make(chan struct{})
	go func() { _ = d.Start(ctx); close(stopped) }()
	defer func() { cancel(); <-stopped }()
	d.Wait()
	want := []string{
		"nominate pre-0", "condition victim-0", "delete victim-0",
		"nominate pre-1", "condition victim-1", "delete victim-1",
		"nominate pre-2", "condition victim-2", "delete victim-2",
	}
	if calls := sent.list(); !slices.Equal(calls, want) {
		t.Fatalf("calls %v, want each eviction right after its nomination", calls)
	}
}

// A pod's nomination and a later withdrawal go out in the order decided, even with workers
// free to send both at once: reversed, the pod would keep a promise the scheduler took back.
func TestAPodsNominationsAreSentInOrder(t *testing.T) {
	var sent callLog
	slow := make(chan struct{})
	c := evictionCluster(t, func(call string) error {
		if len(sent.list()) == 0 {
			<-slow
		}
		sent.record(call)
		return nil
	})
	d := apiwriter.NewDispatcher(&apiwriter.Effects{Client: c, Clock: clock.RealClock{}, Overlay: store.NewOverlay(clock.RealClock{})}, 4)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = d.Start(ctx); close(stopped) }()
	defer func() { cancel(); <-stopped }()
	preemptor := &model.PodInfo{Namespace: "ns", Name: "pre-0", UID: "uid-pre-0", Job: "ns/pre"}
	_ = d.Nominate(ctx, preemptor, "n1")
	_ = d.CancelPipeline(ctx, preemptor)
	time.Sleep(20 * time.Millisecond)
	close(slow)
	d.Wait()
	pod := &v1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "pre-0"}, pod); err != nil {
		t.Fatal(err)
	}
	if calls := sent.list(); len(calls) != 2 || pod.Status.NominatedNodeName != "" {
		t.Fatalf("calls %v, nominated node %q: want the nomination then the withdrawal, and no promise left", calls, pod.Status.NominatedNodeName)
	}
}

// A job's start stamp reaches the status updater only once its gang's binds are written: a
// gang whose bind failed has not started, and the overlay takes its stamp back too.
func TestStampWaitsForTheGangsBinds(t *testing.T) {
	for _, bindFails := range []bool{false, true} {
		t.Run(fmt.Sprintf("bind fails=%v", bindFails), func(t *testing.T) {
			release := make(chan struct{})
			c := cluster(t, 2, func(ctx context.Context, c client.Client, pod, node string) error {
				<-release
				if bindFails && pod == "p1" {
					return errors.New("injected: the API server refused the binding")
				}
				return setNode(ctx, c, pod, node)
			})
			overlay := store.NewOverlay(clock.RealClock{})
			updater := status.NewUpdater(c, nil, clocktesting.NewFakeClock(time.Now()))
			d := apiwriter.NewDispatcher(&apiwriter.Effects{Client: c, Clock: clock.RealClock{}, Overlay: overlay, Status: updater}, 4)
			ctx, cancel := context.WithCancel(context.Background())
			stopped := make(chan struct{})
			go func() { _ = d.Start(ctx); close(stopped) }()
			var answer sync.Once
			defer func() { answer.Do(func() { close(release) }); cancel(); <-stopped }()
			job := &model.JobInfo{ID: "ns/job"}
			for i := range 2 {
				_ = d.Bind(ctx, podInfo(i), "n1")
			}
			began := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			_ = d.RecordJobStart(ctx, job, began)
			if stamp := snapshotJob(t, c, overlay).LastStartTimestamp; stamp == nil || !stamp.Equal(began) {
				t.Fatalf("the stamp is not in the next snapshot at once: %v", stamp)
			}
			if n := updater.PendingWrites(); n != 0 {
				t.Fatalf("%d writes handed to the updater before the binds landed", n)
			}
			answer.Do(func() { close(release) })
			d.Wait()
			stamp := snapshotJob(t, c, overlay).LastStartTimestamp
			if bindFails {
				if n := updater.PendingWrites(); n != 0 || stamp != nil {
					t.Fatalf("after a failed bind: %d writes queued, snapshot stamp %v; want none", n, stamp)
				}
				return
			}
			if n := updater.PendingWrites(); n != 1 || stamp == nil {
				t.Fatalf("after the binds: %d writes queued, snapshot stamp %v; want the stamp queued and shown", n, stamp)
			}
		})
	}
}

// jobStatuses reads every pod of the eviction cluster as the next snapshot will see it.
func jobStatuses(t *testing.T, c client.Client, overlay *store.Overlay) map[string]string {
	t.Helper()
	snapshot, _, err := (&store.Builder{Reader: c, SchedulerName: "kai-scheduler", Overlay: overlay}).Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, job := range snapshot.Jobs {
		for _, p := range job.Pods {
			got[p.Name] = p.Status.String() + "@" + p.NodeName
		}
	}
	return got
}

// snapshotJob reads ns/job as the next snapshot will see it.
func snapshotJob(t *testing.T, c client.Client, overlay *store.Overlay) *model.JobInfo {
	t.Helper()
	snapshot, _, err := (&store.Builder{Reader: c, SchedulerName: "kai-scheduler", Overlay: overlay}).Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return snapshot.Job("ns/job")
}
