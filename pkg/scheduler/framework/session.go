package framework

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/metrics"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// Session is one scheduling cycle over a snapshot. It reads the clock once when it opens:
// every decision of the cycle uses that same Now, so nothing can flip halfway through.
type Session struct {
	snapshot *model.Snapshot
	now      time.Time
	log      logr.Logger
	plugins  []Plugin
	effects  Effects
	metrics  metrics.Recorder
	hooks    hooks
	// pendingReasons explains, per job, why it is still waiting after the actions ran.
	pendingReasons map[model.JobID][]pendingReason
	// gainedByEviction holds the jobs that were given resources freed by evicting others in
	// this cycle; they are not victims in the same cycle.
	gainedByEviction map[model.JobID]bool
	// protectedRefusals counts, per action, victims refused because a protection held.
	protectedRefusals map[ActionType]int
	// answersChangeAt is the earliest time an answer given in this session changes by the
	// passing of time alone (see NoteAnswerChangesAt); zero while none does.
	answersChangeAt time.Time
}

// SessionOptions are what a session is opened with.
type SessionOptions struct {
	// Snapshot is the cluster state; the session changes it in place.
	Snapshot *model.Snapshot
	// Clock is read once, at open.
	Clock clock.PassiveClock
	// Plugins in configuration order.
	Plugins []Plugin
	// Effects receives committed decisions.
	Effects Effects
	// Metrics receives what the plugins measure (Session.Metrics); nil records nothing, as
	// for kubectl kai explain, whose sessions are about a cluster, not run by its scheduler.
	Metrics metrics.Recorder
}

// OpenSession freezes now from the clock and lets every plugin register its hooks, in order.
func OpenSession(ctx context.Context, opts SessionOptions) *Session {
	ssn := &Session{
		snapshot:       opts.Snapshot,
		now:            opts.Clock.Now(),
		log:            klog.FromContext(ctx),
		plugins:        opts.Plugins,
		effects:        opts.Effects,
		metrics:        metrics.OrDiscard(opts.Metrics),
		pendingReasons: map[model.JobID][]pendingReason{},

		gainedByEviction:  map[model.JobID]bool{},
		protectedRefusals: map[ActionType]int{},
	}
	for _, p := range ssn.plugins {
		p.OnSessionOpen(ssn)
	}
	return ssn
}

// Close lets plugins finish in reverse order of opening and drops their hooks.
func (ssn *Session) Close() {
	for i := len(ssn.plugins) - 1; i >= 0; i-- {
		ssn.plugins[i].OnSessionClose(ssn)
	}
	ssn.hooks = hooks{}
}

// Now is the session's frozen time.
func (ssn *Session) Now() time.Time {
	return ssn.now
}

// Snapshot is the cluster state the session works on.
func (ssn *Session) Snapshot() *model.Snapshot {
	return ssn.snapshot
}

// Metrics is where plugins record what they measure: the scheduler's recorder, handed down
// through the session (as kube-scheduler's framework handle carries its metrics recorder),
// never a process-wide metric, so that a tool running a session moves no metric.
func (ssn *Session) Metrics() metrics.Recorder {
	return ssn.metrics
}

// Logger is the session's logger.
func (ssn *Session) Logger() logr.Logger {
	return ssn.log
}

// pendingReason is one explanation, replaceable by its key: a reason, or a teller that
// tells it when it is read (see SetPendingReasonTeller).
type pendingReason struct {
	key    string
	reason model.PendingReason
	teller ReasonTeller
}

// ReasonTeller tells a pending reason when it is read (see SetPendingReasonTeller).
type ReasonTeller interface {
	PendingReason() model.PendingReason
}

// SetPendingReason records a reason of the plugin's own kind (not model.ReasonUnschedulable)
// under a key, replacing an earlier one with the same key: one reason per cause, however
// often a plugin is asked in a cycle.
func (ssn *Session) SetPendingReason(job model.JobID, key string, reason model.PendingReason) {
	ssn.setPendingReason(job, pendingReason{key: key, reason: reason})
}

// RecordPendingReason notes why a job could not be scheduled in this cycle (as
// model.ReasonUnschedulable), for the status updater and for tests. Repeated reasons are kept
// once.
func (ssn *Session) RecordPendingReason(job model.JobID, message string) {
	ssn.setPendingReason(job, pendingReason{key: message, reason: model.Unschedulable(message)})
}

