package minruntime

import (
	"fmt"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
)

// session is the plugin's state for one cycle: resolution caches and what it told pending
// jobs. It dies with the session.
type session struct {
	ssn      *framework.Session
	defaults Defaults
	method   ResolveMethod
	// preempt caches resolution per victim queue; reclaim per (reclaimer, victim) queue pair.
	preempt map[string]time.Duration
	reclaim map[[2]string]time.Duration
	// waitUntil is, per pending job, the earliest end of protection among the victims it was
	// refused, for its pending reason.
	waitUntil map[api.JobID]time.Time
	reported  map[api.JobID]bool
	// refused holds the (action, preemptor, victim) refusals already counted this cycle: the
	// victim search asks again for every candidate set, the metric counts victims.
	refused map[refusal]bool
}

type refusal struct {
	action            framework.ActionType
	preemptor, victim api.JobID
}

// refuse counts a protected victim refused to a preemptor, once per cycle, and when the
// protection that refused it ends.
func (s *session) refuse(action framework.ActionType, preemptor, victim *api.JobInfo, until time.Time) {
	key := refusal{action, preemptor.ID, victim.ID}
	if !s.refused[key] {
		s.refused[key] = true
		s.ssn.RecordProtectedRefusal(action, until)
	}
}

func newSession(ssn *framework.Session, defaults Defaults, method ResolveMethod) *session {
	return &session{
		ssn: ssn, defaults: defaults, method: method,
		preempt:   map[string]time.Duration{},
		reclaim:   map[[2]string]time.Duration{},
		waitUntil: map[api.JobID]time.Time{},
		reported:  map[api.JobID]bool{},
		refused:   map[refusal]bool{},
	}
}

// minRuntime resolves the min-runtime that applies to victim in this action.
func (s *session) minRuntime(action framework.ActionType, preemptor, victim *api.JobInfo) time.Duration {
	tree := s.ssn.Snapshot().Queues
	switch action {
	case framework.Preempt:
		d, ok := s.preempt[victim.Queue]
		if !ok {
			d = PreemptMinRuntime(tree, victim.Queue, s.defaults)
			s.preempt[victim.Queue] = d
		}
		return d
	case framework.Reclaim:
		key := [2]string{preemptor.Queue, victim.Queue}
		d, ok := s.reclaim[key]
		if !ok {
			d = ReclaimMinRuntime(tree, s.method, preemptor.Queue, victim.Queue, s.defaults)
			s.reclaim[key] = d
		}
		return d
	}
	return 0
}

// protectedUntil returns when victim's protection against preemptor ends in this action, and
// whether it is still protected at the session's now.
func (s *session) protectedUntil(action framework.ActionType, preemptor, victim *api.JobInfo) (time.Time, bool) {
	d := s.minRuntime(action, preemptor, victim)
	if d <= 0 {
		return time.Time{}, false
	}
	now := s.ssn.Now()
	start, known, note := EffectiveStart(victim, now)
	if stamp := victim.LastStartTimestamp; stamp != nil && stamp.After(now) {
		s.ssn.NoteAnswerChangesAt(*stamp) // from then on the stamp counts, not the pods' start
	}
	if note != "" && !s.reported[victim.ID] {
		s.reported[victim.ID] = true
		s.ssn.Logger().Info("Start stamp not trusted for min-runtime", "job", victim.ID, "reason", note)
	}
	if !known {
		return time.Time{}, false
	}
	until := start.Add(d)
	return until, now.Before(until)
}

// isPreemptible refuses a protected non-elastic victim and tells the preemptor until when.
func (s *session) isPreemptible(action framework.ActionType, preemptor, victim *api.JobInfo) bool {
	if action == framework.Allocate || IsElastic(victim) {
		return true
	}
	until, protected := s.protectedUntil(action, preemptor, victim)
	if protected {
		s.noteWait(action, preemptor, until)
		s.refuse(action, preemptor, victim, until)
	}
	return !protected
}

// noteWait keeps one pending reason per preemptor: the earliest time a refused victim
// becomes evictable.
func (s *session) noteWait(action framework.ActionType, preemptor *api.JobInfo, until time.Time) {
	if earliest, seen := s.waitUntil[preemptor.ID]; seen && !until.Before(earliest) {
		return
	}
	s.waitUntil[preemptor.ID] = until
	s.ssn.SetPendingReason(preemptor.ID, Name, fmt.Sprintf(
		"%s: victims are protected by min-runtime; the first protection ends at %s",
		action, until.UTC().Format(time.RFC3339)))
}

// scenarioFilters returns the elastic filter for eviction actions.
func (s *session) scenarioFilters(action framework.ActionType, pendingJob *api.JobInfo) []framework.ScenarioFilter {
	if action == framework.Allocate {
		return nil
	}
	return []framework.ScenarioFilter{&elasticFilter{s: s, action: action}}
}
