package apiwriter

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/metrics"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// DefaultDispatchWorkers is how many API calls are in flight at once by default. kube-scheduler
// binds each pod from a goroutine of its own, with no bound but the API server's; a bound keeps
// a burst from flooding it. Measured on a real API server sharing 2 cores with 500 simulated
// nodes (docs/performance.md), 64 against 16: a reclaim of 4,000 GPUs done 1.8 times sooner
// after submission, a protected victim evicted 1.9 s after its protection ended at p99 instead
// of 3.3 s; 500 binds with nothing else to do take 14% longer.
const DefaultDispatchWorkers = 64

// Dispatcher is the framework.Effects of the real scheduler with every API call off the
// cycle's critical path, as kube-scheduler's binding cycles run beside its scheduling cycle.
// Each decision is recorded in the overlay at once, so that the next snapshot sees the pod
// bound, releasing or promised as it is about to be, and sent by one of a fixed number of
// workers. A call that fails is taken back from the overlay: the next snapshot shows the pod
// as the informers do and the next cycle decides anew.
//
// Some calls must wait for others, and do so in the dispatcher, never in the cycle:
//   - an eviction waits until the nominations of its preemptor's pods made before it are
//     written: the promise must be durable before anything counts on it, or a scheduler
//     that dies in between leaves freed resources promised to nobody (the victim's
//     replacement may take them back). If a nomination fails, the evictions that waited for
//     it are not sent;
//   - a pod's nominations and withdrawals are sent one at a time, in the order decided;
//   - a job's start stamp is handed to the status updater once the binds of its gang are
//     written: a gang whose bind failed has not started. (Its stamp in the overlay, which
//     protection reads, is kept from the cycle on.)
type Dispatcher struct {
	*Effects
	workers int
	// DrainTimeout is how long Start goes on sending what was decided once its context
	// ends, on the effects' Clock; what is left then is dropped (counted): the next leader
	// decides anew from what the API server holds, and the waits above keep that state
	// consistent.
	DrainTimeout time.Duration

	queue workqueue.TypedInterface[*dispatch]
	// mu guards the dependency bookkeeping below and stopping.
	mu       sync.Mutex
	stopping bool
	// unsent counts dispatches decided and not yet sent, failed or dropped, for Wait.
	unsent sync.WaitGroup
	// podCalls is, per pod, its newest nomination or withdrawal not yet finished;
	// promises, per preemptor job, its nominations not yet finished; binds, per job, its
	// binds not yet finished.
	podCalls map[types.UID]*dispatch
	promises map[model.JobID][]*dispatch
	binds    map[model.JobID][]*dispatch
}

// dispatch is one API call to make, what it waits for, and how to take back its overlay
// entry if it fails or is dropped.
type dispatch struct {
	send   func(ctx context.Context) error
	failed func()
	// pod, verb and job say what it was, for the log: the job bound, or the preemptor.
	pod, verb string
	job       model.JobID
	// uid is the pod of a nomination or withdrawal, whose calls go in order (podCalls).
	uid types.UID
	// blockers counts the dispatches this one waits for; it is queued when none is left.
	blockers int
	// waiting are the dispatches waiting for this one.
	waiting []waiter
	// finished is set once it was sent, failed or dropped.
	finished bool
	// released is set when it waited for others and they are done: it goes first.
	released bool
}

// releasedFirst orders the workers' queue: a call released by the calls it waited for (an
// eviction whose preemptor's nominations are written, a stamp whose binds are) goes before
// the calls that never waited, each lane in the order queued. A reclaim's evictions then
// follow its nominations one by one, instead of after every nomination of the cycle: with
// 400 reclaimers, the first victim goes a few calls after its protection ended, not 400.
type releasedFirst struct{ released, fresh []*dispatch }

func (q *releasedFirst) Touch(*dispatch) {}
func (q *releasedFirst) Len() int        { return len(q.released) + len(q.fresh) }

func (q *releasedFirst) Push(w *dispatch) {
	if w.released {
		q.released = append(q.released, w)
	} else {
		q.fresh = append(q.fresh, w)
	}
}

func (q *releasedFirst) Pop() *dispatch {
	from := &q.fresh
	if len(q.released) > 0 {
		from = &q.released
	}
	w := (*from)[0]
	(*from)[0] = nil // not kept alive by the slice's array
	*from = (*from)[1:]
	return w
}

// waiter is a dispatch waiting for another; needsSuccess if it must not be sent when the
// other fails.
type waiter struct {
	d            *dispatch
	needsSuccess bool
}

var _ framework.Effects = &Dispatcher{}

// NewDispatcher sends e's calls from workers goroutines once Start runs.
func NewDispatcher(e *Effects, workers int) *Dispatcher {
	queue := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[*dispatch]{Queue: &releasedFirst{}})
	return &Dispatcher{Effects: e, workers: max(workers, 1), queue: queue,
		podCalls: map[types.UID]*dispatch{}, promises: map[model.JobID][]*dispatch{}, binds: map[model.JobID][]*dispatch{}}
}

