package cache

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
)

// ProtectionStatus is how a PodGroup's status shows a job's protection. The status keeps
// whole seconds: the start is rounded down, and every end up, so that a job is never shown
// unprotected while it still is. A min-runtime of 0s protects nothing and shows no end; a
// protection that protects nothing at all shows no end anywhere (the scheduler writes no
// status for it: see Protection.Protects).
func ProtectionStatus(p api.Protection) *v2alpha2.MinRuntimeStatus {
	shownEnd := func(t time.Time, ok bool) *metav1.Time {
		if !ok {
			return nil
		}
		end := metav1.NewTime(api.ShownEnd(t))
		return &end
	}
	shown := func(m api.MinRuntime) v2alpha2.MinRuntimeProtection {
		return v2alpha2.MinRuntimeProtection{MinRuntime: metav1.Duration{Duration: m.Duration}, SetBy: m.SetBy,
			Until: shownEnd(p.Until(m), m.Duration > 0)}
	}
	s := &v2alpha2.MinRuntimeStatus{
		Start:          metav1.NewTime(p.Start.Truncate(api.ShownPrecision)),
		StartNote:      p.StartNote,
		ProtectedUntil: shownEnd(p.FirstEnd()),
		ReclaimUntil:   shownEnd(p.ReclaimEnd()),
		Preempt:        shown(p.Preempt),
		Reclaim:        make([]v2alpha2.ReclaimProtection, 0, len(p.Reclaim)),
	}
	for _, r := range p.Reclaim {
		s.Reclaim = append(s.Reclaim, v2alpha2.ReclaimProtection{FromOutside: r.Outside, MinRuntimeProtection: shown(r.MinRuntime)})
	}
	return s
}

// ShownProtection reads back what ProtectionStatus wrote, as Protection.Shown would give
// it (the ends follow from the start); nil when the status shows none.
func ShownProtection(s *v2alpha2.MinRuntimeStatus) *api.Protection {
	if s == nil {
		return nil
	}
	p := &api.Protection{
		Start:     s.Start.Time,
		StartNote: s.StartNote,
		Preempt:   api.MinRuntime{Duration: s.Preempt.MinRuntime.Duration, SetBy: s.Preempt.SetBy},
	}
	for _, r := range s.Reclaim {
		p.Reclaim = append(p.Reclaim, api.ReclaimLevel{Outside: r.FromOutside,
			MinRuntime: api.MinRuntime{Duration: r.MinRuntime.Duration, SetBy: r.SetBy}})
	}
	return p
}
