package status

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/cache"
)

// SetProtections records, at the end of a cycle, the jobs whose status shows a protection
// other than the one they have now. A job left out needs no write: its status is right, or
// it is gone. A change the updater has already written is not written again while the
// informers catch up with it, for up to conditionRefresh: after that, something else has
// undone the write (another writer, a PodGroup recreated), and it is written again.
func (u *Updater) SetProtections(changes []api.ProtectionChange) {
	u.mu.Lock()
	queued := make(map[api.JobID]api.ProtectionChange, len(changes))
	lagging := make(map[api.JobID]writtenProtection, len(u.shown))
	for _, c := range changes {
		if shown, ok := u.shown[c.Job]; ok && sameProtection(shown.change, c) && u.Clock.Since(shown.at) < conditionRefresh {
			lagging[c.Job] = shown
		} else {
			queued[c.Job] = c
		}
	}
	// Written changes the informers now show, or whose jobs are gone, are forgotten.
	u.protections, u.shown = queued, lagging
	u.mu.Unlock()
	u.wake()
}

// writtenProtection is a change the updater wrote, and when.
type writtenProtection struct {
	change api.ProtectionChange
	at     time.Time
}

// sameProtection reports whether two changes make a status show the same.
func sameProtection(a, b api.ProtectionChange) bool {
	if a.None || b.None {
		return a.None == b.None
	}
	return a.Protection.Shown().Equal(b.Protection.Shown())
}

// flushProtections writes the queued protections; failures stay queued until the next
// cycle says what to write.
func (u *Updater) flushProtections(ctx context.Context) {
	u.mu.Lock()
	todo := make([]api.ProtectionChange, 0, len(u.protections))
	for _, c := range u.protections {
		todo = append(todo, c)
	}
	u.mu.Unlock()
	// In job order: retries and their logs come out the same way every time.
	slices.SortFunc(todo, func(a, b api.ProtectionChange) int { return strings.Compare(string(a.Job), string(b.Job)) })
	for _, c := range todo {
		err := u.Client.Status().Patch(ctx, cache.PodGroupRef(c.Job), client.RawPatch(types.MergePatchType, protectionPatch(c)))
		if err != nil && !apierrors.IsNotFound(err) {
			klog.FromContext(ctx).Error(err, "Writing min-runtime protection failed; will retry", "job", c.Job)
			continue
		}
		u.mu.Lock()
		if queued, ok := u.protections[c.Job]; ok && sameProtection(queued, c) {
			delete(u.protections, c.Job)
			u.shown[c.Job] = writtenProtection{change: c, at: u.Clock.Now()}
		}
		u.mu.Unlock()
	}
}

// protectionPatch is the merge patch that makes the status show the change. A merge patch
// keeps the fields it does not name, so the optional fields left empty are named as null:
// a note or a queue shown before must not linger.
func protectionPatch(c api.ProtectionChange) []byte {
	var patch struct {
		Status struct {
			MinRuntime *minRuntimePatch `json:"minRuntime"` // nil removes the status
		} `json:"status"`
	}
	if !c.None {
		s := cache.ProtectionStatus(c.Protection)
		patch.Status.MinRuntime = &minRuntimePatch{
			Start:          s.Start,
			StartNote:      orNull(s.StartNote),
			ProtectedUntil: s.ProtectedUntil,
			Preempt:        protectionFieldsPatch{MinRuntime: s.Preempt.MinRuntime, SetBy: orNull(s.Preempt.SetBy), Until: s.Preempt.Until},
			Reclaim:        s.Reclaim,
		}
	}
	raw, _ := json.Marshal(patch) // plain fields: cannot fail
	return raw
}

// minRuntimePatch is v2alpha2.MinRuntimeStatus with its optional fields as pointers, so
// that an empty one is written as null (TestProtectionPatchNamesEveryField keeps the two
// alike). A reclaim list is replaced whole by a merge patch, so its entries need no nulls.
type minRuntimePatch struct {
	Start          metav1.Time                  `json:"start"`
	StartNote      *string                      `json:"startNote"`
	ProtectedUntil metav1.Time                  `json:"protectedUntil"`
	Preempt        protectionFieldsPatch        `json:"preempt"`
	Reclaim        []v2alpha2.ReclaimProtection `json:"reclaim"`
}

// protectionFieldsPatch is v2alpha2.MinRuntimeProtection as minRuntimePatch writes it.
type protectionFieldsPatch struct {
	MinRuntime metav1.Duration `json:"minRuntime"`
	SetBy      *string         `json:"setBy"`
	Until      metav1.Time     `json:"until"`
}

// orNull is s, or nil (null in the patch) when s is empty.
func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
