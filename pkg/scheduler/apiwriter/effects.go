package apiwriter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/gpureservation"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/metrics"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/status"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/store"
)

// DisruptionTargetReason is the reason of the DisruptionTarget condition set on victims.
const DisruptionTargetReason = "PreemptionByScheduler"

// Effects is the framework.Effects of the real scheduler (and of the simulator, whose
// in-memory cluster stands behind the same client interface).
type Effects struct {
	Client   client.Client
	Recorder record.EventRecorder
	Overlay  *store.Overlay
	Status   *status.Updater
	// Metrics counts binds and evictions, and the decisions a Dispatcher over these effects
	// drops; nil records nothing.
	Metrics metrics.Recorder
	// Clock dates the victims' DisruptionTarget condition and times a Dispatcher's drain:
	// the scheduler's clock, virtual in kai-sim. Required.
	Clock clock.Clock
	// Reservations readies a node for the GPU shares bound there (GPU sharing on the node:
	// reservation pods and the shares' ConfigMaps); nil when the cluster's nodes do not
	// share GPUs this way, and share pods are only labelled with their groups.
	Reservations *gpureservation.Reserver
}

var _ framework.Effects = &Effects{}

// Bind binds a pod through the pods/binding subresource, guarded by the pod's UID so that a
// pod recreated under the same name is never bound by mistake. A share pod is first labelled
// with its devices' GPU groups, which is how the scheduler (and the node side) knows them
// once it runs, after (with Reservations) its devices are reserved and its ConfigMaps
// written. A bind the API server refused takes all of it back; one whose fate is unknown (a
// timeout, a server error: the Binding may have landed) leaves it, for a bound pod needs it,
// and a pod still pending is placed and prepared again, overwriting it.
func (e *Effects) Bind(ctx context.Context, pod *model.PodInfo, nodeName string) error {
	binding := &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: types.UID(pod.UID)},
		Target:     v1.ObjectReference{Kind: "Node", Name: nodeName},
	}
	target := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: types.UID(pod.UID)}}
	labelled := pod.IsShare() && len(pod.GPUGroups) > 0
	var prepared *gpureservation.Prepared
	if labelled && e.Reservations != nil {
		var err error
		if prepared, err = e.Reservations.Prepare(ctx, pod, nodeName); err != nil {
			metrics.OrDiscard(e.Metrics).BindFailed()
			return fmt.Errorf("binding %s to %s: reserving its GPU devices: %w", pod.Key(), nodeName, err)
		}
		defer e.Reservations.Finish(prepared)
	}
	undo := func(err error, labels bool) error {
		metrics.OrDiscard(e.Metrics).BindFailed()
		// Taken back even as the scheduler shuts down (which cancels ctx): what is left
		// behind would hold a device.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
		defer cancel()
		if labels {
			// Back to the labels it had: a promise's groups, which its next bind counts on.
			if undo := e.labelGPUGroups(ctx, pod, pod.GPUGroupLabels, false); undo != nil && !apierrors.IsNotFound(undo) {
				err = errors.Join(err, fmt.Errorf("taking back its GPU group labels: %w", undo))
			}
		}
		if prepared != nil {
			if undo := e.Reservations.Undo(ctx, prepared); undo != nil {
				err = errors.Join(err, fmt.Errorf("taking back its devices' reservation: %w", undo))
			}
		}
		return err
	}
	if labelled {
		if err := e.labelGPUGroups(ctx, pod, pod.GPUGroups, true); err != nil {
			return undo(fmt.Errorf("binding %s to %s: labelling its GPU groups: %w", pod.Key(), nodeName, err), false)
		}
	}
	if err := e.Client.SubResource("binding").Create(ctx, target, binding); err != nil {
		err = fmt.Errorf("binding %s to %s: %w", pod.Key(), nodeName, err)
		if labelled && !refused(err) {
			metrics.OrDiscard(e.Metrics).BindFailed()
			return fmt.Errorf("%w; its GPU groups' labels, ConfigMaps and reservations are kept, as it may be bound", err)
		}
		return undo(err, labelled)
	}
	e.Overlay.Bound(types.UID(pod.UID), nodeName, pod.GPUGroups)
	metrics.OrDiscard(e.Metrics).Bound()
	return nil
}

// undoTimeout bounds the writes that take back a failed bind.
const undoTimeout = 10 * time.Second

// refused reports whether the API server refused a write, which then did not happen; other
// errors (a timeout, a server error, a broken connection) leave it unknown.
func refused(err error) bool {
	return apierrors.IsNotFound(err) || apierrors.IsConflict(err) || apierrors.IsInvalid(err) ||
		apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) || apierrors.IsAlreadyExists(err)
}

