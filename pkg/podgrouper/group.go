package podgrouper

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
)

// DefaultQueue takes workloads without a kai.scheduler/queue label.
const DefaultQueue = "default-queue"

// Labels and annotations the grouper reads on a workload besides the scheduler's own.
const (
	// PriorityClassLabel names a workload's priority class on the workload or its pods.
	PriorityClassLabel = "priorityClassName"
	// MinMemberAnnotation replaces the gang a kind's rule computes, for any kind.
	MinMemberAnnotation = "kai.scheduler/min-member"
	// BatchMinMemberAnnotation replaces the gang of a batch Job or a JobSet.
	BatchMinMemberAnnotation = "kai.scheduler/batch-min-member"
	// SparkAppLabel groups all pods of a Spark application, driver and executors.
	SparkAppLabel = "spark-app-selector"
	// Topology annotations become the PodGroup's topologyConstraint.
	TopologyAnnotation                   = "kai.scheduler/topology"
	TopologyRequiredPlacementAnnotation  = "kai.scheduler/topology-required-placement"
	TopologyPreferredPlacementAnnotation = "kai.scheduler/topology-preferred-placement"
	// WorkloadAnnotation on a PodGroup names the workload it was made for, <Kind>[.<group>]/<name>
	// of its top owner ("PyTorchJob.kubeflow.org/train"), for explain and kai-sim.
	WorkloadAnnotation = "kai.scheduler/workload"
	// lastAppliedAnnotation is kubectl's copy of the whole object: not for a PodGroup.
	lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"
)

// Problem is something wrong with a workload that the user should hear about, on the pod:
// the pod is still grouped (on its own when its workload cannot be read).
type Problem struct {
	Reason, Message string
}

// Problem reasons.
const (
	ReasonOwnerUnreadable           = "WorkloadOwnerUnreadable"
	ReasonWorkloadFieldInvalid      = "WorkloadFieldInvalid"
	ReasonWorkloadAnnotationInvalid = "WorkloadAnnotationInvalid"
)

// Grouping is what the grouper decided for one pod.
type Grouping struct {
	// PodGroup is the pod's PodGroup as it would be created; nil when the pod is not this
	// grouper's (skipped, or another node pool's).
	PodGroup *v2alpha2.PodGroup
	// SubGroup labels the pod within its PodGroup; empty without sub-groups.
	SubGroup string
	Problems []Problem
}

// Grouper decides pods' PodGroups from their workloads; it writes nothing (Reconciler and
// kai-sim do).
type Grouper struct {
	// Pool is the node pool of the scheduler: it groups the workloads labelled for the pool
	// (on the pod, or on an owner), and labels their PodGroups so, which is how that pool's
	// scheduler finds them.
	Pool scheduling.NodePool
	// PriorityClassExists says whether a pod's spec.priorityClassName names a PriorityClass;
	// nil trusts every name.
	PriorityClassExists func(ctx context.Context, name string) (bool, error)
	// Defaults are the per-kind default priority classes and preemptibility that replace the
	// built-in ones; nil has none. An error is worth retrying.
	Defaults func(ctx context.Context) (KindDefaults, error)

	chains *chains
}

// NewGrouper reads owners with reader, remembering chains by clk's time.
func NewGrouper(reader OwnerReader, clk clock.PassiveClock, pool scheduling.NodePool) *Grouper {
	return &Grouper{Pool: pool, chains: newChains(reader, clk)}
}

