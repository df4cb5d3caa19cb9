package status

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/metrics"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// conditionRefresh is the least time between two rewrites of a pending job's condition (and
// of a queue's allocation). The reasons' details (how many nodes lack what) change nearly
// every cycle in a busy cluster; rewriting them each second for every pending job would
// flood the API server.
const conditionRefresh = 10 * time.Second

// figuresRefresh is the least time between two rewrites of a pending job's condition whose
// reasons changed only in their figures — how much its queue holds, how many nodes lack what
// — and not in what it waits for. The fair-share refusal says how much its queue holds and
// may have, which moves with every allocation of a busy cluster: rewriting it every
// conditionRefresh for every waiting job multiplied a day's PodGroup status writes by 2.5
// (kai-sim's day of 2,000 jobs). Times, such as a protection's end, are not figures:
// a new end is rewritten as any change is. `kubectl kai explain` gives the figures of now.
const figuresRefresh = time.Minute

// DefaultWorkers is how many writes are in flight at once by default: as many as the
// dispatcher's, so that a burst's start stamps keep pace with its binds (docs/performance.md).
const DefaultWorkers = 64

// Backoff of a write that failed: doubled at each failure of the same object, from
// retryBase up to retryMax, counted on the updater's clock.
const (
	retryBase = 100 * time.Millisecond
	retryMax  = 30 * time.Second
)

// Updater writes what the scheduler decided back to the objects it is about: a job's start
// stamp, why it waits and how it is protected, a queue's status. A cycle only records what
// each object should show (QueueStartStamp, SetPending, SetProtections, SetQueues); Start's
// workers write it, in parallel, off the cycle. Writes are coalesced per object: an object
// is queued once however often it changes before its write, and the write sends what it
// should show then. Start and eviction stamps go first: they are the records min-runtime
// protection and the preemption delay count from, where everything else is derived anew
// each cycle.
type Updater struct {
	Client   client.Client
	Recorder record.EventRecorder
	// Clock decides when conditions are due again and how long a failed write waits.
	Clock clock.WithTicker
	// NodePool names, in the jobs' scheduling conditions, the pool the scheduler serves:
	// with one scheduler per pool, a condition says which pool could not place the job.
	NodePool string
	// Metrics counts the writes made, failed and given up; nil records nothing.
	Metrics metrics.Recorder
	// Workers is how many writes Start keeps in flight (DefaultWorkers when zero).
	Workers int
	// StampGrace is how long Start goes on writing start stamps once its context ends;
	// whatever is left then is given up (counted and logged) and the next leader stamps
	// those jobs from their pods' start. Statuses are not written after the context ends:
	// the next leader derives them anew.
	StampGrace time.Duration

	mu sync.Mutex
	// queue hands targets to the workers while Start runs; nil before.
	queue    workqueue.TypedRateLimitingInterface[target]
	stopping bool
	// recordWritten is signalled when a record's write (isRecord) ends, for Start's last flush.
	recordWritten chan struct{}

	// stamps waiting to be written, per job.
	stamps map[model.JobID]jobStamps
	// evictions are the decisions that ended a job's run, per job, until its PodGroup shows
	// them counted (see QueueEvictionCount).
	evictions map[model.JobID][]countedEviction
	// pending holds the latest pending reasons per job (nil: clear the condition); written
	// what was last written, and when; promisedSince since when each job that waits only for
	// resources promised to it has done so, for its quiet period.
	pending       map[model.JobID][]model.PendingReason
	promisedSince map[model.JobID]time.Time
	written       map[model.JobID]writtenCondition
	// podsOf holds, per pending job, its waiting pods (namespace/name) to mark unschedulable.
	podsOf map[model.JobID][]string
	// queues holds what to report about each queue.
	queues map[string]*queueState
	// protections are the min-runtime protections to write (None: clear), per job; shown
	// what was written, until the informers show it (see SetProtections).
	protections map[model.JobID]model.ProtectionChange
	shown       map[model.JobID]writtenProtection
}

