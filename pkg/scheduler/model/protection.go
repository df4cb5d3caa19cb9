package model

import (
	"fmt"
	"slices"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
)

// Protection is how min-runtime protects a running job from eviction: the start it counts
// from and, per action, how long and where the value was set. It is what the PodGroup's
// status shows, so that the job's owner can see it without asking the scheduler.
type Protection struct {
	// Start is the start of the current run that protection counts from.
	Start time.Time
	// StartNote says why the job's start stamp was not used as written; empty when it was.
	StartNote string
	// Preempt protects against higher-priority jobs of the job's own queue.
	Preempt MinRuntime
	// Reclaim protects against jobs of other queues, outermost level first: each entry holds
	// against reclaimers from outside its queue that no earlier entry covers. With the lca
	// method the value depends on where the reclaimer sits; with queue there is one entry.
	// Entries are shared between the jobs of a queue: never modify them.
	Reclaim []ReclaimLevel
}

// ProtectionChange is a job whose status must show another protection: Protection, or none
// when None is set.
type ProtectionChange struct {
	Job        JobID
	Protection Protection
	None       bool
}

// MinRuntime is a resolved min-runtime, the queue whose spec set it ("" for the default),
// and the walk up the queue tree that found it.
type MinRuntime struct {
	Duration time.Duration
	// SetBy is the queue that set Duration, "" for the default, or the job's own annotation
	// (its key, which no queue name can be) when the job shortened it (see ByJob).
	SetBy string
	// EscalatedFrom is what the queues and the default resolve when escalation lengthened
	// it for the job's past evictions (JobInfo.Evictions; see minruntime.Escalation); zero
	// when it did not.
	EscalatedFrom time.Duration
	// Shortened is what the queues and the default resolve when the job's annotation
	// shortened it (ByJob), so that explain can say what the job gave up; zero otherwise.
	Shortened Shortened
	// Declined is the job's annotation value when it was not honoured (at or above the
	// resolved value: an annotation may only shorten); nil otherwise. It points at the
	// job's own field: never modify.
	Declined *time.Duration
	// Path are the queues the walk asked, as the tree's ancestry lists them (top first): from
	// SetBy, or from the top-level queue when none set it and the default applies, down to
	// the queue the walk started at, which it asked first. Empty when the walk could not
	// start (an unknown or invalid queue). It says how the value was found, not what it is:
	// the status does not show it, and Same leaves it out. Shared: never modify.
	Path []string
}

// Same reports whether two min-runtimes say the same: the value, where it was set and what
// escalation lengthened.
func (m MinRuntime) Same(o MinRuntime) bool {
	return m.Duration == o.Duration && m.SetBy == o.SetBy && m.EscalatedFrom == o.EscalatedFrom
}

// Shortened is the min-runtime the queues and the default gave (escalated, when
// EscalatedFrom is set) before a job shortened it.
type Shortened struct {
	Duration      time.Duration
	SetBy         string
	EscalatedFrom time.Duration
}

// ByJob reports whether the job's own annotation set the value (see SetBy).
func (m MinRuntime) ByJob() bool {
	return m.SetBy == scheduling.PreemptMinRuntimeAnnotation || m.SetBy == scheduling.ReclaimMinRuntimeAnnotation
}

// Source names where the value came from: "queue NAME", "the default" or "the job's
// annotation KEY".
func (m MinRuntime) Source() string {
	switch {
	case m.SetBy == "":
		return "the default"
	case m.ByJob():
		return "the job's annotation " + m.SetBy
	}
	return "queue " + m.SetBy
}

// EscalationNote is what messages add to a min-runtime that escalation lengthened: ",
// escalated from 10m0s for its evictions"; empty when it did not.
func (m MinRuntime) EscalationNote() string {
	if m.EscalatedFrom <= 0 {
		return ""
	}
	return ", escalated from " + m.EscalatedFrom.String() + " for its evictions"
}

// ReclaimLevel is the reclaim min-runtime against reclaimers from outside a queue.
type ReclaimLevel struct {
	Outside string
	MinRuntime
}

// Until is when a protection of the given min-runtime ends.
func (p Protection) Until(m MinRuntime) time.Time {
	return p.Start.Add(m.Duration)
}

// Protects reports whether any min-runtime of the protection is above zero. A job protected
// by none shows no protection in its status: in a cluster without min-runtime that status
// would say nothing, at the cost of a write per job.
func (p Protection) Protects() bool { return p.Latest().After(p.Start) }

// FirstEnd is the end of the first protection to end among those that protect something (a
// min-runtime above 0s): from then on some job min-runtime held back may take the job's
// resources. False when none protects. Protections of 0s are left out, unlike in Earliest:
// the jobs they hold against may take the resources at any time, which no end can say.
func (p Protection) FirstEnd() (first time.Time, protects bool) {
	consider := func(m MinRuntime) {
		if u := p.Until(m); m.Duration > 0 && (!protects || u.Before(first)) {
			first, protects = u, true
		}
	}
	consider(p.Preempt)
	for _, r := range p.Reclaim {
		consider(r.MinRuntime)
	}
	return first, protects
}

