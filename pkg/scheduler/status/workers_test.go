package status_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/metrics"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/status"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// write is one write the fake API server received: which PodGroup, and what kind.
type write struct{ job, kind string }

// writesTo is a fake API server with PodGroups ns/job-0..n-1 whose every write to them goes
// through answer first (nil lets it land); ctx is the write's.
func writesTo(t *testing.T, n int, answer func(ctx context.Context, w write) error) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := install.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var objects []client.Object
	for i := range n {
		objects = append(objects, builders.MakePodGroup("ns", fmt.Sprint("job-", i)).Obj())
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).WithStatusSubresource(objects...).
		WithInterceptorFuncs(interceptor.Funcs{
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				if err := answer(ctx, write{obj.GetName(), "stamp"}); err != nil {
					return err
				}
				return c.Patch(ctx, obj, patch, opts...)
			},
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				if err := answer(ctx, write{obj.GetName(), "status"}); err != nil {
					return err
				}
				return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			},
		}).Build()
}

// startUpdater runs the updater's workers until the returned stop is called.
func startUpdater(u *status.Updater) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = u.Start(ctx); close(done) }()
	return func() { cancel(); <-done }
}

func protection(at time.Time) model.Protection {
	return model.Protection{Start: at, Preempt: model.MinRuntime{Duration: time.Minute}}
}

// eventually polls cond for up to ten seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// A start stamp queued behind statuses is written before them: it is the record protection
// counts from, the statuses are derived anew every cycle.
func TestStampsAreWrittenFirst(t *testing.T) {
	var mu sync.Mutex
	var order []write
	busy, hold := make(chan struct{}), make(chan struct{})
	c := writesTo(t, 6, func(_ context.Context, w write) error {
		mu.Lock()
		first := len(order) == 0
		mu.Unlock()
		if w.job == "job-0" && first {
			close(busy)
			<-hold // the one worker is busy while the rest is queued
		}
		mu.Lock()
		order = append(order, w)
		mu.Unlock()
		return nil
	})
	u := status.NewUpdater(c, nil, clocktesting.NewFakeClock(start))
	u.Workers = 1
	defer startUpdater(u)()
	u.SetProtections([]model.ProtectionChange{{Job: "ns/job-0", Protection: protection(start)}})
	<-busy
	var changes []model.ProtectionChange
	for i := range 4 {
		changes = append(changes, model.ProtectionChange{Job: model.JobID(fmt.Sprint("ns/job-", i+1)), Protection: protection(start)})
	}
	u.SetProtections(append(changes, model.ProtectionChange{Job: "ns/job-0", Protection: protection(start.Add(time.Hour))}))
	u.QueueStartStamp("ns/job-5", start)
	close(hold)
	eventually(t, "everything is written", func() bool { return u.PendingWrites() == 0 })
	mu.Lock()
	defer mu.Unlock()
	if len(order) < 2 || order[1] != (write{"job-5", "stamp"}) {
		t.Fatalf("writes in the order %v; want the stamp right after the write in flight", order)
	}
}

// An object whose status changes again and again while its write waits is written once more,
// with what it should show last: writes are coalesced per object, not queued per change.
func TestWritesAreCoalescedPerObject(t *testing.T) {
	var writes atomic.Int32
	hold := make(chan struct{})
	c := writesTo(t, 1, func(context.Context, write) error {
		if writes.Add(1) == 1 {
			<-hold
		}
		return nil
	})
	u := status.NewUpdater(c, nil, clocktesting.NewFakeClock(start))
	defer startUpdater(u)()
	u.SetProtections([]model.ProtectionChange{{Job: "ns/job-0", Protection: protection(start)}})
	eventually(t, "the first write is in flight", func() bool { return writes.Load() == 1 })
	for k := 1; k <= 5; k++ {
		u.SetProtections([]model.ProtectionChange{{Job: "ns/job-0", Protection: protection(start.Add(time.Duration(k) * time.Hour))}})
	}
	close(hold)
	eventually(t, "everything is written", func() bool { return u.PendingWrites() == 0 })
	group := &v2alpha2.PodGroup{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "job-0"}, group); err != nil {
		t.Fatal(err)
	}
	if n := writes.Load(); n != 2 || !group.Status.MinRuntime.Start.Equal(&metav1.Time{Time: start.Add(5 * time.Hour)}) {
		t.Fatalf("%d writes, status start %v; want two writes, the second with the last start", n, group.Status.MinRuntime.Start)
	}
}

// A write that fails waits before it is tried again, longer after each failure, on the
// updater's clock: a failing API server is not hammered, and no write is given up.
func TestFailedWritesBackOff(t *testing.T) {
	var attempts atomic.Int32
	c := writesTo(t, 1, func(context.Context, write) error {
		if attempts.Add(1) <= 3 {
			return errors.New("injected: API server unavailable")
		}
		return nil
	})
	clk := clocktesting.NewFakeClock(start)
	u := status.NewUpdater(c, nil, clk)
	defer startUpdater(u)()
	u.QueueStartStamp("ns/job-0", start)
	for failure, backoff := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond} {
		eventually(t, fmt.Sprintf("failure %d", failure+1), func() bool { return int(attempts.Load()) == failure+1 })
		failedAt := clk.Now()
		eventually(t, fmt.Sprintf("the retry after failure %d", failure+1), func() bool {
			if int(attempts.Load()) > failure+1 {
				return true
			}
			clk.Step(10 * time.Millisecond)
			return false
		})
		if waited := clk.Since(failedAt); waited < backoff {
			t.Fatalf("tried again %s after failure %d, before its backoff of %s", waited, failure+1, backoff)
		}
	}
	eventually(t, "the stamp lands", func() bool { return u.PendingWrites() == 0 })
}

