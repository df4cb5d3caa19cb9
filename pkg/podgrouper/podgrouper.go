package podgrouper

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
)

// Reconciler groups pods into PodGroups: it asks the Grouper, makes the PodGroup exist with
// the workload's gang, and annotates (and labels with its sub-group) each pod.
type Reconciler struct {
	Client        client.Client
	Grouper       *Grouper
	SchedulerName string
	// Recorder posts a workload's problems as events on the pod; nil posts none.
	Recorder record.EventRecorder
}

// NewReconciler groups the pods of schedulerName with grouper.
func NewReconciler(c client.Client, grouper *Grouper, schedulerName string, recorder record.EventRecorder) *Reconciler {
	return &Reconciler{Client: c, Grouper: grouper, SchedulerName: schedulerName, Recorder: recorder}
}

// conflictRetry is how soon a pod that changed while it was grouped is grouped again: by
// then the cache holds its new version.
const conflictRetry = 200 * time.Millisecond

// concurrentGroupings lets a burst of pods (a 500-pod job's) be annotated a few at a time; the
// pods of one workload still read its owners once (chains waits for the first reader).
const concurrentGroupings = 4

// SetupWithManager watches the pods of this scheduler that still lack a PodGroup, and the
// deletion of PodGroups, whose pods it gives them back (restore).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	ungrouped := predicate.NewPredicateFuncs(func(o client.Object) bool {
		pod, ok := o.(*v1.Pod)
		return ok && pod.Spec.SchedulerName == r.SchedulerName && pod.Annotations[scheduling.PodGroupNameAnnotation] == "" && !skipped(pod.Annotations)
	})
	deleted := predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
	return ctrl.NewControllerManagedBy(mgr).Named("podgrouper").
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrentGroupings}).
		For(&v1.Pod{}, builder.WithPredicates(ungrouped)).
		Watches(&v2alpha2.PodGroup{}, handler.EnqueueRequestsFromMapFunc(r.podsOf), builder.WithPredicates(deleted)).
		Complete(r)
}

// podsOf are the live pods of this scheduler annotated with a PodGroup (one just deleted).
func (r *Reconciler) podsOf(ctx context.Context, group client.Object) []reconcile.Request {
	pods := &v1.PodList{}
	if err := r.Client.List(ctx, pods, client.InNamespace(group.GetNamespace())); err != nil {
		klog.FromContext(ctx).Error(err, "Listing the pods of a deleted PodGroup", "podGroup", client.ObjectKeyFromObject(group))
		return nil
	}
	var requests []reconcile.Request
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.Spec.SchedulerName == r.SchedulerName && pod.DeletionTimestamp == nil &&
			pod.Annotations[scheduling.PodGroupNameAnnotation] == group.GetName() {
			requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(pod)})
		}
	}
	return requests
}

// restore makes again the PodGroup a grouped pod names, when it is missing (a user deleted it
// to start the job over) and it is the one the grouper would make: the pod would otherwise
// name a PodGroup that does not exist until it is deleted. A PodGroup the user made (and
// named on the pod) is left to them.
func (r *Reconciler) restore(ctx context.Context, pod *v1.Pod, name string) error {
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: name}, &v2alpha2.PodGroup{})
	if !apierrors.IsNotFound(err) {
		return err
	}
	grouping, err := r.Grouper.Group(ctx, pod)
	if err != nil || grouping.PodGroup == nil || grouping.PodGroup.Name != name {
		return err
	}
	return r.ensure(ctx, grouping.PodGroup)
}

// Reconcile groups one pod.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pod := &v1.Pod{}
	if err := r.Client.Get(ctx, req.NamespacedName, pod); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if pod.Spec.SchedulerName != r.SchedulerName || pod.DeletionTimestamp != nil || skipped(pod.Annotations) {
		return ctrl.Result{}, nil
	}
	if name := pod.Annotations[scheduling.PodGroupNameAnnotation]; name != "" {
		return ctrl.Result{}, r.restore(ctx, pod, name)
	}
	grouping, err := r.Grouper.Group(ctx, pod)
	if err != nil {
		return ctrl.Result{}, err
	}
	if r.Recorder != nil {
		for _, p := range grouping.Problems {
			r.Recorder.AnnotatedEventf(pod, scheduling.ProblemEventAnnotations(), v1.EventTypeWarning, p.Reason, "%s", p.Message)
		}
	}
	group := grouping.PodGroup
	if group == nil {
		return ctrl.Result{}, nil // skipped (on an owner), or another pool's scheduler groups it
	}
	if err := r.ensure(ctx, group); err != nil {
		return ctrl.Result{}, err
	}
	metadata := map[string]any{"annotations": map[string]string{scheduling.PodGroupNameAnnotation: group.Name}}
	if grouping.SubGroup != "" {
		metadata["labels"] = map[string]string{scheduling.SubGroupLabel: grouping.SubGroup}
	}
	// The pod as read (its resourceVersion, checked by the API server): a pod deleted and made
	// again under its name since must not take the old one's PodGroup, which goes with it.
	metadata["resourceVersion"] = pod.ResourceVersion
	patch, _ := json.Marshal(map[string]any{"metadata": metadata})
	err = r.Client.Patch(ctx, pod, client.RawPatch(types.MergePatchType, patch))
	if apierrors.IsConflict(err) {
		return ctrl.Result{RequeueAfter: conflictRetry}, nil // changed since it was read: read it again
	}
	return ctrl.Result{}, client.IgnoreNotFound(err)
}

// ensure makes the PodGroup exist with the gang its workload asks for now: created when it
// is missing (the workload's first pod, or a user deleted it), its gang updated when the
// workload was resized (a Job's parallelism, a RayCluster's replicas, a LeaderWorkerSet's
// size), as upstream's grouper applies it. The PodGroup is read from the manager's cache.
func (r *Reconciler) ensure(ctx context.Context, group *v2alpha2.PodGroup) error {
	existing := &v2alpha2.PodGroup{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(group), existing)
	switch {
	case apierrors.IsNotFound(err):
		if err := r.Client.Create(ctx, group); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating PodGroup %s/%s: %w", group.Namespace, group.Name, err)
		}
		return nil
	case err != nil:
		return err
	case existing.Spec.MinMember == group.Spec.MinMember && equality.Semantic.DeepEqual(existing.Spec.MinSubGroup, group.Spec.MinSubGroup) &&
		equality.Semantic.DeepEqual(existing.Spec.SubGroups, group.Spec.SubGroups):
		return nil
	}
	// null removes a field a merge patch does not set: minMember and minSubGroup exclude each other.
	gang := map[string]any{"minMember": nil, "minSubGroup": group.Spec.MinSubGroup, "subGroups": group.Spec.SubGroups}
	if group.Spec.MinMember != 0 {
		gang["minMember"] = group.Spec.MinMember
	}
	patch, _ := json.Marshal(map[string]any{"spec": gang})
	if err := r.Client.Patch(ctx, existing, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("resizing PodGroup %s/%s to its workload's gang: %w", group.Namespace, group.Name, err)
	}
	return nil
}
