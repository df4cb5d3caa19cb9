package status

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// promiseQuiet is how long a job that only waits for the resources promised to it goes
// without its condition rewritten: it is on its way, and its victims take up to their grace
// period (30 s by default) to go. Telling each such job, and clearing it again, would be two
// writes and an event per reclaimer, when a reclaim's victims are being evicted and the API
// server is at its busiest; a wait longer than that is worth telling. Until then the
// condition shows what it showed (nothing, or what the job waited for before its promise).
const promiseQuiet = 45 * time.Second

// SetPending records, at the end of a cycle, why each job is pending, and which of their
// pods to mark PodScheduled=False. Jobs absent from reasons are no longer pending; their
// condition is cleared if one was written. Only jobs whose reasons differ from what their
// condition shows are queued for a write, and a job only waiting for promised resources
// only once it has waited for them promiseQuiet.
func (u *Updater) SetPending(reasons map[model.JobID][]model.PendingReason, unschedulablePods map[model.JobID][]string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	now := u.Clock.Now()
	u.podsOf = unschedulablePods
	for job := range u.pending {
		if _, still := reasons[job]; !still {
			delete(u.pending, job) // never written, or cleared below: nothing stale goes out
		}
	}
	for job := range u.promisedSince {
		if _, still := reasons[job]; !still {
			delete(u.promisedSince, job)
		}
	}
	for job := range u.written {
		if _, still := reasons[job]; !still {
			u.pending[job] = nil
			u.mark(target{jobStatusTarget, string(job)})
		}
	}
	for job, r := range reasons {
		awaiting := onlyAwaitingPromise(r)
		since, ok := u.promisedSince[job]
		switch {
		case !awaiting:
			delete(u.promisedSince, job)
		case !ok:
			since = now
			u.promisedSince[job] = now
		}
		written, shown := u.written[job]
		switch {
		case shown && sameReasons(written.reasons, r):
			delete(u.pending, job) // the condition shows it already
		case awaiting && now.Sub(since) < promiseQuiet:
			delete(u.pending, job) // on its way: told only if it takes a while
		default:
			u.pending[job] = r
			u.mark(target{jobStatusTarget, string(job)})
		}
	}
}

// onlyAwaitingPromise reports whether a job waits for nothing but the resources promised to it.
func onlyAwaitingPromise(reasons []model.PendingReason) bool {
	for _, r := range reasons {
		if r.Reason != model.ReasonAwaitingReleasedResources {
			return false
		}
	}
	return len(reasons) > 0
}

// writtenCondition is what a job's condition was last written with: its reasons, their
// figure-free shape (reasonsShape), and when; and when a write last changed what the job
// waits for (the reasons' kinds), zero if none has since its first.
type writtenCondition struct {
	reasons     []model.PendingReason
	shape       string
	at          time.Time
	kindChanged time.Time
}

// sameKinds reports whether two lists of reasons name the same reasons in order: what the
// job waits for (Unschedulable, MinRuntimeProtected...), whatever their messages say.
func sameKinds(a, b []model.PendingReason) bool {
	return slices.EqualFunc(a, b, func(x, y model.PendingReason) bool { return x.Reason == y.Reason })
}

// sameReasons reports whether two lists of pending reasons tell the same: the same reasons
// and messages, in order. It is asked of every waiting job in every cycle, so it compares in
// place rather than build a key of each (over a simulated day that was a fifth of all bytes
// allocated).
func sameReasons(a, b []model.PendingReason) bool {
	return slices.EqualFunc(a, b, func(x, y model.PendingReason) bool {
		return x.Reason == y.Reason && x.Message == y.Message
	})
}

// reasonsKey is the reasons and messages as one text, which reasonsShape masks.
func reasonsKey(reasons []model.PendingReason) string {
	var b strings.Builder
	for _, r := range reasons {
		b.WriteString(r.Reason)
		b.WriteByte(0)
		b.WriteString(r.Message)
		b.WriteByte('\n')
	}
	return b.String()
}