// Earliest is the earliest time any job could take the job's resources: the first end of its
// protections, a min-runtime of 0s ending at the start.
func (p Protection) Earliest() time.Time { return p.extremeEnd(time.Time.Before) }

// Latest is when the last of the job's protections ends: from then on every job that may
// evict it can.
func (p Protection) Latest() time.Time { return p.extremeEnd(time.Time.After) }

// extremeEnd is the end of the protections that beats every other by beats.
func (p Protection) extremeEnd(beats func(a, b time.Time) bool) time.Time {
	extreme := p.Until(p.Preempt)
	for _, r := range p.Reclaim {
		if u := p.Until(r.MinRuntime); beats(u, extreme) {
			extreme = u
		}
	}
	return extreme
}

// ShownPrecision is the precision of the times a PodGroup's status shows.
const ShownPrecision = v2alpha2.MinRuntimeTimePrecision

// ShownEnd is the end of a protection as every message and status shows it: rounded up to
// whole seconds, as the status's wire format has it (v2alpha2.MinRuntimeEnd), so that a
// message and the status agree and a job is never shown unprotected while it still is.
func ShownEnd(t time.Time) time.Time { return v2alpha2.MinRuntimeEnd(t) }

// FormatEnd writes the end of a protection as messages show it (see ShownEnd).
func FormatEnd(t time.Time) string {
	return ShownEnd(t).UTC().Format(time.RFC3339)
}

// Shown is the protection as a PodGroup's status keeps it: the start at whole seconds.
func (p Protection) Shown() Protection {
	p.Start = p.Start.Truncate(ShownPrecision)
	return p
}

// Equal reports whether two protections say the same (see MinRuntime.Same).
func (p Protection) Equal(o Protection) bool {
	return p.Start.Equal(o.Start) && p.StartNote == o.StartNote && p.Preempt.Same(o.Preempt) &&
		slices.EqualFunc(p.Reclaim, o.Reclaim, func(a, b ReclaimLevel) bool { return a.Outside == b.Outside && a.Same(b.MinRuntime) })
}

// Status is the protection as a PodGroup's status shows it (the rounding and the ends left
// out are the wire format's: v2alpha2.NewMinRuntimeStatus). A protection that protects
// nothing at all shows no end anywhere; the scheduler writes no status for it (see Protects).
func (p Protection) Status() *v2alpha2.MinRuntimeStatus {
	reclaim := make([]v2alpha2.ReclaimProtection, 0, len(p.Reclaim))
	for _, r := range p.Reclaim {
		reclaim = append(reclaim, v2alpha2.ReclaimProtection{FromOutside: r.Outside,
			MinRuntimeProtection: v2alpha2.NewMinRuntimeProtection(p.Start, r.Duration, r.SetBy, r.EscalatedFrom)})
	}
	return v2alpha2.NewMinRuntimeStatus(p.Start, p.StartNote,
		v2alpha2.NewMinRuntimeProtection(p.Start, p.Preempt.Duration, p.Preempt.SetBy, p.Preempt.EscalatedFrom), reclaim)
}

// ShownProtection reads back what Status wrote, as Shown would give it (the ends follow
// from the start); nil when the status shows none.
func ShownProtection(s *v2alpha2.MinRuntimeStatus) *Protection {
	if s == nil {
		return nil
	}
	minRuntime := func(m v2alpha2.MinRuntimeProtection) MinRuntime {
		r := MinRuntime{Duration: m.MinRuntime.Duration, SetBy: m.SetBy}
		if m.EscalatedFrom != nil {
			r.EscalatedFrom = m.EscalatedFrom.Duration
		}
		return r
	}
	p := &Protection{Start: s.Start.Time, StartNote: s.StartNote, Preempt: minRuntime(s.Preempt)}
	for _, r := range s.Reclaim {
		p.Reclaim = append(p.Reclaim, ReclaimLevel{Outside: r.FromOutside, MinRuntime: minRuntime(r.MinRuntimeProtection)})
	}
	return p
}

// Declined says which of the job's own min-runtime annotations the protection did not
// honour and why (each at or above what its queues give it), one line each; empty when
// none. The scheduler tells it in an event on the PodGroup, and explain shows it.
func (p Protection) Declined() []string {
	var lines []string
	declined := func(m MinRuntime, key, against string) {
		if m.Declined != nil {
			lines = append(lines, fmt.Sprintf("annotation %s=%s is not below the %s%s from %s: not honoured (it may only shorten)",
				key, *m.Declined, m.Duration, against, m.Source()))
		}
	}
	declined(p.Preempt, scheduling.PreemptMinRuntimeAnnotation, "")
	for _, l := range p.Reclaim {
		declined(l.MinRuntime, scheduling.ReclaimMinRuntimeAnnotation, " against reclaimers from outside "+l.Outside)
	}
	return lines
}
