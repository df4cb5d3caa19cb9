package scheduler

import (
	"context"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/metrics"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/status"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/store"
)

// Loop runs a cycle every Period against the cluster: snapshot, RunCycle, status.
type Loop struct {
	Builder *store.Builder
	Policy  *Policy
	Effects framework.Effects
	Status  *status.Updater
	// Events receives the problems with the cluster's objects the cycles find, each told
	// once (marked scheduling.ProblemEventAnnotation); nil posts none.
	Events record.EventRecorder
	Clock  clock.Clock
	Period time.Duration
	// Metrics receives what the cycles measure, the plugins' measures included; nil records
	// nothing.
	Metrics metrics.Recorder
	// Synced, when set, tell whether the informers feeding the builder's store have handed it
	// their initial lists; no cycle runs before they all have, or the first cycle would
	// schedule onto a cluster it has only half seen.
	Synced []toolscache.InformerSynced
	// Changes, when set, is signalled when the cluster changed in a way that may let a
	// waiting job move (store.Store.Changes): a cycle then runs without waiting out the
	// period, as kube-scheduler reacts to events.
	Changes <-chan struct{}

	// reported remembers the problems of the last cycle, so each is told once, not every
	// cycle; current collects this cycle's.
	reported, current map[string]bool
	// blockedSince holds, per job a min-runtime protection holds back, the cycle it began.
	blockedSince map[model.JobID]time.Time
}

// Start runs cycles until ctx ends. It never returns an error for a bad cycle: a failed
// snapshot is logged and retried next period.
func (l *Loop) Start(ctx context.Context) error {
	if !toolscache.WaitForCacheSync(ctx.Done(), l.Synced...) {
		return nil // stopped before the informers synced
	}
	for {
		result := l.RunOnce(ctx)
		ended := l.Clock.Now()
		select {
		case <-ctx.Done():
			return nil
		case <-l.Clock.After(nextCycle(ended, l.Period, result.AnswersChangeAt).Sub(ended)):
		case <-l.Changes:
			// Something may let a waiting job move: cycle now, or as soon as allowed.
			if wait := soonest(ended, l.Period).Sub(l.Clock.Now()); wait > 0 {
				select {
				case <-ctx.Done():
					return nil
				case <-l.Clock.After(wait):
				}
			}
		}
	}
}

// nextCycle is when the cycle after one that ended at ended starts, unless the cluster
// changes first (Changes): a period later or, if one of that cycle's answers changes sooner
// by the passing of time alone (the protection that held a victim back ends), then, so that
// the job waiting for it gets the resources as the protection ends rather than up to a
// period later; never sooner than soonest.
func nextCycle(ended time.Time, period time.Duration, changesAt time.Time) time.Time {
	next := ended.Add(period)
	if !changesAt.IsZero() && changesAt.Before(next) {
		next = changesAt
	}
	return latest(next, soonest(ended, period))
}

// soonest is the earliest a cycle may follow one that ended at ended, whatever asks for it:
// a tenth of a period, so that protections ending one after another, or a stream of changes,
// cannot make the scheduler spin.
func soonest(ended time.Time, period time.Duration) time.Time { return ended.Add(period / 10) }

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// RunOnce runs one cycle and returns what it has to report (empty when no snapshot could be
// taken).
func (l *Loop) RunOnce(ctx context.Context) CycleResult {
	log := klog.FromContext(ctx)
	began := l.Clock.Now()
	snapshot, problems, err := l.Builder.Snapshot(ctx)
	if err != nil {
		log.Error(err, "Taking a snapshot failed; skipping this cycle")
		return CycleResult{}
	}
	l.report(ctx, problems)
	result := Cycle{Clock: l.Clock, Policy: l.Policy, Effects: l.Effects, Metrics: l.Metrics}.Run(ctx, snapshot)
	l.Status.SetPending(result.PendingReasons, unschedulablePods(snapshot, result.PendingReasons))
	l.Status.SetQueues(queueReports(snapshot, result.QueueShares))
	l.Status.SetProtections(result.ProtectionChanges)
	for _, c := range result.ProtectionChanges {
		// Told when the status changes, which a declined annotation's job's first run does.
		for _, line := range c.Protection.Declined() {
			l.once(string(c.Job)+line, func() {
				log.Info("Min-runtime annotation not honoured", "job", c.Job, "reason", line)
				l.problem(c.Job.PodGroupRef(), model.ReasonMinRuntimeNotShortened, line)
			})
		}
	}
	for _, p := range result.QueueProblems {
		l.once(p.Queue+p.Message, func() {
			log.Info("Queue cannot be scheduled", "queue", p.Queue, "reason", p.Message)
			l.problem(model.QueueRef(p.Queue), "InvalidQueue", p.Message)
		})
	}
	l.endReports()
	recorder := metrics.OrDiscard(l.Metrics)
	l.observeProtectionWaits(recorder, began, result.PendingReasons)
	recorder.QueueShares(shareSeries(result.QueueShares))
	recorder.CycleEnded(l.Clock.Since(began), len(result.PendingReasons), len(result.QueueProblems))
	return result
}

