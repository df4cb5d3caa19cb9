package minruntime

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/metrics"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// session is the plugin's state for one cycle: resolution caches and what it told pending
// jobs. It dies with the session.
type session struct {
	ssn        *framework.Session
	defaults   Defaults
	method     ResolveMethod
	escalation Escalation
	// preempt caches resolution per victim queue; reclaim per (reclaimer, victim) queue pair.
	preempt map[string]Resolution
	reclaim map[[2]string]Resolution
	// levels caches ReclaimLevels per victim queue, shared by the queue's jobs; escalations
	// the escalation per victim queue.
	levels      map[string][]model.ReclaimLevel
	escalations map[string]Escalation
	// blocked holds, per action and pending job, the protected victims it was refused, for
	// its pending reason; lastRefused, per action and victim, the preemptor it was last
	// refused to, so that each victim counts once per preemptor however often the search asks.
	// The victim search runs one preemptor at a time, so a victim asked about again for the
	// same preemptor is the same refusal. (A set of every refused pair would grow with their
	// product: thousands of reclaimers waiting on thousands of protected jobs.)
	blocked     map[blockKey]*blockedBy
	lastRefused map[refusedVictim]model.JobID
	reported    map[model.JobID]bool
}

type refusedVictim struct {
	action framework.ActionType
	victim model.JobID
}

type blockKey struct {
	action    framework.ActionType
	preemptor model.JobID
}

// protection is a victim's min-runtime against one preemptor: the value and where it was
// set, the start it counts from and when it ends. The start is looked up only when a
// min-runtime applies (see protectionOf).
type protection struct {
	victim     model.JobID
	by         Resolution
	start      time.Time
	startKnown bool
	until      time.Time
}

// holds reports whether the protection still holds at now.
func (p protection) holds(now time.Time) bool {
	return p.by.Duration > 0 && p.startKnown && now.Before(p.until)
}

// blockedBy are the protections a pending job ran into in one action: the earliest
// maxNamedVictims of them by end (then job), and how many there were in all. It tells the
// job's pending reason when the cycle reads it.
type blockedBy struct {
	action   framework.ActionType
	earliest [maxNamedVictims]protection
	named    int
	count    int
	// longest is the longest min-runtime among all the protections counted.
	longest time.Duration
	// told is the reason as last told, until a protection is added: jobs of one shape share
	// a teller (framework.Session.CopyPendingReasons), and it is formatted once for all.
	told *model.PendingReason
}

// maxNamedVictims bounds the victims a pending reason names: enough to act on, short enough
// to read in kubectl describe.
const maxNamedVictims = 3

func newSession(ssn *framework.Session, defaults Defaults, method ResolveMethod, escalation Escalation) *session {
	return &session{
		ssn: ssn, defaults: defaults, method: method, escalation: escalation,
		preempt:     map[string]Resolution{},
		reclaim:     map[[2]string]Resolution{},
		levels:      map[string][]model.ReclaimLevel{},
		escalations: map[string]Escalation{},
		blocked:     map[blockKey]*blockedBy{},
		lastRefused: map[refusedVictim]model.JobID{},
		reported:    map[model.JobID]bool{},
	}
}

// minRuntime resolves the min-runtime that applies to victim in this action: the queues' (or
// the default), escalated for the victim's past evictions, shortened by its own annotation.
func (s *session) minRuntime(action framework.ActionType, preemptor, victim *model.JobInfo) Resolution {
	switch action {
	case framework.Preempt:
		return s.ownPreempt(victim)
	case framework.Reclaim:
		return s.ownReclaim(preemptor, victim)
	case framework.Consolidation:
		// A move restarts the job: it is held to every protection it has against this
		// preemptor, the end its status shows, whichever way it would otherwise be taken.
		r := s.ownPreempt(victim)
		if preemptor.Queue != victim.Queue {
			if reclaim := s.ownReclaim(preemptor, victim); reclaim.Duration > r.Duration {
				r = reclaim
			}
		}
		return r
	}
	return Resolution{}
}

// ownReclaim is the victim's reclaim min-runtime against the preemptor's queue: the queues'
// (memoized per pair), escalated, then shortened.
func (s *session) ownReclaim(preemptor, victim *model.JobInfo) Resolution {
	key := [2]string{preemptor.Queue, victim.Queue}
	r, ok := s.reclaim[key]
	if !ok {
		r = ReclaimMinRuntime(s.ssn.Snapshot().Queues, s.method, preemptor.Queue, victim.Queue, s.defaults)
		s.reclaim[key] = r
	}
	// After the memo: it holds the queues' value, which each victim then escalates and shortens.
	return ShortenReclaim(s.escalationOf(victim.Queue).Escalate(r, victim.Evictions.Total()), victim)
}

// ownPreempt is the job's preempt min-runtime: its queue's, escalated, then shortened.
func (s *session) ownPreempt(job *model.JobInfo) Resolution {
	return ShortenPreempt(s.escalationOf(job.Queue).Escalate(s.preemptMinRuntime(job.Queue), job.Evictions.Total()), job)
}

