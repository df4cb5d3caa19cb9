package kube

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
)

// DefaultDispatchWorkers is how many binds and evictions are in flight at once by default,
// kube-scheduler's default parallelism.
const DefaultDispatchWorkers = 16

// Dispatcher is the framework.Effects of the real scheduler with binds and evictions off the
// cycle's critical path. Each is recorded in the overlay at once, so that the next snapshot
// sees the pod bound or releasing as it is about to be, and sent to the API server by one of
// a fixed number of workers, as kube-scheduler's binding cycles run beside its scheduling
// cycle. A call that fails is taken back from the overlay: the next snapshot shows the pod
// as the informers do (still pending, or still running) and the next cycle decides anew.
//
// Everything else stays synchronous: nominations must be written before the evictions that
// count on them (the statement sends them first, and evictions are only queued once they
// are written), and withdrawals and start stamps are cheap.
type Dispatcher struct {
	*Effects
	workers int
	queue   workqueue.TypedInterface[*dispatch]
	// inflight counts queued and running dispatches, for Wait.
	inflight sync.WaitGroup
	// mu guards stopping: once the workers drain, a late decision is sent by its caller.
	mu       sync.Mutex
	stopping bool
}

// dispatch is one API call to make, and how to take back its overlay entry if it fails.
type dispatch struct {
	send   func(ctx context.Context) error
	failed func()
	// pod, verb and job say what it was, for the log: the job bound, or the preemptor.
	pod, verb string
	job       api.JobID
}

var _ framework.Effects = &Dispatcher{}

// NewDispatcher sends e's binds and evictions from workers goroutines once Start runs.
func NewDispatcher(e *Effects, workers int) *Dispatcher {
	return &Dispatcher{Effects: e, workers: max(workers, 1), queue: workqueue.NewTyped[*dispatch]()}
}

// Bind records the bind and queues it.
func (d *Dispatcher) Bind(ctx context.Context, pod *api.PodInfo, nodeName string) error {
	p := *pod // the session goes on changing its pods; the worker reads a copy
	uid := types.UID(p.UID)
	d.Overlay.BindQueued(uid, nodeName)
	d.enqueue(ctx, &dispatch{pod: p.Key(), verb: "bind", job: p.Job,
		send:   func(ctx context.Context) error { return d.Effects.Bind(ctx, &p, nodeName) },
		failed: func() { d.Overlay.BindFailed(uid) }})
	return nil
}

// Evict records the eviction and queues it.
func (d *Dispatcher) Evict(ctx context.Context, pod *api.PodInfo, reason framework.EvictionReason) error {
	p := *pod
	uid := types.UID(p.UID)
	d.Overlay.EvictionQueued(uid, reason.Preemptor)
	d.enqueue(ctx, &dispatch{pod: p.Key(), verb: "evict", job: reason.Preemptor,
		send:   func(ctx context.Context) error { return d.Effects.Evict(ctx, &p, reason) },
		failed: func() { d.Overlay.EvictionFailed(uid) }})
	return nil
}

// enqueue hands w to the workers, or, once they are stopping, sends it at once: a decision
// made is never dropped.
func (d *Dispatcher) enqueue(ctx context.Context, w *dispatch) {
	d.mu.Lock()
	if !d.stopping {
		d.inflight.Add(1)
		d.queue.Add(w)
		d.mu.Unlock()
		return
	}
	d.mu.Unlock()
	d.send(ctx, w)
}

// send makes the call and takes the decision back from the overlay if it fails.
func (d *Dispatcher) send(ctx context.Context, w *dispatch) {
	if err := w.send(context.WithoutCancel(ctx)); err != nil {
		w.failed()
		klog.FromContext(ctx).Error(err, "Sending a decision failed; the next cycle decides again", "pod", w.pod, "call", w.verb, "job", w.job)
	}
}

// Start runs the workers until ctx ends, then lets them finish what was queued: a decision
// made is sent, even at shutdown. It implements controller-runtime's Runnable.
func (d *Dispatcher) Start(ctx context.Context) error {
	var workers sync.WaitGroup
	for range d.workers {
		workers.Go(func() { d.work(ctx) })
	}
	<-ctx.Done()
	d.mu.Lock()
	d.stopping = true
	d.mu.Unlock()
	d.queue.ShutDownWithDrain()
	workers.Wait()
	return nil
}

// NeedLeaderElection: only the leader decides, so only the leader has anything to send.
func (d *Dispatcher) NeedLeaderElection() bool { return true }

// work sends what is queued until the queue shuts down and is drained. Calls started at
// shutdown still complete: their decisions are already in the overlay.
func (d *Dispatcher) work(ctx context.Context) {
	for {
		w, shutdown := d.queue.Get()
		if shutdown {
			return
		}
		d.send(ctx, w)
		d.queue.Done(w)
		d.inflight.Done()
	}
}

// Wait blocks until everything queued so far has been sent (or has failed).
func (d *Dispatcher) Wait() { d.inflight.Wait() }