// Group decides a pod's PodGroup. The error is one worth retrying (the API server did not
// answer); anything wrong with the workload itself is a Problem, and the pod still gets a
// PodGroup.
func (g *Grouper) Group(ctx context.Context, pod *v1.Pod) (Grouping, error) {
	if skipped(pod.Annotations) {
		return Grouping{}, nil
	}
	var problems []Problem
	owners, err := g.chains.ownersOf(ctx, pod)
	var unreadable *UnreadableOwner
	switch {
	case errors.As(err, &unreadable) && len(owners) == 0:
		problems = append(problems, Problem{Reason: ReasonOwnerUnreadable, Message: fmt.Sprintf(
			"%v; the pod is grouped on its own until it is recreated with an owner that can be read", err)})
	case errors.As(err, &unreadable):
		problems = append(problems, Problem{Reason: ReasonOwnerUnreadable, Message: fmt.Sprintf(
			"%v; the pod is grouped by the owners below it", err)})
	case err != nil:
		return Grouping{}, err
	}
	w := newWorkload(pod, owners)
	for _, o := range w.topDown {
		if skipped(o.GetAnnotations()) {
			return Grouping{}, nil
		}
	}
	if !g.Pool.Includes(firstWith(g.Pool.LabelKey, w.podFirst...)) {
		return Grouping{}, nil
	}
	defaults, err := g.kindDefault(ctx, w)
	if err != nil {
		return Grouping{}, err
	}
	gang, err := g.gangOf(w)
	if err == nil {
		err = storableSubGroups(w, gang)
	}
	if err != nil {
		problems = append(problems, Problem{Reason: ReasonWorkloadFieldInvalid, Message: fmt.Sprintf(
			"%v; the pod is grouped on its own until the workload is fixed", err)})
		// The pod's own gang of one, without the overrides: one written for the whole workload
		// must not make it wait for pods that will never join it.
		group := g.podGroup(ctx, w, Gang{MinMember: 1, DefaultPriority: cmp.Or(gang.DefaultPriority, TrainPriority)}, defaults)
		return Grouping{PodGroup: group, Problems: problems}, nil
	}
	group := g.podGroup(ctx, w, gang, defaults)
	if problem := overrideGang(w, gang, group); problem != nil {
		problems = append(problems, *problem)
	}
	// A pod joins a sub-group the PodGroup has, or none: an override replaces the sub-groups
	// with a gang of pods, and a part that needs no pods (an LWS of size 1 has no workers) has
	// no sub-group.
	subGroup := ""
	if slices.ContainsFunc(group.Spec.SubGroups, func(sg v2alpha2.SubGroup) bool { return sg.Name == gang.SubGroup }) {
		subGroup = gang.SubGroup
	}
	return Grouping{PodGroup: group, SubGroup: subGroup, Problems: problems}, nil
}

// maxSubGroups is the most sub-groups the PodGroup CRD stores.
const maxSubGroups = 128

// storableSubGroups refuses a gang whose sub-groups the API server would refuse (two of one
// name, too many): its PodGroup could never be made, and the pod would wait for it for ever.
// Such a workload (a JobSet whose replicated jobs "a" and "a-replica-0" name the same replica)
// is reported, and its pods grouped alone.
func storableSubGroups(w *Workload, gang Gang) error {
	object := gang.Object
	if object == nil {
		object = podObject(w.Pod)
	}
	if len(gang.SubGroups) > maxSubGroups {
		return &FieldError{Object: object, Field: "spec", Problem: fmt.Sprintf(
			"makes %d sub-groups, more than a PodGroup holds (%d)", len(gang.SubGroups), maxSubGroups)}
	}
	seen := make(map[string]bool, len(gang.SubGroups))
	for _, sg := range gang.SubGroups {
		if seen[sg.Name] {
			return &FieldError{Object: object, Field: "spec", Problem: fmt.Sprintf(
				"makes two sub-groups named %q (rename one of the parts they stand for)", sg.Name)}
		}
		seen[sg.Name] = true
	}
	return nil
}

// gangOf applies the rule of the workload's kind.
func (g *Grouper) gangOf(w *Workload) (Gang, error) {
	if app := w.Pod.Labels[SparkAppLabel]; app != "" {
		return sparkApplication(w, app)
	}
	top := w.Top()
	if top == nil {
		return perOwner(w)
	}
	if r, ok := rules[top.GroupVersionKind().GroupKind()]; ok {
		return r(w)
	}
	return perOwner(w)
}

// sparkApplication groups a Spark application's driver and executors, whose owners differ
// (the executors are the driver's), by the application's selector label, which names the
// PodGroup (Spark makes it spark-<hex>, a valid name; another value is reported).
func sparkApplication(w *Workload, app string) (Gang, error) {
	if errs := validation.IsDNS1123Subdomain(app); len(errs) > 0 {
		return Gang{}, &FieldError{Object: podObject(w.Pod), Field: "metadata.labels[" + SparkAppLabel + "]",
			Problem: fmt.Sprintf("is %q, which cannot name a PodGroup: %s", app, strings.Join(errs, "; "))}
	}
	gang := Gang{Object: w.Top(), Name: app, MinMember: 1, DefaultPriority: TrainPriority}
	if gang.Object == nil {
		// The driver owns its executors, and so the application's PodGroup; an executor
		// without an owner (client mode) must not own it, or the PodGroup would go with it.
		if w.Pod.Labels[sparkRoleLabel] == "driver" {
			gang.Object = podObject(w.Pod)
		} else {
			gang.Unowned = true
		}
	}
	return gang, nil
}

// sparkRoleLabel is driver or executor on a Spark application's pods.
const sparkRoleLabel = "spark-role"