// Bind records the bind and queues it.
func (d *Dispatcher) Bind(ctx context.Context, pod *model.PodInfo, nodeName string) error {
	p := *pod // the session goes on changing its pods; the worker reads a copy
	uid := types.UID(p.UID)
	d.Overlay.BindQueued(uid, nodeName, p.GPUGroups)
	w := &dispatch{pod: p.Key(), verb: "bind", job: p.Job,
		send:   func(ctx context.Context) error { return d.Effects.Bind(ctx, &p, nodeName) },
		failed: func() { d.Overlay.BindFailed(uid) }}
	d.mu.Lock()
	d.binds[p.Job] = append(d.binds[p.Job], w)
	d.mu.Unlock()
	d.enqueue(ctx, w, nil)
	return nil
}

// Evict records the eviction and queues it, after the nominations its preemptor's pods
// still wait for.
func (d *Dispatcher) Evict(ctx context.Context, pod *model.PodInfo, reason framework.EvictionReason) error {
	p := *pod
	uid := types.UID(p.UID)
	d.Overlay.EvictionQueued(uid, reason.Preemptor, reason.Action.Moves())
	w := &dispatch{pod: p.Key(), verb: "evict", job: reason.Preemptor,
		send:   func(ctx context.Context) error { return d.Effects.Evict(ctx, &p, reason) },
		failed: func() { d.Overlay.EvictionFailed(uid) }}
	d.mu.Lock()
	after := waitFor(d.promises[reason.Preemptor], true)
	d.mu.Unlock()
	d.enqueue(ctx, w, after)
	return nil
}

// Nominate records the promise and queues its write, after the pod's earlier ones.
func (d *Dispatcher) Nominate(ctx context.Context, pod *model.PodInfo, nodeName string) error {
	p := *pod
	w := d.podCall(ctx, &p, nodeName, "nominate", func(ctx context.Context) error { return d.Effects.Nominate(ctx, &p, nodeName) })
	d.mu.Lock()
	d.promises[p.Job] = append(d.promises[p.Job], w)
	d.mu.Unlock()
	d.enqueue(ctx, w, d.afterPodCall(&p, w))
	return nil
}

// CancelPipeline records the withdrawal and queues its write, after the pod's earlier ones.
func (d *Dispatcher) CancelPipeline(ctx context.Context, pod *model.PodInfo) error {
	p := *pod
	w := d.podCall(ctx, &p, "", "withdraw", func(ctx context.Context) error { return d.Effects.CancelPipeline(ctx, &p) })
	d.enqueue(ctx, w, d.afterPodCall(&p, w))
	return nil
}

// podCall is a nomination (or, with no node, a withdrawal) of a pod, recorded in the overlay.
func (d *Dispatcher) podCall(_ context.Context, p *model.PodInfo, nodeName, verb string, send func(context.Context) error) *dispatch {
	uid := types.UID(p.UID)
	d.Overlay.NominationQueued(uid, nodeName, time.Unix(p.PromisedAt, 0), promisedGroups(p, nodeName))
	return &dispatch{pod: p.Key(), verb: verb, job: p.Job, uid: uid, send: send, failed: func() { d.Overlay.NominationFailed(uid, nodeName) }}
}

// afterPodCall makes w the pod's newest call and returns the one it must follow, if any.
func (d *Dispatcher) afterPodCall(p *model.PodInfo, w *dispatch) []waiter {
	d.mu.Lock()
	defer d.mu.Unlock()
	uid := types.UID(p.UID)
	previous := d.podCalls[uid]
	d.podCalls[uid] = w
	return waitFor([]*dispatch{previous}, false)
}

// RecordJobStart remembers the start in the overlay at once, so that protection holds from
// this cycle on, and hands the stamp to the status updater (whose stamps go before anything
// else) once the gang's binds are written: the record never tells of a start that did not
// happen, as a scheduler that died between the stamp and the binds would leave it. If a bind
// fails, the job has not started, and the overlay takes its stamp back too.
func (d *Dispatcher) RecordJobStart(ctx context.Context, job *model.JobInfo, startedAt time.Time) error {
	id := job.ID
	d.Overlay.Stamped(id, startedAt)
	w := &dispatch{verb: "stamp", job: id,
		send:   func(context.Context) error { d.Status.QueueStartStamp(id, startedAt); return nil },
		failed: func() { d.Overlay.StampFailed(id, startedAt) }}
	d.mu.Lock()
	after := waitFor(d.binds[id], true)
	d.mu.Unlock()
	d.enqueue(ctx, w, after)
	return nil
}

// waitFor lists the unfinished dispatches of ds as what a new one waits for.
func waitFor(ds []*dispatch, needsSuccess bool) []waiter {
	var after []waiter
	for _, other := range ds {
		if other != nil && !other.finished {
			after = append(after, waiter{other, needsSuccess})
		}
	}
	return after
}