// escalationOf resolves, once per session and queue, the escalation of the queue's jobs.
func (s *session) escalationOf(queue string) Escalation {
	e, ok := s.escalations[queue]
	if !ok {
		e = s.escalation.For(s.ssn.Snapshot().Queues, queue)
		s.escalations[queue] = e
	}
	return e
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

// protectionOf returns victim's protection against preemptor in this action. A zero
// min-runtime protects whatever the start, so the start is left unknown then: the victim
// search asks for every candidate, and most configurations set no min-runtime for most.
func (s *session) protectionOf(action framework.ActionType, preemptor, victim *model.JobInfo) protection {
	p := protection{victim: victim.ID, by: s.minRuntime(action, preemptor, victim)}
	if p.by.Duration > 0 {
		p.start, p.startKnown = s.effectiveStart(victim)
		p.until = p.start.Add(p.by.Duration)
	}
	return p
}

// effectiveStart is the start min-runtime counts from (see EffectiveStart). A stamp in the
// future is noted as a time the answers change; a stamp not trusted is logged once.
func (s *session) effectiveStart(victim *model.JobInfo) (time.Time, bool) {
	now := s.ssn.Now()
	start, known, note := EffectiveStart(victim, now)
	if stamp := victim.LastStartTimestamp; stamp != nil && stamp.After(now) {
		s.ssn.NoteAnswerChangesAt(*stamp) // from then on the stamp counts, not the pods' start
	}
	if note != "" && !s.reported[victim.ID] {
		s.reported[victim.ID] = true
		s.ssn.Logger().Info("Start stamp not trusted for min-runtime", "job", victim.ID, "reason", note)
	}
	return start, known
}

// isPreemptible refuses a protected non-elastic victim and tells the preemptor until when.
// The victim search asks for every candidate, so the verdict is one constant refusal; the
// preemptor's pending reason names the victims and when each protection ends.
func (s *session) isPreemptible(action framework.ActionType, preemptor, victim *model.JobInfo) framework.Status {
	if action == framework.Allocate || IsElastic(victim) {
		return framework.Status{}
	}
	p := s.protectionOf(action, preemptor, victim)
	if p.holds(s.ssn.Now()) {
		s.block(action, preemptor, p)
		return protected
	}
	return framework.Status{}
}

// protected is the verdict on a victim its min-runtime protects.
var protected = framework.NewStatus(framework.Unschedulable, "the victim is protected by its min-runtime")

// block records that a protection refused a victim to a preemptor: counted once per cycle
// (the victim search asks again for every candidate set, the metric counts victims), noted
// as a time the answer changes, and told in the preemptor's pending reason.
func (s *session) block(action framework.ActionType, preemptor *model.JobInfo, p protection) {
	r := refusedVictim{action, p.victim}
	if s.lastRefused[r] == preemptor.ID {
		return
	}
	s.lastRefused[r] = preemptor.ID
	s.ssn.RecordProtectedRefusal(action, p.until)
	key := blockKey{action, preemptor.ID}
	b := s.blocked[key]
	if b == nil {
		b = &blockedBy{action: action}
		s.blocked[key] = b
		s.ssn.SetPendingReasonTeller(preemptor.ID, reasonKeys[action], b)
	}
	b.add(p)
}

// reasonKeys keep one min-runtime reason per action on a pending job.
var reasonKeys = map[framework.ActionType]string{
	framework.Reclaim:       Name + "/" + string(framework.Reclaim),
	framework.Preempt:       Name + "/" + string(framework.Preempt),
	framework.Consolidation: Name + "/" + string(framework.Consolidation),
}

// add counts a protection and keeps it if it is among the earliest to end.
func (b *blockedBy) add(p protection) {
	b.count++
	b.longest = max(b.longest, p.by.Duration)
	b.told = nil
	k, _ := slices.BinarySearchFunc(b.earliest[:b.named], p, compareProtections)
	if k >= maxNamedVictims {
		return
	}
	b.named = min(b.named+1, maxNamedVictims)
	copy(b.earliest[k+1:b.named], b.earliest[k:b.named-1])
	b.earliest[k] = p
}

func compareProtections(a, b protection) int {
	if c := a.until.Compare(b.until); c != 0 {
		return c
	}
	return strings.Compare(string(a.victim), string(b.victim))
}

// PendingReason tells the pending job which protected jobs hold it back, where each
// min-runtime was set and until when; the first end is when the job can next hope to move.
func (b *blockedBy) PendingReason() model.PendingReason {
	if b.told != nil {
		return *b.told
	}
	action := b.action
	var m strings.Builder
	fmt.Fprintf(&m, "%s: victims are protected by min-runtime: ", action)
	for i, p := range b.earliest[:b.named] {
		if i > 0 {
			m.WriteString(", ")
		}
		fmt.Fprintf(&m, "%s until %s (%s from %s%s)", p.victim, model.FormatEnd(p.until), p.by.Duration, p.by.Source(), p.by.EscalationNote())
	}
	if more := b.count - b.named; more > 0 {
		fmt.Fprintf(&m, " and %d more", more)
	}
	fmt.Fprintf(&m, "; the first protection ends at %s", model.FormatEnd(b.earliest[0].until))
	b.told = &model.PendingReason{Reason: model.ReasonMinRuntimeProtected, Message: m.String(), LongestMinRuntime: b.longest}
	return *b.told
}

// evictionNote tells a victim's owner how long the job ran, counted from the start this
// plugin trusts, and which min-runtime applied: the answer to "why was my job killed after
// three minutes?". Built by appending: reclaiming a large cluster evicts thousands of jobs.
func (s *session) evictionNote(action framework.ActionType, preemptor, victim *model.JobInfo) framework.EvictionNote {
	if action == framework.Allocate {
		return framework.EvictionNote{}
	}
	p := s.protectionOf(action, preemptor, victim)
	if p.by.Duration <= 0 {
		p.start, p.startKnown = s.effectiveStart(victim) // for how long it ran
	}
	r, start, known, until, now := p.by, p.start, p.startKnown, p.until, s.ssn.Now()
	// Which min-runtime: a move is held to the longer of the job's two, named by neither.
	kind := string(action) + " "
	if action == framework.Consolidation {
		kind = ""
	}
	b := make([]byte, 0, 160)
	if known {
		b = append(append(b, "it ran "...), now.Sub(start).Round(time.Second).String()...)
	} else {
		b = append(b, "its start is unknown"...)
	}
	minRuntime := func(b []byte) []byte {
		b = append(append(append(b, "its "...), kind...), "min-runtime of "...)
		return append(append(append(append(b, r.Duration.String()...), " from "...), r.Source()...), r.EscalationNote()...)
	}
	switch {
	case r.Duration <= 0:
		b = append(append(append(append(b, "; no "...), kind...), "min-runtime applied (0s from "...), r.Source()...)
		b = append(b, ')')
	case !known:
		b = append(minRuntime(append(b, ", so "...)), " could not protect it"...)
	case p.holds(now):
		// Only an elastic job loses pods while protected, and only those above its minimums.
		b = append(minRuntime(append(b, "; "...)), " protects it until "...)
		b = append(model.ShownEnd(until).UTC().AppendFormat(b, time.RFC3339), ", so it keeps its minimum"...)
	default:
		b = append(minRuntime(append(b, "; "...)), " ended at "...)
		b = model.ShownEnd(until).UTC().AppendFormat(b, time.RFC3339)
	}
	note := framework.EvictionNote{Text: string(b), RanKnown: known}
	if known {
		note.Ran = now.Sub(start)
	}
	return note
}

// jobProtection is how the plugin protects a running job, as its status shows it: none for
// a job that can never be a victim or has no start to count from.
func (s *session) jobProtection(job *model.JobInfo) (model.Protection, bool) {
	if !job.Preemptible || job.CountActive() == 0 {
		return model.Protection{}, false
	}
	start, known, note := EffectiveStart(job, s.ssn.Now())
	if !known {
		return model.Protection{}, false
	}
	levels, ok := s.levels[job.Queue]
	if !ok {
		levels = ReclaimLevels(s.ssn.Snapshot().Queues, s.method, job.Queue, s.defaults)
		s.levels[job.Queue] = levels
	}
	return model.Protection{Start: start, StartNote: note, Preempt: s.ownPreempt(job),
		Reclaim: ShortenLevels(s.escalationOf(job.Queue).EscalateLevels(levels, job.Evictions.Total()), job)}, true
}

// reportProtected sets the protected-jobs gauges: per queue and action, the running jobs
// still within their min-runtime at the session's now (for reclaim, against some
// reclaimer), and those of them whose protection escalation lengthened.
func (s *session) reportProtected() {
	protected, escalated := map[metrics.ProtectedSeries]int{}, map[metrics.ProtectedSeries]int{}
	now := s.ssn.Now()
	for _, job := range s.ssn.Snapshot().Jobs {
		p, ok := s.jobProtection(job)
		if !ok {
			continue
		}
		if now.Before(p.Until(p.Preempt)) {
			series := metrics.ProtectedSeries{Queue: job.Queue, Action: string(framework.Preempt)}
			protected[series]++
			if p.Preempt.EscalatedFrom > 0 {
				escalated[series]++
			}
		}
		if longest := Longest(p.Reclaim); now.Before(p.Until(longest)) {
			series := metrics.ProtectedSeries{Queue: job.Queue, Action: string(framework.Reclaim)}
			protected[series]++
			if longest.EscalatedFrom > 0 {
				escalated[series]++
			}
		}
	}
	s.ssn.Metrics().ProtectedJobs(protected, escalated)
}

// scenarioFilters returns the elastic filter for eviction actions.
func (s *session) scenarioFilters(action framework.ActionType, pendingJob *model.JobInfo) []framework.ScenarioFilter {
	if action == framework.Allocate {
		return nil
	}
	return []framework.ScenarioFilter{&elasticFilter{s: s, action: action}}
}