// reasonsShape is reasonsKey with every figure masked: two lists of reasons of one shape
// differ only in how much or how many, not in what the job waits for (figuresRefresh). A
// figure is a run of digits, with a decimal point inside, that is not part of a word, a
// duration or a time (next to a letter, '-' or ':'): "16 GPUs", "0/2 nodes", but not
// "2m0s" or "2026-01-01T04:00:03Z".
func reasonsShape(reasons []model.PendingReason) string {
	key := reasonsKey(reasons)
	var b strings.Builder
	b.Grow(len(key))
	for i := 0; i < len(key); {
		if !isDigit(key[i]) {
			b.WriteByte(key[i])
			i++
			continue
		}
		end := i
		for end < len(key) && (isDigit(key[end]) || (key[end] == '.' && end+1 < len(key) && isDigit(key[end+1]))) {
			end++
		}
		if (i > 0 && partOfWord(key[i-1])) || (end < len(key) && partOfWord(key[end])) {
			b.WriteString(key[i:end])
		} else {
			b.WriteByte('#')
		}
		i = end
	}
	return b.String()
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// partOfWord reports whether c next to digits makes them part of a word, a duration or a
// time rather than a figure.
func partOfWord(c byte) bool {
	return c == '-' || c == ':' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// writeJobStatus writes, in one patch of the PodGroup's status, what is due of its
// scheduling condition and of its min-runtime protection, then tells the reasons in events
// and marks the job's waiting pods. A changed condition rewritten less than
// conditionRefresh ago is not due: the time until it is is returned.
func (u *Updater) writeJobStatus(ctx context.Context, job model.JobID) (time.Duration, error) {
	u.mu.Lock()
	reasons, conditionQueued := u.pending[job]
	written, wasPending := u.written[job]
	var wait time.Duration
	if conditionQueued && wasPending && sameReasons(written.reasons, reasons) {
		delete(u.pending, job) // the condition shows it already
		conditionQueued = false
	}
	var shape string // of the reasons to write; compared, then kept with them
	if conditionQueued && len(reasons) > 0 {
		shape = reasonsShape(reasons)
	}
	kindChanged := written.kindChanged
	if conditionQueued && wasPending && len(reasons) > 0 {
		refresh := conditionRefresh
		switch {
		case written.shape == shape:
			refresh = figuresRefresh // only its figures moved
		case !sameKinds(written.reasons, reasons):
			// What the job waits for changed — say, from not fitting to a victim's
			// protection: told at once, since a short protection may end within
			// conditionRefresh and its owner would never learn of it. Kinds that flap
			// are throttled as any change.
			if kindChanged.IsZero() || u.Clock.Since(kindChanged) >= conditionRefresh {
				refresh = 0
			}
			kindChanged = u.Clock.Now()
		}
		if since := u.Clock.Since(written.at); since < refresh {
			wait, conditionQueued, kindChanged = refresh-since, false, written.kindChanged
		}
	}
	protection, protectionQueued := u.protections[job]
	pods := u.podsOf[job]
	u.mu.Unlock()
	if !conditionQueued && !protectionQueued {
		return wait, nil
	}

	status := map[string]any{}
	if conditionQueued {
		status["schedulingConditions"] = u.conditions(reasons)
	}
	if protectionQueued {
		status["minRuntime"] = protectionStatus(protection)
	}
	patch, _ := json.Marshal(map[string]any{"status": status}) // plain fields: cannot fail
	pg := job.PodGroupRef()
	if err := u.patch(ctx, jobStatusTarget, pg, true, patch); err != nil {
		return 0, err
	}
	u.mu.Lock()
	if queued, ok := u.protections[job]; protectionQueued && ok && sameProtection(queued, protection) {
		delete(u.protections, job)
		u.shown[job] = writtenProtection{change: protection, at: u.Clock.Now()}
	}
	u.mu.Unlock()
	if !conditionQueued {
		return wait, nil
	}
	if len(reasons) > 0 {
		if u.Recorder != nil {
			for _, group := range byReason(reasons) {
				eventType := v1.EventTypeWarning
				if group[0].Reason == model.ReasonAwaitingReleasedResources {
					eventType = v1.EventTypeNormal // progress, not a problem
				}
				u.Recorder.Event(pg, eventType, group[0].Reason, model.JoinMessages(group))
			}
		}
		if err := u.markUnschedulable(ctx, pods, model.JoinMessages(reasons)); err != nil {
			return 0, err // the condition is written again with the pods
		}
	}
	u.mu.Lock()
	if current, ok := u.pending[job]; ok && sameReasons(current, reasons) {
		delete(u.pending, job)
		if len(reasons) == 0 {
			delete(u.written, job)
		} else {
			u.written[job] = writtenCondition{reasons: slices.Clone(reasons), shape: shape, at: u.Clock.Now(), kindChanged: kindChanged}
		}
	}
	u.mu.Unlock()
	return wait, nil
}

// conditions are the job's scheduling conditions for its pending reasons (none clears them).
func (u *Updater) conditions(reasons []model.PendingReason) []v2alpha2.SchedulingCondition {
	if len(reasons) == 0 {
		return nil
	}
	now := u.Clock.Now()
	condition := v2alpha2.SchedulingCondition{
		Type: v2alpha2.UnschedulableOnNodePool, NodePool: u.NodePool, Status: v1.ConditionTrue,
		Message: model.JoinMessages(reasons), LastTransitionTime: metav1.NewTime(now),
		TransitionID: fmt.Sprint(now.Unix()),
	}
	for _, r := range reasons {
		condition.Reasons = append(condition.Reasons, v2alpha2.UnschedulableReason{Reason: r.Reason, Message: r.Message})
	}
	return []v2alpha2.SchedulingCondition{condition}
}

// byReason groups reasons by their Reason, groups in order of first appearance, so that each
// kind of reason is told in its own event and tools can pick out, say, a min-runtime block
// by the event's reason.
func byReason(reasons []model.PendingReason) [][]model.PendingReason {
	var groups [][]model.PendingReason
	for _, r := range reasons {
		k := slices.IndexFunc(groups, func(g []model.PendingReason) bool { return g[0].Reason == r.Reason })
		if k < 0 {
			groups = append(groups, nil)
			k = len(groups) - 1
		}
		groups[k] = append(groups[k], r)
	}
	return groups
}

// markUnschedulable sets PodScheduled=False (reason Unschedulable) on a job's waiting pods,
// the signal cluster autoscalers act on. Binding a pod sets it True again.
func (u *Updater) markUnschedulable(ctx context.Context, pods []string, message string) error {
	condition := v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: v1.PodReasonUnschedulable,
		Message: message, LastTransitionTime: metav1.NewTime(u.Clock.Now())}
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": []v1.PodCondition{condition}}})
	for _, key := range pods {
		namespace, name, _ := strings.Cut(key, "/")
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
		err := u.Client.Status().Patch(ctx, pod, client.RawPatch(types.StrategicMergePatchType, patch))
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}
