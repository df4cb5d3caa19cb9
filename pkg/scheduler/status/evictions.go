package status

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/metrics"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// countedEviction is one decision that ended a job's run: by which action, decided when.
type countedEviction struct {
	action model.ActionType
	at     time.Time
	// sent is set once a write that counts it succeeded; it stays queued until the PodGroup
	// as the client reads it shows it, but it no longer holds back a shutdown.
	sent bool
	// written is set once a write that counts it went out, whatever its answer: a decision
	// the PodGroup shows later was counted by this updater then, not before it was queued
	// (a pod of its run evicted after its count was confirmed queues it again).
	written bool
}

// confirmAfter is how long after writing a count the updater looks again: the decisions stay
// queued until the PodGroup as the client reads it shows them, so that a write computed from
// a copy that lags one behind can never lose one.
const confirmAfter = time.Second

// QueueEvictionCount schedules counting, on the job's PodGroup status and in the runs-ended
// metric, a run the scheduler ended by preempt or reclaim, decided at at (the session's now).
// The dispatcher tells it for every pod of the run; the decision counts once.
func (u *Updater) QueueEvictionCount(job model.JobID, action model.ActionType, at time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	// To the microsecond, as the status keeps it: read back, it must not look later.
	e := countedEviction{action: action, at: at.Truncate(time.Microsecond)}
	if slices.ContainsFunc(u.evictions[job], func(q countedEviction) bool { return q.action == e.action && q.at.Equal(e.at) }) {
		return
	}
	u.evictions[job] = append(u.evictions[job], e)
	u.mark(target{evictionCountTarget, string(job)})
}

// writeEvictionCount adds the job's queued decisions to the count its PodGroup shows. The
// count is a sum, and the status has no other writer, so each decision is added only if it
// is later than the last one counted (status.evictions.last): a write sent again after a lost
// answer, or computed from a copy that does not show the previous write yet, adds nothing
// twice. The decisions stay queued until the copy shows them counted.
func (u *Updater) writeEvictionCount(ctx context.Context, job model.JobID) (time.Duration, error) {
	u.mu.Lock()
	queued := slices.Clone(u.evictions[job])
	u.mu.Unlock()
	if len(queued) == 0 {
		return 0, nil
	}
	pg := &v2alpha2.PodGroup{}
	if err := u.Client.Get(ctx, client.ObjectKeyFromObject(job.PodGroupRef()), pg); err != nil {
		if apierrors.IsNotFound(err) {
			u.forgetEvictions(job, nil) // the job is gone, and its count with it
		}
		return 0, err
	}
	var shown v2alpha2.EvictionCount
	if c := pg.Status.Evictions; c != nil {
		shown = *c
	}
	count := shown
	for _, e := range queued {
		if !e.at.After(shown.Last.Time) {
			continue // counted already
		}
		if e.action == model.Preempt {
			count.Preempt++
		} else {
			count.Reclaim++
		}
		if e.at.After(count.Last.Time) {
			count.Last = metav1.NewMicroTime(e.at)
		}
	}
	if count.Last.Equal(&shown.Last) {
		u.mu.Lock()
		u.recordRunsEnded(job, shown.Last.Time) // those whose write's answer was lost
		u.mu.Unlock()
		u.forgetEvictions(job, &shown.Last.Time)
		return 0, nil
	}
	count.Total = count.Preempt + count.Reclaim
	u.mu.Lock()
	for i, e := range u.evictions[job] {
		if e.at.After(shown.Last.Time) && !e.at.After(count.Last.Time) {
			u.evictions[job][i].written = true
		}
	}
	u.mu.Unlock()
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"evictions": count}})
	if err := u.patch(ctx, evictionCountTarget, job.PodGroupRef(), true, patch); err != nil {
		if apierrors.IsNotFound(err) {
			u.forgetEvictions(job, nil) // deleted since it was read: nothing will ever show them
		}
		return 0, err
	}
	u.mu.Lock()
	u.recordRunsEnded(job, count.Last.Time)
	for i, e := range u.evictions[job] {
		if !e.at.After(count.Last.Time) {
			u.evictions[job][i].sent = true
		}
	}
	u.mu.Unlock()
	return confirmAfter, nil
}

// recordRunsEnded counts in the runs-ended metric, once each, the job's decisions up to
// counted that a write went out for and that are not counted yet: the metric counts what
// status.evictions counts, so a decision queued again after the PodGroup showed it, never
// written again, is not counted twice. The caller holds u.mu.
func (u *Updater) recordRunsEnded(job model.JobID, counted time.Time) {
	for i, e := range u.evictions[job] {
		if e.written && !e.sent && !e.at.After(counted) {
			metrics.OrDiscard(u.Metrics).RunEnded(string(e.action))
			u.evictions[job][i].sent = true
		}
	}
}

// evictionsUnsent counts the jobs with a decision not yet written; the caller holds u.mu.
func (u *Updater) evictionsUnsent() int {
	n := 0
	for _, queued := range u.evictions {
		if slices.ContainsFunc(queued, func(e countedEviction) bool { return !e.sent }) {
			n++
		}
	}
	return n
}

// forgetEvictions drops the job's queued decisions up to counted (all when nil).
func (u *Updater) forgetEvictions(job model.JobID, counted *time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	left := slices.DeleteFunc(u.evictions[job], func(e countedEviction) bool { return counted == nil || !e.at.After(*counted) })
	if len(left) == 0 {
		delete(u.evictions, job)
		return
	}
	u.evictions[job] = left
}