// CopyPendingReasons tells job what from was told: an action that skips a job knowing it
// fails as one of the same shape did (see actions.ShapeKey) gives it the same reasons, the
// protections that refused the first among them.
func (ssn *Session) CopyPendingReasons(from, job model.JobID) {
	for _, r := range ssn.pendingReasons[from] {
		ssn.setPendingReason(job, r)
	}
}

// SetPendingReasonTeller records a reason under a key, replacing an earlier one with the same
// key, for a reason that keeps changing while the actions run (a count, the earliest of many
// times): the teller is asked only when the reasons are read, so a plugin keeps one
// up-to-date summary, updates its state as often as it likes and formats once.
func (ssn *Session) SetPendingReasonTeller(job model.JobID, key string, teller ReasonTeller) {
	ssn.setPendingReason(job, pendingReason{key: key, teller: teller})
}

func (ssn *Session) setPendingReason(job model.JobID, r pendingReason) {
	reasons := ssn.pendingReasons[job]
	for i := range reasons {
		if reasons[i].key == r.key {
			reasons[i] = r
			return
		}
	}
	ssn.pendingReasons[job] = append(reasons, r)
}

// PendingReasons returns the reasons recorded for a job, in the order they were first found.
func (ssn *Session) PendingReasons(job model.JobID) []model.PendingReason {
	var reasons []model.PendingReason
	for _, r := range ssn.pendingReasons[job] {
		if r.teller != nil {
			reasons = append(reasons, r.teller.PendingReason())
		} else {
			reasons = append(reasons, r.reason)
		}
	}
	return reasons
}

// evicted records that pods of job were evicted now, as its PodGroup will record it: its
// preemption delay re-arms from now for the rest of the cycle too (a job reclaimed by one
// action would otherwise evict others in the next action of the same cycle).
func (ssn *Session) evicted(id model.JobID) {
	if job := ssn.snapshot.Job(id); job != nil {
		at := ssn.now
		job.LastEvictionTimestamp = &at
	}
}

// MarkGainedByEviction records that job got resources by evicting others in this cycle.
func (ssn *Session) MarkGainedByEviction(job model.JobID) {
	ssn.gainedByEviction[job] = true
}

// GainedByEviction reports whether job got resources by evicting others in this cycle, which
// makes it no victim until the next cycle: evicting it would undo the decision that made it.
func (ssn *Session) GainedByEviction(job model.JobID) bool {
	return ssn.gainedByEviction[job]
}

// RecordProtectedRefusal notes that a plugin refused a victim to a preemptor in action
// because a protection (min-runtime) still held until the given time, so that operators can
// see how often protection holds a reclaim or preemption back. Plugins record each victim
// once per preemptor and cycle, however often the victim search asks (and the search asks
// once for jobs of one shape, see actions.ShapeKey). The refusal goes to the metrics the way
// every plugin measure does (Metrics), and is counted for the cycle's result.
func (ssn *Session) RecordProtectedRefusal(action ActionType, until time.Time) {
	ssn.protectedRefusals[action]++
	ssn.metrics.MinRuntimeRefused(string(action), 1)
	ssn.NoteAnswerChangesAt(until)
}

// NoteAnswerChangesAt tells the session that an answer a plugin gave in it (a victim refused
// while its protection holds, a start stamp ignored while it lies in the future) will be
// different from time t on, with nothing else changed. A plugin whose answers depend on now
// must note every such time: AnswersChangeAt is only as true as these notes.
func (ssn *Session) NoteAnswerChangesAt(t time.Time) {
	if t.After(ssn.now) && (ssn.answersChangeAt.IsZero() || t.Before(ssn.answersChangeAt)) {
		ssn.answersChangeAt = t
	}
}

// AnswersChangeAt is the earliest time noted by NoteAnswerChangesAt, or zero. Until then, a
// session opened on the same cluster state asks the same questions, gets the same answers
// and so makes the same decisions: a cycle on an unchanged cluster before that time has
// nothing to do.
func (ssn *Session) AnswersChangeAt() time.Time {
	return ssn.answersChangeAt
}

// ProtectedRefusals returns the refusals recorded so far, per action.
func (ssn *Session) ProtectedRefusals() map[ActionType]int {
	return ssn.protectedRefusals
}
