package minruntime

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/metrics"
)

// session is the plugin's state for one cycle: resolution caches and what it told pending
// jobs. It dies with the session.
type session struct {
	ssn      *framework.Session
	defaults Defaults
	method   ResolveMethod
	// preempt caches resolution per victim queue; reclaim per (reclaimer, victim) queue pair.
	preempt map[string]Resolution
	reclaim map[[2]string]Resolution
	// blocked holds, per action and pending job, the protected victims it was refused, for
	// its pending reason; each victim is counted once (see block).
	blocked  map[blockKey]*blockedBy
	reported map[api.JobID]bool
}

type blockKey struct {
	action    framework.ActionType
	preemptor api.JobID
}

// protection is why a victim may not go yet: its min-runtime, where that value was set, and
// when it ends.
type protection struct {
	victim api.JobID
	until  time.Time
	by     Resolution
}

// blockedBy are the protections a pending job ran into in one action: the earliest
// maxNamedVictims of them by end (then job), and how many there were in all.
type blockedBy struct {
	earliest []protection
	victims  map[api.JobID]bool
}

// maxNamedVictims bounds the victims a pending reason names: enough to act on, short enough
// to read in kubectl describe.
const maxNamedVictims = 3

func newSession(ssn *framework.Session, defaults Defaults, method ResolveMethod) *session {
	return &session{
		ssn: ssn, defaults: defaults, method: method,
		preempt:  map[string]Resolution{},
		reclaim:  map[[2]string]Resolution{},
		blocked:  map[blockKey]*blockedBy{},
		reported: map[api.JobID]bool{},
	}
}

// minRuntime resolves the min-runtime that applies to victim in this action.
func (s *session) minRuntime(action framework.ActionType, preemptor, victim *api.JobInfo) Resolution {
	switch action {
	case framework.Preempt:
		return s.preemptMinRuntime(victim.Queue)
	case framework.Reclaim:
		tree := s.ssn.Snapshot().Queues
		key := [2]string{preemptor.Queue, victim.Queue}
		r, ok := s.reclaim[key]
		if !ok {
			r = ReclaimMinRuntime(tree, s.method, preemptor.Queue, victim.Queue, s.defaults)
			s.reclaim[key] = r
		}
		return r
	}
	return Resolution{}
}

// preemptMinRuntime resolves, once per session and queue, the preempt min-runtime of a
// victim in the queue.
func (s *session) preemptMinRuntime(queue string) Resolution {
	r, ok := s.preempt[queue]
	if !ok {
		r = PreemptMinRuntime(s.ssn.Snapshot().Queues, queue, s.defaults)
		s.preempt[queue] = r
	}
	return r
}

// protectedUntil returns victim's protection against preemptor in this action, and whether
// it still holds at the session's now.
func (s *session) protectedUntil(action framework.ActionType, preemptor, victim *api.JobInfo) (protection, bool) {
	r := s.minRuntime(action, preemptor, victim)
	if r.Duration <= 0 {
		return protection{}, false
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
		return protection{}, false
	}
	p := protection{victim: victim.ID, until: start.Add(r.Duration), by: r}
	return p, now.Before(p.until)
}

// isPreemptible refuses a protected non-elastic victim and tells the preemptor until when.
func (s *session) isPreemptible(action framework.ActionType, preemptor, victim *api.JobInfo) bool {
	if action == framework.Allocate || IsElastic(victim) {
		return true
	}
	p, protected := s.protectedUntil(action, preemptor, victim)
	if protected {
		s.block(action, preemptor, p)
	}
	return !protected
}

// block records that a protection refused a victim to a preemptor: counted once per cycle
// (the victim search asks again for every candidate set, the metric counts victims), noted
// as a time the answer changes, and told in the preemptor's pending reason.
func (s *session) block(action framework.ActionType, preemptor *api.JobInfo, p protection) {
	key := blockKey{action, preemptor.ID}
	b := s.blocked[key]
	if b == nil {
		b = &blockedBy{victims: map[api.JobID]bool{}}
		s.blocked[key] = b
		s.ssn.SetPendingReasonFunc(preemptor.ID, reasonKey(action), func() api.PendingReason { return b.reason(action) })
	}
	if b.victims[p.victim] {
		return
	}
	b.victims[p.victim] = true
	s.ssn.RecordProtectedRefusal(action, p.until)
	if k, _ := slices.BinarySearchFunc(b.earliest, p, compareProtections); k < maxNamedVictims {
		b.earliest = slices.Insert(b.earliest, k, p)
		b.earliest = b.earliest[:min(len(b.earliest), maxNamedVictims)]
	}
}

func compareProtections(a, b protection) int {
	if c := a.until.Compare(b.until); c != 0 {
		return c
	}
	return strings.Compare(string(a.victim), string(b.victim))
}

