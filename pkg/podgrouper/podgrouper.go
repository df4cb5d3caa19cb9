package podgrouper

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
)

// DefaultQueue takes workloads without a kai.scheduler/queue label.
const DefaultQueue = "default-queue"

// Reconciler groups pods into PodGroups.
type Reconciler struct {
	Client        client.Client
	SchedulerName string
	// Pool is the node pool of the scheduler: it groups the workloads labelled for the pool
	// (on the pod, or on its top owner), and labels their PodGroups so, which is how that
	// pool's scheduler finds them.
	Pool scheduling.NodePool
}

// SetupWithManager watches the pods of this scheduler that still lack a PodGroup.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	ungrouped := predicate.NewPredicateFuncs(func(o client.Object) bool {
		pod, ok := o.(*v1.Pod)
		return ok && pod.Spec.SchedulerName == r.SchedulerName && pod.Annotations[scheduling.PodGroupNameAnnotation] == ""
	})
	return ctrl.NewControllerManagedBy(mgr).Named("podgrouper").
		For(&v1.Pod{}, builder.WithPredicates(ungrouped)).Complete(r)
}

// Reconcile groups one pod.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pod := &v1.Pod{}
	if err := r.Client.Get(ctx, req.NamespacedName, pod); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if pod.Spec.SchedulerName != r.SchedulerName || pod.Annotations[scheduling.PodGroupNameAnnotation] != "" || pod.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	group, err := r.groupFor(ctx, pod)
	if err != nil {
		return ctrl.Result{}, err
	}
	if group == nil {
		return ctrl.Result{}, nil // another pool's scheduler groups it
	}
	if err := r.Client.Create(ctx, group); err != nil && !apierrors.IsAlreadyExists(err) {
		return ctrl.Result{}, fmt.Errorf("creating PodGroup %s/%s: %w", group.Namespace, group.Name, err)
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"annotations": map[string]string{scheduling.PodGroupNameAnnotation: group.Name}}})
	return ctrl.Result{}, client.IgnoreNotFound(r.Client.Patch(ctx, pod, client.RawPatch(types.MergePatchType, patch)))
}

// groupFor describes the PodGroup of a pod's top owner: a batch Job (gang of its
// parallelism) or the pod itself (gang of one). The PodGroup is owned by that owner, so it
// goes away with it. It is nil for a workload of another node pool, and for one whose pod or
// owner asks to be left to a PodGroup its user makes (SkipPodGrouperAnnotation).
func (r *Reconciler) groupFor(ctx context.Context, pod *v1.Pod) (*v2alpha2.PodGroup, error) {
	if skipped(pod.Annotations) {
		return nil, nil
	}
	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID}
	var ownerLabels, ownerAnnotations map[string]string
	minMember := int32(1)
	if ref := metav1.GetControllerOf(pod); ref != nil && ref.Kind == "Job" && strings.HasPrefix(ref.APIVersion, "batch/") {
		job := &batchv1.Job{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: ref.Name}, job); err != nil {
			return nil, fmt.Errorf("reading owner Job %s of pod %s/%s: %w", ref.Name, pod.Namespace, pod.Name, err)
		}
		if skipped(job.Annotations) {
			return nil, nil
		}
		owner = metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID}
		ownerLabels, ownerAnnotations = job.Labels, job.Annotations
		// The Job controller never runs more than min(parallelism, completions) pods at once.
		if job.Spec.Parallelism != nil && *job.Spec.Parallelism > 0 {
			minMember = *job.Spec.Parallelism
		}
		if job.Spec.Completions != nil && *job.Spec.Completions > 0 && *job.Spec.Completions < minMember {
			minMember = *job.Spec.Completions
		}
	}
	// The queue and the preemptibility are the top owner's labels, else the pod's, as upstream
	// reads them: the workload says where and how it runs, whatever its pods' templates carry.
	// The pool is the pod's label, else its owner's.
	poolLabels := firstWith(r.Pool.LabelKey, pod.Labels, ownerLabels)
	if !r.Pool.Includes(poolLabels) {
		return nil, nil
	}
	queue := firstWith(scheduling.QueueLabel, ownerLabels, pod.Labels)[scheduling.QueueLabel]
	if queue == "" {
		queue = DefaultQueue
	}
	group := &v2alpha2.PodGroup{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: pod.Namespace, Name: groupName(owner),
			OwnerReferences: []metav1.OwnerReference{owner},
			Labels:          map[string]string{scheduling.QueueLabel: queue},
		},
		Spec: v2alpha2.PodGroupSpec{MinMember: minMember, Queue: queue, PriorityClassName: pod.Spec.PriorityClassName},
	}
	if pool, ok := poolLabels[r.Pool.LabelKey]; ok && r.Pool.LabelKey != "" {
		group.Labels[r.Pool.LabelKey] = pool
	}
	if p := firstWith(scheduling.PreemptibilityLabel, ownerLabels, pod.Labels)[scheduling.PreemptibilityLabel]; p == string(v2alpha2.Preemptible) || p == string(v2alpha2.NonPreemptible) {
		group.Spec.Preemptibility = v2alpha2.Preemptibility(p)
	}
	// A workload may set its preemption delay and staleness grace period on itself, as
	// upstream reads them from a parent resource; the PodGroup carries them, and the scheduler
	// reads (and names a bad value on) the PodGroup as if they had been written there.
	for _, key := range []string{scheduling.PreemptionDelayAnnotation, scheduling.StalenessGracePeriodAnnotation} {
		if value, ok := ownerAnnotations[key]; ok {
			if group.Annotations == nil {
				group.Annotations = map[string]string{}
			}
			group.Annotations[key] = value
		}
	}
	return group, nil
}

// firstWith is the first of the label sets that has key, nil when none has it.
func firstWith(key string, sets ...map[string]string) map[string]string {
	for _, labels := range sets {
		if _, ok := labels[key]; ok {
			return labels
		}
	}
	return nil
}

// skipped reports whether an object's annotations leave its pods to a PodGroup its user makes.
func skipped(annotations map[string]string) bool {
	return annotations[scheduling.SkipPodGrouperAnnotation] == "true"
}

// groupName is pg-<owner>-<uid>, the owner's name cut so that the whole stays a valid
// object name (at most 253 characters).
func groupName(owner metav1.OwnerReference) string {
	name := owner.Name
	if limit := 253 - len("pg--") - len(owner.UID); len(name) > limit {
		name = strings.TrimRight(name[:limit], "-.")
	}
	return fmt.Sprintf("pg-%s-%s", name, owner.UID)
}