// labelGPUGroups sets the pod's GPU-group labels to groups (upstream's: one label for a share
// of one device, one per device for several), or removes them for none, and says whether it
// received a share (upstream's received-resource-type). The patch carries the pod's UID: a
// pod recreated under the same name is not labelled.
func (e *Effects) labelGPUGroups(ctx context.Context, pod *model.PodInfo, groups []string, received bool) error {
	labels := map[string]any{}
	for _, id := range slices.Concat(pod.GPUGroupLabels, pod.GPUGroups) {
		labels[scheduling.GPUGroupLabel+"/"+id] = nil // a promise's, or the ones written
	}
	labels[scheduling.GPUGroupLabel] = nil
	for key, id := range model.GPUGroupLabels(groups) {
		labels[key] = id
	}
	var receivedType any // removed
	if received {
		receivedType = "Fraction"
	}
	annotations := map[string]any{scheduling.ReceivedResourceTypeAnnotation: receivedType}
	patch := mustJSON(map[string]any{"metadata": map[string]any{"uid": pod.UID, "labels": labels, "annotations": annotations}})
	target := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: types.UID(pod.UID)}}
	return e.Client.Patch(ctx, target, client.RawPatch(types.MergePatchType, patch))
}

// Evict tells the pod why it goes (a DisruptionTarget condition, which workload controllers
// read) and deletes it with its own grace period. A pod already gone counts as evicted.
func (e *Effects) Evict(ctx context.Context, pod *model.PodInfo, reason framework.EvictionReason) error {
	condition := v1.PodCondition{
		Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: DisruptionTargetReason,
		Message: reason.Message, LastTransitionTime: metav1.NewTime(e.Clock.Now()),
	}
	// metadata.uid in the patch makes the API server refuse it for a pod recreated under the
	// same name, which must not be marked as a victim.
	patch := fmt.Appendf(nil, `{"metadata":{"uid":%q},"status":{"conditions":[%s]}}`, pod.UID, mustJSON(condition))
	uid := types.UID(pod.UID)
	target := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: uid}}
	err := e.Client.Status().Patch(ctx, target, client.RawPatch(types.StrategicMergePatchType, patch))
	if apierrors.IsConflict(err) || apierrors.IsInvalid(err) {
		return nil // a new pod with this name: the victim is gone already
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("marking %s as a disruption target: %w", pod.Key(), err)
	}
	err = e.Client.Delete(ctx, target, client.Preconditions{UID: &uid})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("evicting %s: %w", pod.Key(), err)
	}
	e.Overlay.Evicted(uid, reason.Preemptor, reason.Action.Moves())
	// The eviction's time is kept on the PodGroup: the victim's preemption delay re-arms
	// from it, and its pods, the only other record, are gone once they terminate. The
	// overlay holds it until the informer shows the stamp.
	evictedAt := e.Clock.Now()
	e.Overlay.JobEvicted(pod.Job, evictedAt)
	if e.Status != nil {
		e.Status.QueueEvictionStamp(pod.Job, evictedAt)
		if reason.EndsRun && (reason.Action == framework.Preempt || reason.Action == framework.Reclaim) {
			// Once per decision however many of its pods go: the updater counts by DecidedAt.
			e.Status.QueueEvictionCount(pod.Job, reason.Action, reason.DecidedAt)
		}
	}
	metrics.OrDiscard(e.Metrics).Evicted(string(reason.Action), reason.Note.Ran, reason.Note.RanKnown)
	verb := map[framework.ActionType]string{framework.Reclaim: "Reclaimed", framework.Preempt: "Preempted", framework.Consolidation: "Consolidated"}[reason.Action]
	if verb == "" {
		verb = "Evicted"
	}
	message := fmt.Sprintf("Pod %s evicted by %s for job %s", pod.Name, reason.Action, reason.Preemptor)
	if reason.Preemptor == "" { // stalegangeviction evicts for no job
		message = fmt.Sprintf("Pod %s evicted by %s", pod.Name, reason.Action)
	}
	if reason.Note.Text != "" {
		message += ": " + reason.Note.Text
	}
	e.event(pod.Job, v1.EventTypeWarning, verb, message)
	return nil
}

// Pipeline only tells: the pod waits for resources being released on a node.
func (e *Effects) Pipeline(_ context.Context, pod *model.PodInfo, nodeName string) error {
	e.event(pod.Job, v1.EventTypeNormal, "Pipelined",
		fmt.Sprintf("Pod %s will run on %s once the resources being released there are free", pod.Name, nodeName))
	return nil
}