// reasonKey keeps one min-runtime reason per action on a pending job.
func reasonKey(action framework.ActionType) string { return Name + "/" + string(action) }

// reason tells the pending job which protected jobs hold it back, where each min-runtime was
// set and until when; the first end is when the job can next hope to move.
func (b *blockedBy) reason(action framework.ActionType) api.PendingReason {
	var m strings.Builder
	fmt.Fprintf(&m, "%s: victims are protected by min-runtime: ", action)
	for i, p := range b.earliest {
		if i > 0 {
			m.WriteString(", ")
		}
		fmt.Fprintf(&m, "%s until %s (%s from %s)", p.victim, p.until.UTC().Format(time.RFC3339), p.by.Duration, p.by.Source())
	}
	if more := len(b.victims) - len(b.earliest); more > 0 {
		fmt.Fprintf(&m, " and %d more", more)
	}
	fmt.Fprintf(&m, "; the first protection ends at %s", b.earliest[0].until.UTC().Format(time.RFC3339))
	return api.PendingReason{Reason: api.ReasonMinRuntimeProtected, Message: m.String()}
}

// evictionNote tells a victim's owner how long the job ran, counted from the start this
// plugin trusts, and which min-runtime applied: the answer to "why was my job killed after
// three minutes?". Built by appending: reclaiming a large cluster evicts thousands of jobs.
func (s *session) evictionNote(action framework.ActionType, preemptor, victim *api.JobInfo) framework.EvictionNote {
	if action == framework.Allocate {
		return framework.EvictionNote{}
	}
	r := s.minRuntime(action, preemptor, victim)
	now := s.ssn.Now()
	start, known, _ := EffectiveStart(victim, now)
	b := make([]byte, 0, 160)
	if known {
		b = append(append(b, "it ran "...), now.Sub(start).Round(time.Second).String()...)
	} else {
		b = append(b, "its start is unknown"...)
	}
	minRuntime := func(b []byte) []byte {
		b = append(append(append(b, "its "...), action...), " min-runtime of "...)
		return append(append(append(b, r.Duration.String()...), " from "...), r.Source()...)
	}
	until := start.Add(r.Duration)
	switch {
	case r.Duration <= 0:
		b = append(append(append(append(b, "; no "...), action...), " min-runtime applied (0s from "...), r.Source()...)
		b = append(b, ')')
	case !known:
		b = append(minRuntime(append(b, ", so "...)), " could not protect it"...)
	case now.Before(until):
		// Only an elastic job loses pods while protected, and only those above its minimums.
		b = append(minRuntime(append(b, "; "...)), " protects it until "...)
		b = append(until.UTC().AppendFormat(b, time.RFC3339), ", so it keeps its minimum"...)
	default:
		b = append(minRuntime(append(b, "; "...)), " ended at "...)
		b = until.UTC().AppendFormat(b, time.RFC3339)
	}
	note := framework.EvictionNote{Text: string(b), RanKnown: known}
	if known {
		note.Ran = now.Sub(start)
	}
	return note
}

// reportProtected sets the protected-jobs gauge: per queue and action, the running jobs
// still within their min-runtime at the session's now (for reclaim, against some reclaimer).
func (s *session) reportProtected() {
	type key struct {
		queue  string
		action framework.ActionType
	}
	counts := map[key]int{}
	tree := s.ssn.Snapshot().Queues
	reclaim := map[string]Resolution{}
	now := s.ssn.Now()
	for _, job := range s.ssn.Snapshot().Jobs {
		if !job.Preemptible || job.CountActive() == 0 {
			continue // never a victim, or nothing running to protect
		}
		start, known, _ := EffectiveStart(job, now)
		if !known {
			continue
		}
		if now.Before(start.Add(s.preemptMinRuntime(job.Queue).Duration)) {
			counts[key{job.Queue, framework.Preempt}]++
		}
		r, ok := reclaim[job.Queue]
		if !ok {
			r = LongestReclaimMinRuntime(tree, s.method, job.Queue, s.defaults)
			reclaim[job.Queue] = r
		}
		if now.Before(start.Add(r.Duration)) {
			counts[key{job.Queue, framework.Reclaim}]++
		}
	}
	metrics.ProtectedJobs.Reset()
	for k, n := range counts {
		metrics.ProtectedJobs.WithLabelValues(k.queue, string(k.action)).Set(float64(n))
	}
}

// scenarioFilters returns the elastic filter for eviction actions.
func (s *session) scenarioFilters(action framework.ActionType, pendingJob *api.JobInfo) []framework.ScenarioFilter {
	if action == framework.Allocate {
		return nil
	}
	return []framework.ScenarioFilter{&elasticFilter{s: s, action: action}}
}
