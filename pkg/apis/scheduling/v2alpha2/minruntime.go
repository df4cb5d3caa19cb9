package v2alpha2

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The wire format of MinRuntimeStatus, as its doc states it: the scheduler writes it, the
// scheduler and kubectl kai read it back, and kubectl get pg prints it. Here, beside the
// type, so that every writer rounds and leaves out alike.

// MinRuntimeTimePrecision is the precision of the times a MinRuntimeStatus shows.
const MinRuntimeTimePrecision = time.Second

// MinRuntimeEnd is the end of a protection as the status shows it: rounded up to whole
// seconds, so that a job is never shown unprotected while it still is.
func MinRuntimeEnd(t time.Time) time.Time {
	if down := t.Truncate(MinRuntimeTimePrecision); !down.Equal(t) {
		return down.Add(MinRuntimeTimePrecision)
	}
	return t
}

// NewMinRuntimeProtection is the protection of minRuntime, set by the queue setBy ("" for
// the scheduler's default), for a run that started at start (the exact start the scheduler
// counts from, not the rounded one the status shows). Its until is the end rounded up, and
// absent for a min-runtime of 0s, which protects nothing and so has no end. escalatedFrom is
// the value before escalation lengthened it, 0 when it did not.
func NewMinRuntimeProtection(start time.Time, minRuntime time.Duration, setBy string, escalatedFrom time.Duration) MinRuntimeProtection {
	p := MinRuntimeProtection{MinRuntime: metav1.Duration{Duration: minRuntime}, SetBy: setBy}
	if escalatedFrom > 0 {
		p.EscalatedFrom = &metav1.Duration{Duration: escalatedFrom}
	}
	if minRuntime > 0 {
		until := metav1.NewTime(MinRuntimeEnd(start.Add(minRuntime)))
		p.Until = &until
	}
	return p
}

// NewMinRuntimeStatus is the status of a run that started at start (exact) with these
// protections (see NewMinRuntimeProtection): the start rounded down to whole seconds;
// reclaimUntil the first until among the reclaim protections, protectedUntil the first
// among all of them, each absent when no protection it covers has one.
func NewMinRuntimeStatus(start time.Time, startNote string, preempt MinRuntimeProtection, reclaim []ReclaimProtection) *MinRuntimeStatus {
	s := &MinRuntimeStatus{
		Start:     metav1.NewTime(start.Truncate(MinRuntimeTimePrecision)),
		StartNote: startNote,
		Preempt:   preempt,
		Reclaim:   reclaim,
	}
	if s.Reclaim == nil {
		s.Reclaim = []ReclaimProtection{} // the list is required: none is written [], not null
	}
	var reclaimUntil *metav1.Time
	for _, r := range reclaim {
		reclaimUntil = earlier(reclaimUntil, r.Until)
	}
	s.ReclaimUntil = copyOf(reclaimUntil)
	s.ProtectedUntil = copyOf(earlier(preempt.Until, reclaimUntil))
	return s
}

// earlier is the earlier of two optional times; nil when both are.
func earlier(a, b *metav1.Time) *metav1.Time {
	if a == nil || (b != nil && b.Before(a)) {
		return b
	}
	return a
}

// copyOf is a time of its own, so that no two fields of a status share one.
func copyOf(t *metav1.Time) *metav1.Time {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}