// Nominate nominates the node to the pod, as kube-scheduler does for a preemptor: the pod's
// status.nominatedNodeName keeps the promise across cycles and restarts, and shows users
// (kubectl get pod -o wide) where the pod will run once its victims are gone. As
// kube-scheduler, it posts no event of its own: the victims' events name the job, and a wait
// that lasts is told in the job's condition (model.ReasonAwaitingReleasedResources); an event
// per reclaimer would be as many writes again.
func (e *Effects) Nominate(ctx context.Context, pod *model.PodInfo, nodeName string) error {
	if err := e.nominate(ctx, pod, nodeName); err != nil {
		return fmt.Errorf("nominating %s to %s: %w", pod.Key(), nodeName, err)
	}
	return nil
}

// CancelPipeline clears the pod's nominated node: the promise can no longer be kept.
func (e *Effects) CancelPipeline(ctx context.Context, pod *model.PodInfo) error {
	if err := e.nominate(ctx, pod, ""); err != nil {
		return fmt.Errorf("clearing the nominated node of %s: %w", pod.Key(), err)
	}
	return nil
}

// nominate writes status.nominatedNodeName (empty clears it), guarded by the pod's UID so
// that a pod recreated under the same name inherits no promise. A pod already gone needs
// none.
//
// A share pod's promise names its devices too: its GPU-group labels are written before the
// nomination, so that the promise read back holds the device its victims free (not any
// device), and taken off once a withdrawal is written.
func (e *Effects) nominate(ctx context.Context, pod *model.PodInfo, nodeName string) error {
	patch := promisePatch(pod, nodeName)
	uid := types.UID(pod.UID)
	groups := promisedGroups(pod, nodeName)
	gone := func(err error) bool {
		return apierrors.IsNotFound(err) || apierrors.IsConflict(err) || apierrors.IsInvalid(err)
	}
	if len(groups) > 0 {
		if err := e.labelGPUGroups(ctx, pod, groups, false); gone(err) {
			return nil
		} else if err != nil {
			return fmt.Errorf("labelling its GPU groups: %w", err)
		}
	}
	target := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: uid}}
	err := e.Client.Status().Patch(ctx, target, client.RawPatch(types.StrategicMergePatchType, patch))
	if gone(err) {
		return nil
	}
	if err != nil {
		return err
	}
	e.Overlay.Nominated(uid, nodeName, time.Unix(pod.PromisedAt, 0), groups)
	if nodeName == "" && pod.IsShare() && len(pod.GPUGroups) > 0 {
		if err := e.labelGPUGroups(ctx, pod, nil, false); err != nil && !gone(err) {
			return fmt.Errorf("taking back its GPU group labels: %w", err)
		}
	}
	return nil
}

// promisePatch is the strategic merge patch of a pod's status that promises it nodeName
// (empty: takes the promise back): its nominated node, and the Promised condition saying
// since when, or the condition's removal.
func promisePatch(pod *model.PodInfo, nodeName string) []byte {
	if nodeName == "" {
		return fmt.Appendf(nil, `{"metadata":{"uid":%q},"status":{"nominatedNodeName":null,"conditions":[{"type":%q,"$patch":"delete"}]}}`,
			pod.UID, scheduling.PromisedCondition)
	}
	condition := v1.PodCondition{Type: scheduling.PromisedCondition, Status: v1.ConditionTrue, Reason: "Nominated",
		Message:            fmt.Sprintf("what its job's victims release on %s is kept for it until it binds (kubectl kai explain pg)", nodeName),
		LastTransitionTime: metav1.NewTime(time.Unix(pod.PromisedAt, 0))}
	encoded, _ := json.Marshal(condition) // a PodCondition always encodes
	return fmt.Appendf(nil, `{"metadata":{"uid":%q},"status":{"nominatedNodeName":%q,"conditions":[%s]}}`, pod.UID, nodeName, encoded)
}

// RecordJobStart queues the start stamp for the status updater and remembers it at once, so
// that protection holds even before the write lands.
func (e *Effects) RecordJobStart(_ context.Context, job *model.JobInfo, startedAt time.Time) error {
	e.Overlay.Stamped(job.ID, startedAt)
	e.Status.QueueStartStamp(job.ID, startedAt)
	return nil
}

func (e *Effects) event(job model.JobID, eventType, reason, message string) {
	if e.Recorder == nil {
		return
	}
	e.Recorder.Event(job.PodGroupRef(), eventType, reason, message)
}
