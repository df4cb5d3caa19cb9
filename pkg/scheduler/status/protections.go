package status

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// SetProtections records, at the end of a cycle, the jobs whose status shows a protection
// other than the one they have now. A job left out needs no write: its status is right, or
// it is gone. A change the updater has already written is not written again while the
// informers catch up with it, for up to conditionRefresh: after that, something else has
// undone the write (another writer, a PodGroup recreated), and it is written again.
func (u *Updater) SetProtections(changes []model.ProtectionChange) {
	u.mu.Lock()
	queued := make(map[model.JobID]model.ProtectionChange, len(changes))
	lagging := make(map[model.JobID]writtenProtection, len(u.shown))
	for _, c := range changes {
		if shown, ok := u.shown[c.Job]; ok && sameProtection(shown.change, c) && u.Clock.Since(shown.at) < conditionRefresh {
			lagging[c.Job] = shown
			continue
		}
		if queued, ok := u.protections[c.Job]; !ok || !sameProtection(queued, c) {
			u.mark(target{jobStatusTarget, string(c.Job)}) // already queued otherwise
		}
		queued[c.Job] = c
	}
	// Written changes the informers now show, or whose jobs are gone, are forgotten.
	u.protections, u.shown = queued, lagging
	u.mu.Unlock()
}

// writtenProtection is a change the updater wrote, and when.
type writtenProtection struct {
	change model.ProtectionChange
	at     time.Time
}

// sameProtection reports whether two changes make a status show the same.
func sameProtection(a, b model.ProtectionChange) bool {
	if a.None || b.None {
		return a.None == b.None
	}
	return a.Protection.Shown().Equal(b.Protection.Shown())
}

// protectionStatus is the value of status.minRuntime in the merge patch that makes the
// status show the change: nil (null, which removes it) for none. A merge patch keeps the
// fields it does not name, so the optional fields left empty are named as null: a note, a
// queue or an end shown before must not linger (an end goes when its min-runtime becomes 0s).
func protectionStatus(c model.ProtectionChange) *minRuntimePatch {
	if c.None {
		return nil
	}
	s := c.Protection.Status()
	return &minRuntimePatch{
		Start:          s.Start,
		StartNote:      orNull(s.StartNote),
		ProtectedUntil: s.ProtectedUntil,
		ReclaimUntil:   s.ReclaimUntil,
		Preempt: protectionFieldsPatch{MinRuntime: s.Preempt.MinRuntime, SetBy: orNull(s.Preempt.SetBy),
			EscalatedFrom: s.Preempt.EscalatedFrom, Until: s.Preempt.Until},
		Reclaim: s.Reclaim,
	}
}

// minRuntimePatch is v2alpha2.MinRuntimeStatus with its optional fields as pointers without
// omitempty, so that an empty one is written as null (TestProtectionPatchNamesEveryField
// keeps the two alike). A reclaim list is replaced whole by a merge patch, so its entries
// need no nulls.
type minRuntimePatch struct {
	Start          metav1.Time                  `json:"start"`
	StartNote      *string                      `json:"startNote"`
	ProtectedUntil *metav1.Time                 `json:"protectedUntil"`
	ReclaimUntil   *metav1.Time                 `json:"reclaimUntil"`
	Preempt        protectionFieldsPatch        `json:"preempt"`
	Reclaim        []v2alpha2.ReclaimProtection `json:"reclaim"`
}

// protectionFieldsPatch is v2alpha2.MinRuntimeProtection as minRuntimePatch writes it.
type protectionFieldsPatch struct {
	MinRuntime    metav1.Duration  `json:"minRuntime"`
	SetBy         *string          `json:"setBy"`
	EscalatedFrom *metav1.Duration `json:"escalatedFrom"`
	Until         *metav1.Time     `json:"until"`
}

// orNull is s, or nil (null in the patch) when s is empty.
func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