// NewUpdater returns an updater; Start performs its writes (Flush, in tools, at once).
func NewUpdater(c client.Client, recorder record.EventRecorder, clk clock.WithTicker) *Updater {
	return &Updater{
		Client: c, Recorder: recorder, Clock: clk, recordWritten: make(chan struct{}, 1),
		stamps: map[model.JobID]jobStamps{}, evictions: map[model.JobID][]countedEviction{}, pending: map[model.JobID][]model.PendingReason{}, written: map[model.JobID]writtenCondition{},
		promisedSince: map[model.JobID]time.Time{},
		podsOf:        map[model.JobID][]string{}, queues: map[string]*queueState{},
		protections: map[model.JobID]model.ProtectionChange{}, shown: map[model.JobID]writtenProtection{},
	}
}

// target is one object to write: a job's start stamp, a job's status, or a queue's status.
type target struct {
	kind targetKind
	name string
}

type targetKind int

const (
	stampTarget targetKind = iota
	evictionCountTarget
	jobStatusTarget
	queueStatusTarget
)

func (k targetKind) String() string {
	return [...]string{"start-stamp", "eviction-count", "podgroup-status", "queue-status"}[k]
}

// isRecord reports whether a target writes a record that nothing else can derive again:
// start and eviction stamps, eviction counts. Records go first and are written through the
// shutdown grace; everything else is derived anew each cycle.
func (k targetKind) isRecord() bool { return k == stampTarget || k == evictionCountTarget }

// stampsFirst orders the workers' queue: records (stamps, eviction counts) before everything
// else, each in the order it was queued.
type stampsFirst struct{ stamps, others []target }

func (q *stampsFirst) Touch(target) {}
func (q *stampsFirst) Len() int     { return len(q.stamps) + len(q.others) }

func (q *stampsFirst) Push(t target) {
	if t.kind.isRecord() {
		q.stamps = append(q.stamps, t)
	} else {
		q.others = append(q.others, t)
	}
}

func (q *stampsFirst) Pop() target {
	from := &q.others
	if len(q.stamps) > 0 {
		from = &q.stamps
	}
	t := (*from)[0]
	*from = (*from)[1:]
	return t
}

// mark queues a target for the workers, if they run; the caller holds u.mu.
func (u *Updater) mark(t target) {
	if u.queue != nil {
		u.queue.Add(t)
	}
}

// jobStamps are the annotations of a job to write, a zero time for none: the start stamp
// min-runtime counts from and the eviction stamp the preemption delay re-arms from. They go
// out in one patch, before any status.
type jobStamps struct{ start, evicted time.Time }

// QueueStartStamp schedules writing a job's start stamp. A newer stamp replaces a queued one.
func (u *Updater) QueueStartStamp(job model.JobID, at time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	s := u.stamps[job]
	s.start = at
	u.stamps[job] = s
	u.mark(target{stampTarget, string(job)})
}

// QueueEvictionStamp schedules writing when pods of a job were last evicted: the preemption
// delay counts from it, and the job's pods, the only other record, are deleted by the
// eviction. A later time replaces a queued one.
func (u *Updater) QueueEvictionStamp(job model.JobID, at time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	s := u.stamps[job]
	if at.After(s.evicted) {
		s.evicted = at
	}
	u.stamps[job] = s
	u.mark(target{stampTarget, string(job)})
}

// PendingWrites counts the writes not yet done, for tests.
func (u *Updater) PendingWrites() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.stamps) + len(u.evictions) + len(u.pending) + len(u.protections)
}

// targets lists everything there is to write, stamps first, each kind by name, so that a
// Flush writes in the same order every time.
func (u *Updater) targets() []target {
	var all []target
	for job := range u.stamps {
		all = append(all, target{stampTarget, string(job)})
	}
	for job := range u.evictions {
		all = append(all, target{evictionCountTarget, string(job)})
	}
	jobs := map[model.JobID]bool{}
	for job := range u.pending {
		jobs[job] = true
	}
	for job := range u.protections {
		jobs[job] = true
	}
	for job := range jobs {
		all = append(all, target{jobStatusTarget, string(job)})
	}
	for name := range u.queues {
		all = append(all, target{queueStatusTarget, name})
	}
	slices.SortFunc(all, func(a, b target) int { return cmp.Or(cmp.Compare(a.kind, b.kind), strings.Compare(a.name, b.name)) })
	return all
}