// enqueue hands w to the workers once what it waits for is done. Once they are stopping, it
// is dropped: the scheduler decides nothing more.
func (d *Dispatcher) enqueue(ctx context.Context, w *dispatch, after []waiter) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.unsent.Add(1)
	if d.stopping {
		d.finish(ctx, w, errStopped)
		return
	}
	for _, a := range after {
		if !a.d.finished { // it may have finished since waitFor looked
			a.d.waiting = append(a.d.waiting, waiter{w, a.needsSuccess})
			w.blockers++
		}
	}
	if w.blockers == 0 {
		d.queue.Add(w)
	}
}

var (
	errStopped      = errors.New("the scheduler stopped before it was sent")
	errPrerequisite = errors.New("a write it counted on failed")
)

// finish records the outcome of w (nil: sent), takes it back from the overlay unless it was
// sent, and releases what waited for it: queued, or, if it needed w to succeed, finished as
// failed in turn. The caller holds d.mu.
func (d *Dispatcher) finish(ctx context.Context, w *dispatch, err error) {
	w.finished = true
	d.forget(w)
	if err != nil {
		w.failed()
		switch {
		case errors.Is(err, errStopped):
			metrics.OrDiscard(d.Metrics).DecisionDropped(w.verb, "stopped")
		case errors.Is(err, errPrerequisite):
			metrics.OrDiscard(d.Metrics).DecisionDropped(w.verb, "prerequisite-failed")
		default:
			klog.FromContext(ctx).Error(err, "Sending a decision failed; the next cycle decides again", "pod", w.pod, "call", w.verb, "job", w.job)
		}
	}
	for _, next := range w.waiting {
		switch {
		case next.d.finished:
		case err != nil && next.needsSuccess:
			d.finish(ctx, next.d, errPrerequisite)
		default:
			if next.d.blockers--; next.d.blockers == 0 {
				if d.stopping {
					d.finish(ctx, next.d, errStopped)
				} else {
					next.d.released = true
					d.queue.Add(next.d)
				}
			}
		}
	}
	w.waiting = nil
	d.unsent.Done()
}

// forget drops a finished dispatch from the bookkeeping of what later ones wait for.
func (d *Dispatcher) forget(w *dispatch) {
	drop := func(m map[model.JobID][]*dispatch) {
		if list, ok := m[w.job]; ok {
			list = slices.DeleteFunc(list, func(other *dispatch) bool { return other == w })
			if len(list) == 0 {
				delete(m, w.job)
			} else {
				m[w.job] = list
			}
		}
	}
	switch w.verb {
	case "bind":
		drop(d.binds)
	case "nominate":
		drop(d.promises)
	}
	if w.uid != "" && d.podCalls[w.uid] == w {
		delete(d.podCalls, w.uid)
	}
}

// Start runs the workers until ctx ends, then lets them send what is queued for up to
// DrainTimeout, and drops the rest. It implements controller-runtime's Runnable.
func (d *Dispatcher) Start(ctx context.Context) error {
	sending, stopSending := context.WithCancel(context.WithoutCancel(ctx))
	defer stopSending()
	var workers sync.WaitGroup
	for range d.workers {
		workers.Go(func() { d.work(sending) })
	}
	<-ctx.Done()
	drained := make(chan struct{})
	go func() { d.unsent.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-d.Clock.After(d.DrainTimeout):
	}
	d.mu.Lock()
	d.stopping = true // what is queued from now on is dropped, by the workers or by enqueue
	d.mu.Unlock()
	stopSending() // a call still in flight is cut short
	d.queue.ShutDown()
	workers.Wait()
	return nil
}

// NeedLeaderElection: only the leader decides, so only the leader has anything to send.
func (d *Dispatcher) NeedLeaderElection() bool { return true }

// work sends what is queued until the queue shuts down; once the dispatcher is stopping,
// what is left in the queue is dropped instead.
func (d *Dispatcher) work(ctx context.Context) {
	for {
		w, shutdown := d.queue.Get()
		if shutdown {
			return
		}
		d.mu.Lock()
		stopping := d.stopping
		d.mu.Unlock()
		err := errStopped
		if !stopping {
			if err = w.send(ctx); err != nil && ctx.Err() != nil {
				err = errStopped // cut short by the end of the drain
			}
		}
		d.mu.Lock()
		d.finish(ctx, w, err)
		d.mu.Unlock()
		d.queue.Done(w)
	}
}

// Wait blocks until everything decided so far has been sent, has failed or was dropped.
func (d *Dispatcher) Wait() { d.unsent.Wait() }

// promisedGroups are the GPU groups a share pod is promised with a nomination to nodeName:
// none for a withdrawal, or for a pod without shares.
func promisedGroups(p *model.PodInfo, nodeName string) []string {
	if nodeName == "" || !p.IsShare() {
		return nil
	}
	return p.GPUGroups
}