// shareSeries turns the cycle's queue shares into the metrics' series: one per queue and
// quota resource, named as a Queue's spec names it, in base units (CPU cores, not
// millicores).
func shareSeries(shares map[string]model.QueueShare) map[metrics.QueueResource]metrics.QueueAmounts {
	series := make(map[metrics.QueueResource]metrics.QueueAmounts, len(shares)*model.NumQuotaResources)
	for queue, s := range shares {
		for _, r := range model.QuotaResources {
			unit := 1.0
			switch r {
			case model.CPU:
				unit = 1000 // millicores
			case model.GPU:
				unit = model.MilliGPU
			}
			series[metrics.QueueResource{Queue: queue, Resource: model.QueueSpecKey(r)}] = metrics.QueueAmounts{
				Allocated: s.Allocated[r] / unit, Deserved: s.Deserved[r] / unit, FairShare: s.FairShare[r] / unit}
		}
	}
	return series
}

// observeProtectionWaits times how long jobs are held back by min-runtime: from the first
// cycle that told a job it waits on a protection to the first that did not (it got its
// resources, waits for something else, or is gone).
func (l *Loop) observeProtectionWaits(recorder metrics.Recorder, now time.Time, pending map[model.JobID][]model.PendingReason) {
	if l.blockedSince == nil {
		l.blockedSince = map[model.JobID]time.Time{}
	}
	protected := func(r model.PendingReason) bool { return r.Reason == model.ReasonMinRuntimeProtected }
	for job, reasons := range pending {
		if _, seen := l.blockedSince[job]; !seen && slices.ContainsFunc(reasons, protected) {
			l.blockedSince[job] = now
		}
	}
	for job, since := range l.blockedSince {
		if !slices.ContainsFunc(pending[job], protected) {
			recorder.ProtectionWaitEnded(now.Sub(since))
			delete(l.blockedSince, job)
		}
	}
}

func (l *Loop) report(ctx context.Context, problems []store.Problem) {
	for _, p := range problems {
		key := string(p.Object.GetUID()) + p.Object.GetNamespace() + "/" + p.Object.GetName() + p.Reason + p.Message
		l.once(key, func() {
			klog.FromContext(ctx).Info("Problem in cluster objects", "object", p.Object.GetNamespace()+"/"+p.Object.GetName(),
				"reason", p.Reason, "message", p.Message)
			l.problem(p.Object, p.Reason, p.Message)
		})
	}
}

// problem posts a Warning event about a problem with one of the cluster's objects.
func (l *Loop) problem(object runtime.Object, reason, message string) {
	if l.Events != nil {
		l.Events.AnnotatedEventf(object, scheduling.ProblemEventAnnotations(), v1.EventTypeWarning, reason, "%s", message)
	}
}

func (l *Loop) once(key string, report func()) {
	if l.current == nil {
		l.current = map[string]bool{}
	}
	l.current[key] = true
	if !l.reported[key] {
		report()
	}
}

// endReports forgets problems that went away, so the memory holds only today's problems
// (and a problem that comes back is told again).
func (l *Loop) endReports() {
	l.reported, l.current = l.current, nil
}

// unschedulablePods lists, per pending job that asks for it, its pods still waiting, to be
// marked PodScheduled=False for cluster autoscalers.
func unschedulablePods(s *model.Snapshot, pending map[model.JobID][]model.PendingReason) map[model.JobID][]string {
	pods := map[model.JobID][]string{}
	for id := range pending {
		job := s.Job(id)
		if job == nil || !job.MarkUnschedulable {
			continue
		}
		for _, p := range job.PendingPods() {
			pods[id] = append(pods[id], p.Key())
		}
	}
	return pods
}