// Flush tries every write once, in order, in the caller's goroutine: kai-sim and tests run
// the updater this way, between cycles in virtual time. Failures and writes not due yet stay.
func (u *Updater) Flush(ctx context.Context) {
	u.mu.Lock()
	all := u.targets()
	u.mu.Unlock()
	for _, t := range all {
		_, _ = u.write(ctx, t)
	}
}

// Start writes from Workers goroutines until ctx ends, then goes on writing start stamps
// for up to StampGrace and returns. It implements controller-runtime's Runnable.
func (u *Updater) Start(ctx context.Context) error {
	writes, stopWrites := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWrites()
	// Named, the queue has client-go's workqueue_* metrics (depth, wait, retries), kept by
	// controller-runtime's process-wide provider beside those of its controllers' queues: they
	// are client-go's instrumentation of the queue, not the scheduler's metrics, and no
	// recorder of ours could register the same names beside controller-runtime's. Only a
	// scheduler that runs starts the queue: kai-sim flushes, explain has no updater.
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[target](retryBase, retryMax),
		workqueue.TypedRateLimitingQueueConfig[target]{Name: "kai_scheduler_status_writes", Clock: u.Clock,
			DelayingQueue: workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[target]{
				Name: "kai_scheduler_status_writes", Clock: u.Clock,
				Queue: workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[target]{
					Name: "kai_scheduler_status_writes", Clock: u.Clock, Queue: &stampsFirst{}}),
			})})
	u.mu.Lock()
	u.queue = queue
	for _, t := range u.targets() {
		queue.Add(t)
	}
	u.mu.Unlock()
	var workers sync.WaitGroup
	for range cmp.Or(u.Workers, DefaultWorkers) {
		workers.Go(func() { u.work(writes, queue) })
	}

	<-ctx.Done()
	u.mu.Lock()
	u.stopping = true
	u.mu.Unlock()
	grace := u.Clock.After(u.StampGrace)
	for u.StampGrace > 0 && u.stampsLeft() > 0 {
		select {
		case <-u.recordWritten:
			continue
		case <-grace:
		}
		break
	}
	queue.ShutDown()
	stopWrites() // a write still in flight is cut short: the scheduler is stopping
	workers.Wait()
	// What is left is given up, each under its own kind.
	u.mu.Lock()
	stamps, counts := len(u.stamps), u.evictionsUnsent()
	u.mu.Unlock()
	if stamps > 0 {
		metrics.OrDiscard(u.Metrics).StatusWritesGivenUp(stampTarget.String(), stamps)
	}
	if counts > 0 {
		metrics.OrDiscard(u.Metrics).StatusWritesGivenUp(evictionCountTarget.String(), counts)
	}
	if stamps+counts > 0 {
		// A lost eviction stamp only lets the job's preemption delay count from its creation;
		// a lost eviction count gives the job's next run the protection of one eviction fewer.
		klog.FromContext(ctx).Error(nil, "Start or eviction stamps, or eviction counts, not written before shutdown; the next leader stamps the running jobs from their pods' start",
			"count", stamps+counts, "grace", u.StampGrace)
	}
	return nil
}

// NeedLeaderElection: only the leader decides, so only the leader has anything to write.
func (u *Updater) NeedLeaderElection() bool { return true }

// stampsLeft counts the records not written yet. An eviction count waiting only to be
// confirmed is written: Start need not wait for the informer.
func (u *Updater) stampsLeft() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.stamps) + u.evictionsUnsent()
}

// work writes what the queue hands it until the queue shuts down. A failed write is queued
// again after its backoff; one not due yet (a condition rewritten too recently) when it is.
func (u *Updater) work(ctx context.Context, queue workqueue.TypedRateLimitingInterface[target]) {
	for {
		t, shutdown := queue.Get()
		if shutdown {
			return
		}
		after, err := u.write(ctx, t)
		switch {
		case err != nil:
			queue.AddRateLimited(t)
		case after > 0:
			queue.Forget(t)
			queue.AddAfter(t, after)
		default:
			queue.Forget(t)
		}
		queue.Done(t)
	}
}

