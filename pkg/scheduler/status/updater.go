package status

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/cache"
)

// retryPeriod is how often queued writes are retried when nothing new arrives.
const retryPeriod = time.Second

// conditionRefresh is the least time between two rewrites of a pending job's condition. The
// reasons' details (how many nodes lack what) change nearly every cycle in a busy cluster;
// rewriting them each second for every pending job would flood the API server.
const conditionRefresh = 10 * time.Second

// Updater queues PodGroup writes and performs them in the background.
type Updater struct {
	Client   client.Client
	Recorder record.EventRecorder
	Clock    clock.PassiveClock
	// NodePool names, in the jobs' scheduling conditions, the pool the scheduler serves:
	// with one scheduler per pool, a condition says which pool could not place the job.
	NodePool string

	mu sync.Mutex
	// stamps waiting to be written, per job.
	stamps map[api.JobID]time.Time
	// pending holds the latest pending reasons per job; written what was last written.
	pending map[api.JobID][]api.PendingReason
	// podsOf holds, per pending job, its waiting pods (namespace/name) to mark unschedulable.
	podsOf  map[api.JobID][]string
	written map[api.JobID]string
	// writtenAt is when each job's condition was last written.
	writtenAt map[api.JobID]time.Time
	// queues holds what to report about each queue.
	queues map[string]*queueState
	// protections are the min-runtime protections to write (nil: clear), per job; shown
	// what was written, until the informers show it (see SetProtections).
	protections map[api.JobID]api.ProtectionChange
	shown       map[api.JobID]writtenProtection
	kick        chan struct{}
}

// NewUpdater returns an updater; Run performs its writes.
func NewUpdater(c client.Client, recorder record.EventRecorder, clk clock.PassiveClock) *Updater {
	return &Updater{
		Client: c, Recorder: recorder, Clock: clk,
		stamps: map[api.JobID]time.Time{}, pending: map[api.JobID][]api.PendingReason{}, written: map[api.JobID]string{},
		podsOf:    map[api.JobID][]string{},
		writtenAt: map[api.JobID]time.Time{}, kick: make(chan struct{}, 1),
		protections: map[api.JobID]api.ProtectionChange{}, shown: map[api.JobID]writtenProtection{},
	}
}

// QueueStartStamp schedules writing a job's start stamp. A newer stamp replaces a queued one.
func (u *Updater) QueueStartStamp(job api.JobID, at time.Time) {
	u.mu.Lock()
	u.stamps[job] = at
	u.mu.Unlock()
	u.wake()
}

// SetPending records, at the end of a cycle, why each job is pending, and which of their
// pods to mark PodScheduled=False. Jobs absent from reasons are no longer pending; their
// condition is cleared if one was written.
func (u *Updater) SetPending(reasons map[api.JobID][]api.PendingReason, unschedulablePods map[api.JobID][]string) {
	u.mu.Lock()
	u.podsOf = unschedulablePods
	for job := range u.pending {
		if _, still := reasons[job]; !still {
			delete(u.pending, job) // never written, or cleared below: nothing stale goes out
		}
	}
	for job := range u.written {
		if _, still := reasons[job]; !still {
			u.pending[job] = nil
		}
	}
	for job, r := range reasons {
		u.pending[job] = r
	}
	u.mu.Unlock()
	u.wake()
}

// PendingWrites counts the writes not yet done, for metrics and tests.
func (u *Updater) PendingWrites() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.stamps) + len(u.pending) + len(u.protections)
}

func (u *Updater) wake() {
	select {
	case u.kick <- struct{}{}:
	default:
	}
}

// Start writes queued updates until ctx ends: at once when there is news, and every
// retryPeriod for what failed.
func (u *Updater) Start(ctx context.Context) error {
	ticker := time.NewTicker(retryPeriod)
	defer ticker.Stop()
	for {
		u.Flush(ctx)
		select {
		case <-ctx.Done():
			// One last try for what is queued (start stamps above all), with a little time of
			// its own: the scheduler is stopping, not the API server.
			final, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			u.Flush(final)
			cancel()
			return nil
		case <-u.kick:
		case <-ticker.C:
		}
	}
}