// podGroup is the PodGroup of a gang (the pod's own, without Gang.Object), with what the user
// set on the workload: queue, priority, preemptibility, protection windows and topology.
func (g *Grouper) podGroup(ctx context.Context, w *Workload, gang Gang, defaults KindDefault) *v2alpha2.PodGroup {
	// The workload controls its PodGroup: it goes when the workload goes.
	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: w.Pod.Name, UID: w.Pod.UID, Controller: ptr.To(true)}
	if gang.Object != nil {
		owner = metav1.OwnerReference{APIVersion: gang.Object.GetAPIVersion(), Kind: gang.Object.GetKind(),
			Name: gang.Object.GetName(), UID: gang.Object.GetUID(), Controller: ptr.To(true)}
	}
	name := gang.Name
	if name == "" {
		name = groupName(owner, gang.NameSuffix)
	}
	owners := []metav1.OwnerReference{owner}
	if gang.Unowned {
		owners = nil
	}
	group := &v2alpha2.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.Pod.Namespace, Name: name, OwnerReferences: owners},
		Spec:       v2alpha2.PodGroupSpec{MinMember: gang.MinMember, MinSubGroup: gang.MinSubGroup, SubGroups: gang.SubGroups},
	}
	// The PodGroup carries the top owner's labels and annotations (and its wrappers', which
	// come first), so that whatever the user set on the workload (a preemption delay, a
	// staleness grace period) reads as if written on the PodGroup, with the scheduler's own
	// checks and reports.
	if top := w.Top(); top != nil {
		for _, o := range w.topDown[:len(w.Wrappers)+1] {
			for key, value := range o.GetLabels() {
				setIfAbsent(&group.Labels, key, value)
			}
			for key, value := range o.GetAnnotations() {
				if key != lastAppliedAnnotation {
					setIfAbsent(&group.Annotations, key, value)
				}
			}
		}
		setString(&group.Annotations, WorkloadAnnotation, workloadName(top.GroupVersionKind().GroupKind(), top.GetName()))
	}
	for _, key := range []string{scheduling.PreemptionDelayAnnotation, scheduling.StalenessGracePeriodAnnotation} {
		if value, ok := w.firstAnnotation(key, false); ok {
			setString(&group.Annotations, key, value)
		}
	}

	// The queue and the preemptibility are the workload's labels (top owner first), else the
	// pod's, as upstream reads them: the workload says where and how it runs, whatever its
	// pods' templates carry. The pool is the pod's label, else its owners'.
	queue := firstWith(scheduling.QueueLabel, w.workloadFirst...)[scheduling.QueueLabel]
	if queue == "" {
		queue = DefaultQueue
	}
	group.Spec.Queue = queue
	setString(&group.Labels, scheduling.QueueLabel, queue)
	if pool, ok := firstWith(g.Pool.LabelKey, w.podFirst...)[g.Pool.LabelKey]; ok && g.Pool.LabelKey != "" {
		setString(&group.Labels, g.Pool.LabelKey, pool)
	}
	if p := firstWith(scheduling.PreemptibilityLabel, w.workloadFirst...)[scheduling.PreemptibilityLabel]; p == string(v2alpha2.Preemptible) || p == string(v2alpha2.NonPreemptible) {
		group.Spec.Preemptibility = v2alpha2.Preemptibility(p)
	} else if defaults.Preemptibility != "" {
		group.Spec.Preemptibility = defaults.Preemptibility
	}
	group.Spec.PriorityClassName = g.priorityClass(ctx, w, gang, defaults)
	group.Spec.TopologyConstraint = topologyOf(w)
	return group
}

// priorityClass is the workload's priority class: a label on the workload (top owner first)
// or the pod, else the pod's spec when it names a PriorityClass that exists, else the kind's
// default (the cluster's defaults ConfigMap first).
func (g *Grouper) priorityClass(ctx context.Context, w *Workload, gang Gang, defaults KindDefault) string {
	for _, key := range append([]string{PriorityClassLabel}, gang.PriorityLabels...) {
		if name := firstWith(key, w.workloadFirst...)[key]; name != "" {
			return name
		}
	}
	if name := w.Pod.Spec.PriorityClassName; name != "" {
		exists := true
		if g.PriorityClassExists != nil {
			var err error
			if exists, err = g.PriorityClassExists(ctx, name); err != nil {
				exists = true // the scheduler reports a missing class on the PodGroup itself
			}
		}
		if exists {
			return name
		}
	}
	if defaults.PriorityName != "" {
		return defaults.PriorityName
	}
	return gang.DefaultPriority
}