// Writes to different objects are made in parallel, by at most Workers at once.
func TestWritesRunInParallel(t *testing.T) {
	const workers = 4
	var inflight, most atomic.Int32
	release := make(chan struct{})
	c := writesTo(t, 12, func(context.Context, write) error {
		n := inflight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release
		inflight.Add(-1)
		return nil
	})
	u := status.NewUpdater(c, nil, clocktesting.NewFakeClock(start))
	u.Workers = workers
	defer startUpdater(u)()
	for i := range 12 {
		u.QueueStartStamp(model.JobID(fmt.Sprint("ns/job-", i)), start)
	}
	eventually(t, "the workers are all busy", func() bool { return inflight.Load() == workers })
	close(release)
	eventually(t, "everything is written", func() bool { return u.PendingWrites() == 0 })
	if got := most.Load(); got != workers {
		t.Fatalf("%d writes in flight at once, want %d", got, workers)
	}
}

// At shutdown the updater writes the start stamps it still owes for up to its grace, and no
// status; a stamp or an eviction count the API server does not take in time is given up,
// counted under its kind, and Start returns.
func TestShutdownWritesStampsWithinItsGrace(t *testing.T) {
	var mu sync.Mutex
	var landed []write
	busy := make(chan struct{})
	c := writesTo(t, 4, func(ctx context.Context, w write) error {
		switch w.job {
		case "job-0": // busy while the scheduler is told to stop
			close(busy)
			<-ctx.Done()
			return ctx.Err()
		case "job-3": // never answers in time
			<-ctx.Done()
			return ctx.Err()
		}
		mu.Lock()
		landed = append(landed, w)
		mu.Unlock()
		return nil
	})
	clk := clocktesting.NewFakeClock(start)
	u := status.NewUpdater(c, nil, clk)
	recorded := &metrics.Recording{}
	u.Workers, u.StampGrace, u.Metrics = 2, time.Second, recorded
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = u.Start(ctx); close(done) }()
	u.SetProtections([]model.ProtectionChange{{Job: "ns/job-0", Protection: protection(start)}})
	<-busy
	u.SetProtections([]model.ProtectionChange{{Job: "ns/job-0", Protection: protection(start)}, {Job: "ns/job-1", Protection: protection(start)}})
	u.QueueStartStamp("ns/job-2", start)
	u.QueueStartStamp("ns/job-3", start)
	u.QueueEvictionCount("ns/job-3", framework.Reclaim, start)
	cancel()
	eventually(t, "job-2's stamp lands during the grace", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(landed, write{"job-2", "stamp"})
	})
	select {
	case <-done:
		t.Fatal("Start returned before its grace ran out, with a stamp still owed")
	case <-time.After(20 * time.Millisecond):
	}
	clk.Step(time.Second)
	<-done
	mu.Lock()
	defer mu.Unlock()
	if slices.Contains(landed, write{"job-1", "status"}) {
		t.Errorf("job-1's status was written after the scheduler was told to stop: %v", landed)
	}
	if got := recorded.Recorded().StatusWritesGivenUp["start-stamp"]; got != 1 {
		t.Errorf("%d stamps counted as given up, want 1 (job-3's)", got)
	}
	if got := recorded.Recorded().StatusWritesGivenUp["eviction-count"]; got != 1 {
		t.Errorf("%d eviction counts counted as given up, want 1 (job-3's), under their own kind", got)
	}
}

// Start's shutdown grace waits for the records it owes, eviction counts as well as stamps:
// once the last one lands, Start returns, without waiting out the grace.
func TestShutdownEndsOnceTheEvictionCountsItOwesAreWritten(t *testing.T) {
	writing, release := make(chan struct{}), make(chan struct{})
	c := writesTo(t, 1, func(_ context.Context, w write) error {
		if w.kind == "status" { // the eviction count, in flight while the scheduler is told to stop
			close(writing)
			<-release
		}
		return nil
	})
	u := status.NewUpdater(c, nil, clocktesting.NewFakeClock(start)) // the grace never runs out
	u.StampGrace = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = u.Start(ctx); close(done) }()
	u.QueueEvictionCount("ns/job-0", framework.Reclaim, start)
	<-writing
	cancel()
	close(release)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Start still waits out its grace after the eviction count it owed was written")
	}
	group := &v2alpha2.PodGroup{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "job-0"}, group); err != nil {
		t.Fatal(err)
	}
	if got := group.Status.Evictions; got == nil || got.Reclaim != 1 {
		t.Errorf("eviction count %+v, want the one reclaim written", got)
	}
}