// Flush tries every queued write once; failures stay queued.
func (u *Updater) Flush(ctx context.Context) {
	defer u.flushQueues(ctx)
	defer u.flushProtections(ctx)
	u.mu.Lock()
	stamps := make(map[api.JobID]time.Time, len(u.stamps))
	for k, v := range u.stamps {
		stamps[k] = v
	}
	pending := make(map[api.JobID][]api.PendingReason, len(u.pending))
	for k, v := range u.pending {
		pending[k] = v
	}
	u.mu.Unlock()

	log := klog.FromContext(ctx)
	for job, at := range stamps {
		err := u.writeStamp(ctx, job, at)
		if err != nil && !apierrors.IsNotFound(err) {
			log.Error(err, "Writing start stamp failed; will retry", "job", job)
			continue
		}
		u.mu.Lock()
		if u.stamps[job].Equal(at) {
			delete(u.stamps, job)
		}
		u.mu.Unlock()
	}
	for job, reasons := range pending {
		key := reasonsKey(reasons)
		u.mu.Lock()
		unchanged := u.written[job] == key
		_, wasPending := u.written[job]
		tooSoon := wasPending && len(reasons) > 0 && u.Clock.Since(u.writtenAt[job]) < conditionRefresh
		u.mu.Unlock()
		if tooSoon && !unchanged {
			continue // kept queued: written once the refresh interval has passed
		}
		var err error
		if !unchanged {
			err = u.writeCondition(ctx, job, reasons)
		}
		if err != nil && !apierrors.IsNotFound(err) {
			log.Error(err, "Writing scheduling condition failed; will retry", "job", job)
			continue
		}
		u.mu.Lock()
		if reasonsKey(u.pending[job]) == key {
			delete(u.pending, job)
			if len(reasons) == 0 {
				delete(u.written, job)
				delete(u.writtenAt, job)
			} else {
				if !unchanged {
					u.writtenAt[job] = u.Clock.Now()
				}
				u.written[job] = key
			}
		}
		u.mu.Unlock()
	}
}

// writeStamp sets the annotation with a merge patch: it touches nothing else and has no
// resource version, so it cannot conflict with other writers.
func (u *Updater) writeStamp(ctx context.Context, job api.JobID, at time.Time) error {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"annotations": map[string]string{scheduling.LastStartTimestampAnnotation: cache.FormatStartTime(at)}}})
	return u.Client.Patch(ctx, cache.PodGroupRef(job), client.RawPatch(types.MergePatchType, patch))
}

// reasonsKey is what tells two lists of pending reasons apart.
func reasonsKey(reasons []api.PendingReason) string {
	var b strings.Builder
	for _, r := range reasons {
		b.WriteString(r.Reason)
		b.WriteByte(0)
		b.WriteString(r.Message)
		b.WriteByte('\n')
	}
	return b.String()
}

// writeCondition replaces the job's scheduling conditions (clears them when reasons is
// empty) and, when there are reasons, tells them in Warning events, one per kind of reason
// so that tools can pick out, say, a min-runtime block by the event's reason.
func (u *Updater) writeCondition(ctx context.Context, job api.JobID, reasons []api.PendingReason) error {
	var conditions []v2alpha2.SchedulingCondition
	message := api.JoinMessages(reasons)
	if len(reasons) > 0 {
		condition := v2alpha2.SchedulingCondition{
			Type: v2alpha2.UnschedulableOnNodePool, NodePool: u.NodePool, Status: v1.ConditionTrue,
			Message: message, LastTransitionTime: metav1.NewTime(u.Clock.Now()),
			TransitionID: fmt.Sprint(u.Clock.Now().Unix()),
		}
		for _, r := range reasons {
			condition.Reasons = append(condition.Reasons, v2alpha2.UnschedulableReason{Reason: r.Reason, Message: r.Message})
		}
		conditions = append(conditions, condition)
	}
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"schedulingConditions": conditions}})
	pg := cache.PodGroupRef(job)
	if err := u.Client.Status().Patch(ctx, pg, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return err
	}
	if len(reasons) == 0 {
		return nil
	}
	if u.Recorder != nil {
		for _, group := range byReason(reasons) {
			u.Recorder.Event(pg, v1.EventTypeWarning, group[0].Reason, api.JoinMessages(group))
		}
	}
	return u.markUnschedulable(ctx, job, message)
}

// byReason groups reasons by their Reason, groups in order of first appearance.
func byReason(reasons []api.PendingReason) [][]api.PendingReason {
	var groups [][]api.PendingReason
	for _, r := range reasons {
		k := slices.IndexFunc(groups, func(g []api.PendingReason) bool { return g[0].Reason == r.Reason })
		if k < 0 {
			groups = append(groups, nil)
			k = len(groups) - 1
		}
		groups[k] = append(groups[k], r)
	}
	return groups
}

// markUnschedulable sets PodScheduled=False (reason Unschedulable) on the job's waiting
// pods, the signal cluster autoscalers act on. Binding a pod sets it True again.
func (u *Updater) markUnschedulable(ctx context.Context, job api.JobID, message string) error {
	u.mu.Lock()
	pods := u.podsOf[job]
	u.mu.Unlock()
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