// write performs what a target needs now. It returns how long until the rest of it is due
// (zero when nothing is left), or the error of a write to retry. Once the updater is
// stopping, only stamps are written; once its context has ended (the workers' ends only
// with the shutdown grace), nothing is, and what is left is given up, once, by Start.
func (u *Updater) write(ctx context.Context, t target) (time.Duration, error) {
	u.mu.Lock()
	stopping := u.stopping
	u.mu.Unlock()
	if ctx.Err() != nil {
		return 0, nil
	}
	if t.kind.isRecord() {
		defer func() {
			select {
			case u.recordWritten <- struct{}{}:
			default:
			}
		}()
	}
	var after time.Duration
	var err error
	switch {
	case t.kind == stampTarget:
		err = u.writeStamp(ctx, model.JobID(t.name))
	case t.kind == evictionCountTarget:
		after, err = u.writeEvictionCount(ctx, model.JobID(t.name))
	case stopping:
		return 0, nil
	case t.kind == jobStatusTarget:
		after, err = u.writeJobStatus(ctx, model.JobID(t.name))
	case t.kind == queueStatusTarget:
		after, err = u.writeQueueStatus(ctx, t.name)
	}
	switch {
	case err == nil || apierrors.IsNotFound(err): // a deleted object needs nothing written
		return after, nil
	case ctx.Err() != nil:
		return 0, nil // cut short at the end of the grace
	case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
		// The write itself is wrong: sending it again cannot help.
		metrics.OrDiscard(u.Metrics).StatusWritesGivenUp(t.kind.String(), 1)
		klog.FromContext(ctx).Error(err, "Status write refused; given up", "kind", t.kind, "object", t.name)
		u.drop(t)
		return 0, nil
	default:
		klog.FromContext(ctx).Error(err, "Status write failed; will retry", "kind", t.kind, "object", t.name)
		return 0, err
	}
}

// patch sends a merge patch to obj, or to its status, and counts it.
func (u *Updater) patch(ctx context.Context, kind targetKind, obj client.Object, status bool, data []byte) error {
	var err error
	if status {
		err = u.Client.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, data))
	} else {
		err = u.Client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, data))
	}
	metrics.OrDiscard(u.Metrics).StatusWritten(kind.String(), err != nil && !apierrors.IsNotFound(err))
	return err
}

// drop forgets what a target was to write.
func (u *Updater) drop(t target) {
	u.mu.Lock()
	defer u.mu.Unlock()
	switch t.kind {
	case stampTarget:
		delete(u.stamps, model.JobID(t.name))
	case evictionCountTarget:
		delete(u.evictions, model.JobID(t.name))
	case jobStatusTarget:
		delete(u.pending, model.JobID(t.name))
		delete(u.protections, model.JobID(t.name))
	case queueStatusTarget:
		delete(u.queues, t.name)
	}
}

// writeStamp sets the start stamp annotation with a merge patch: it touches nothing else and
// has no resource version, so it cannot conflict with other writers.
func (u *Updater) writeStamp(ctx context.Context, job model.JobID) error {
	u.mu.Lock()
	at, ok := u.stamps[job]
	u.mu.Unlock()
	if !ok {
		return nil // written by an earlier pass
	}
	annotations := map[string]string{}
	if !at.start.IsZero() {
		annotations[scheduling.LastStartTimestampAnnotation] = scheduling.FormatStartTime(at.start)
	}
	if !at.evicted.IsZero() {
		annotations[scheduling.LastEvictionTimestampAnnotation] = scheduling.FormatStartTime(at.evicted)
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	err := u.patch(ctx, stampTarget, job.PodGroupRef(), false, patch)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	u.mu.Lock()
	if u.stamps[job] == at {
		delete(u.stamps, job)
	}
	u.mu.Unlock()
	return err
}