// kindDefault is the cluster's default for the workload's top kind (the pod's, for a bare pod).
func (g *Grouper) kindDefault(ctx context.Context, w *Workload) (KindDefault, error) {
	if g.Defaults == nil {
		return KindDefault{}, nil
	}
	gk := podKind
	if top := w.Top(); top != nil {
		gk = top.GroupVersionKind().GroupKind()
	}
	table, err := g.Defaults(ctx)
	return table[gk], err
}

// overrideGang applies kai.scheduler/min-member (any kind) or kai.scheduler/batch-min-member
// (batch Jobs, JobSets): either replaces the whole gang with that many pods, sub-groups and
// all. A value that is not a positive whole number is reported and ignored.
func overrideGang(w *Workload, gang Gang, group *v2alpha2.PodGroup) *Problem {
	keys := []string{MinMemberAnnotation}
	if gang.BatchMinMember {
		keys = append(keys, BatchMinMemberAnnotation)
	}
	for _, key := range keys {
		value, ok := w.firstAnnotation(key, true)
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 32)
		if err != nil || n < 1 {
			return &Problem{Reason: ReasonWorkloadAnnotationInvalid, Message: fmt.Sprintf(
				"annotation %s is %q, not a positive whole number of pods: the gang stays %s", key, value, gangString(group))}
		}
		group.Spec.MinMember, group.Spec.MinSubGroup, group.Spec.SubGroups = int32(n), nil, nil
		return nil
	}
	return nil
}

func gangString(group *v2alpha2.PodGroup) string {
	if group.Spec.MinSubGroup != nil {
		return fmt.Sprintf("%d sub-groups", *group.Spec.MinSubGroup)
	}
	return fmt.Sprintf("%d pods", group.Spec.MinMember)
}

// topologyOf is the topology constraint the workload asks for, nil when none.
func topologyOf(w *Workload) *v2alpha2.TopologyConstraint {
	topology, _ := w.firstAnnotation(TopologyAnnotation, true)
	required, _ := w.firstAnnotation(TopologyRequiredPlacementAnnotation, true)
	preferred, _ := w.firstAnnotation(TopologyPreferredPlacementAnnotation, true)
	if topology == "" && required == "" && preferred == "" {
		return nil
	}
	return &v2alpha2.TopologyConstraint{Topology: topology, RequiredTopologyLevel: required, PreferredTopologyLevel: preferred}
}

// firstAnnotation is the annotation on the wrappers and owners, top first, and then, withPod,
// on the pod.
func (w *Workload) firstAnnotation(key string, withPod bool) (string, bool) {
	for _, o := range w.topDown {
		if value, ok := o.GetAnnotations()[key]; ok {
			return value, true
		}
	}
	if withPod {
		value, ok := w.Pod.Annotations[key]
		return value, ok
	}
	return "", false
}

// workloadName is <Kind>[.<group>]/<name>, the way kubectl names an object of any kind.
func workloadName(gk schema.GroupKind, name string) string {
	return gk.String() + "/" + name
}

// WorkloadOf names the workload behind a PodGroup, as workloadName: the grouper's
// kai.scheduler/workload annotation, else the PodGroup's controller (its only owner when none
// is marked controller, as older groupers wrote it); empty for a PodGroup made by hand.
func WorkloadOf(group *v2alpha2.PodGroup) string {
	if name := group.Annotations[WorkloadAnnotation]; name != "" {
		return name
	}
	owner := metav1.GetControllerOfNoCopy(group)
	if owner == nil && len(group.OwnerReferences) == 1 {
		owner = &group.OwnerReferences[0]
	}
	if owner == nil || owner.Kind == "" || owner.Name == "" {
		return ""
	}
	return workloadName(schema.FromAPIVersionAndKind(owner.APIVersion, owner.Kind).GroupKind(), owner.Name)
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

// groupName is pg-<owner>-<uid><suffix>, the owner's name cut so that the whole stays a valid
// object name (at most 253 characters); pg-<owner><suffix> for an owner without a UID (one
// written in a kai-sim file).
func groupName(owner metav1.OwnerReference, suffix string) string {
	uid := ""
	if owner.UID != "" {
		uid = "-" + string(owner.UID)
	}
	name := owner.Name
	if limit := 253 - len("pg-") - len(uid) - len(suffix); len(name) > limit {
		name = strings.TrimRight(name[:limit], "-.")
	}
	return "pg-" + name + uid + suffix
}

func setIfAbsent(m *map[string]string, key, value string) {
	if _, ok := (*m)[key]; !ok {
		setString(m, key, value)
	}
}

func setString(m *map[string]string, key, value string) {
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[key] = value
}
