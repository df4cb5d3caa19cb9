package podgrouper

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/lru"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
)

// Reconciler groups pods into PodGroups: it asks the Grouper, creates the PodGroup once per
// workload, and annotates (and labels with its sub-group) each pod.
type Reconciler struct {
	Client        client.Client
	Grouper       *Grouper
	SchedulerName string
	// Recorder posts a workload's problems as events on the pod; nil posts none.
	Recorder record.EventRecorder

	// created remembers when this grouper created or found each PodGroup (namespace/name), so
	// that a workload's later pods cost a patch each and no create; after chainTTL it is
	// created again if it is gone (a user deleted it to start the job over).
	created *lru.Cache
}

// NewReconciler groups the pods of schedulerName with grouper.
func NewReconciler(c client.Client, grouper *Grouper, schedulerName string, recorder record.EventRecorder) *Reconciler {
	return &Reconciler{Client: c, Grouper: grouper, SchedulerName: schedulerName, Recorder: recorder, created: lru.New(chainCacheSize)}
}

// concurrentGroupings lets a burst of pods (a 500-pod job's) be annotated a few at a time; the
// pods of one workload still read its owners once (chains waits for the first reader).
const concurrentGroupings = 4

// SetupWithManager watches the pods of this scheduler that still lack a PodGroup.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	ungrouped := predicate.NewPredicateFuncs(func(o client.Object) bool {
		pod, ok := o.(*v1.Pod)
		return ok && pod.Spec.SchedulerName == r.SchedulerName && pod.Annotations[scheduling.PodGroupNameAnnotation] == ""
	})
	return ctrl.NewControllerManagedBy(mgr).Named("podgrouper").
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrentGroupings}).
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
		return ctrl.Result{}, nil // skipped, or another pool's scheduler groups it
	}
	key := group.Namespace + "/" + group.Name
	now := r.Grouper.chains.clock.Now()
	if at, known := r.created.Get(key); !known || now.Sub(at.(time.Time)) >= chainTTL {
		if err := r.Client.Create(ctx, group); err != nil && !apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, fmt.Errorf("creating PodGroup %s: %w", key, err)
		}
		r.created.Add(key, now)
	}
	metadata := map[string]any{"annotations": map[string]string{scheduling.PodGroupNameAnnotation: group.Name}}
	if grouping.SubGroup != "" {
		metadata["labels"] = map[string]string{scheduling.SubGroupLabel: grouping.SubGroup}
	}
	patch, _ := json.Marshal(map[string]any{"metadata": metadata})
	return ctrl.Result{}, client.IgnoreNotFound(r.Client.Patch(ctx, pod, client.RawPatch(types.MergePatchType, patch)))
}
