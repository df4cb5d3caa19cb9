package podgrouper

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
)

// Workload is a pod and the chain of controllers above it, as the API server holds them.
type Workload struct {
	Pod *v1.Pod
	// Owners are the pod's controllers, nearest first: Owners[0] controls the pod, and the
	// last one is the top owner, controlled by no one but a wrapper. Empty for a bare pod.
	Owners []*unstructured.Unstructured
	// Wrappers are the owners above the top owner that only wrap the workload (an Argo
	// Workflow, a Katib Trial), nearest first: the workload is what they wrap, but what the
	// user set on them (a queue, a priority) is read first, as set on the workload.
	Wrappers []*unstructured.Unstructured

	// topDown are the wrappers and owners from the top down, the order in which the user's
	// settings on them are read; workloadFirst their labels and then the pod's, podFirst the
	// pod's and then theirs. Computed once: every setting of the pod's PodGroup reads them.
	topDown                 []*unstructured.Unstructured
	workloadFirst, podFirst []map[string]string
}

// newWorkload splits a pod's chain of controllers into the workload's owners and the
// wrappers above them. The top owner is the highest owner of a kind with a rule: what is above
// it only wraps the workload (an Argo Workflow, a Flyte workflow above a PyTorchJob, a KServe
// service above a Knative Service), and merging every workload it runs into one gang of one
// would lose each one's gang. Without a rule in the chain, the top is the highest owner that
// is not a known wrapper.
func newWorkload(pod *v1.Pod, chain []*unstructured.Unstructured) *Workload {
	top := len(chain)
	for top > 0 && rules[chain[top-1].GroupVersionKind().GroupKind()] == nil {
		top--
	}
	if top == 0 {
		top = len(chain)
		for top > 0 && wrappers[chain[top-1].GroupVersionKind().GroupKind()] {
			top--
		}
	}
	w := &Workload{Pod: pod, Owners: chain[:top], Wrappers: chain[top:]}
	w.topDown = slices.Clone(chain)
	slices.Reverse(w.topDown)
	w.podFirst = append(w.podFirst, pod.Labels)
	for _, o := range w.topDown {
		w.workloadFirst = append(w.workloadFirst, o.GetLabels())
		w.podFirst = append(w.podFirst, o.GetLabels())
	}
	w.workloadFirst = append(w.workloadFirst, pod.Labels)
	return w
}

// Top is the workload's top owner, nil for a bare pod.
func (w *Workload) Top() *unstructured.Unstructured {
	if len(w.Owners) == 0 {
		return nil
	}
	return w.Owners[len(w.Owners)-1]
}

// Nearest is the owner of that group and kind closest to the pod, nil when the chain has none.
func (w *Workload) Nearest(gk schema.GroupKind) *unstructured.Unstructured {
	for _, o := range w.Owners {
		if o.GroupVersionKind().GroupKind() == gk {
			return o
		}
	}
	return nil
}

// Gang is what a kind's rule says about a workload: which object its PodGroup stands for, and
// the gang that object needs to run.
type Gang struct {
	// Object is the part of the workload that runs as one gang, which names and owns the
	// PodGroup: most often the top owner, but a CronJob's Job, a RayService's RayCluster, a
	// Knative Service's Revision. Nil: the pod itself.
	Object *unstructured.Unstructured
	// NameSuffix follows pg-<object>-<uid>, for kinds with several gangs per object (a
	// LeaderWorkerSet's groups).
	NameSuffix string
	// Name, when set, is the PodGroup's whole name (a Spark application's selector).
	Name string
	// Unowned leaves the PodGroup without an owner: no object outlives all its pods (a Spark
	// application's executors in client mode, whose driver runs outside the cluster).
	Unowned bool
	// MinMember is the gang in pods; MinSubGroup, when set, the gang in ready sub-groups.
	MinMember   int32
	MinSubGroup *int32
	SubGroups   []v2alpha2.SubGroup
	// SubGroup is the sub-group this pod belongs to, empty without sub-groups.
	SubGroup string
	// DefaultPriority is the kind's priority class when neither the workload nor the pod
	// names one.
	DefaultPriority string
	// PriorityLabels are labels besides priorityClassName with which the kind's users name a
	// priority class on the workload (Ray's ray.io/priority-class-name).
	PriorityLabels []string
	// BatchMinMember says kai.scheduler/batch-min-member applies (batch Jobs and JobSets).
	BatchMinMember bool
}

// Priority classes upstream gives a workload that names none, by kind.
const (
	TrainPriority     = "train"
	InferencePriority = "inference"
	BuildPriority     = "build"
)

// A rule reads one workload kind: it is chosen by the group and kind of the workload's top
// owner, and says what gang the workload needs. An error is a workload field the rule cannot
// use (a *FieldError): the pod is then grouped on its own, and the error is reported on it.
type rule func(w *Workload) (Gang, error)

// rules are the kinds with a rule of their own; every other top owner gets perOwner.
var rules = map[schema.GroupKind]rule{}

// register adds a kind's rule; each kind's file registers its own in init.
func register(r rule, kinds ...schema.GroupKind) {
	for _, gk := range kinds {
		if _, dup := rules[gk]; dup {
			panic("podgrouper: two rules for " + gk.String())
		}
		rules[gk] = r
	}
}

// wrappers are top owners that only wrap a workload: the pods are grouped by what they wrap.
// A Katib Trial (and its Experiment) wraps the training job it tunes, whose gang it is.
var wrappers = map[schema.GroupKind]bool{
	{Group: "argoproj.io", Kind: "Workflow"}:    true,
	{Group: "kubeflow.org", Kind: "Trial"}:      true,
	{Group: "kubeflow.org", Kind: "Experiment"}: true,
}

// ReadKinds are the kinds whose objects the grouper reads above a pod, sorted by group and
// kind: those it has a rule for and the wrappers it looks through. The chart's RBAC grants
// exactly these reads.
func ReadKinds() []schema.GroupKind {
	kinds := make([]schema.GroupKind, 0, len(rules)+len(wrappers))
	for gk := range rules {
		kinds = append(kinds, gk)
	}
	for gk := range wrappers {
		kinds = append(kinds, gk)
	}
	slices.SortFunc(kinds, func(a, b schema.GroupKind) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Kind, b.Kind))
	})
	return kinds
}

// perOwner is the rule for kinds without one: the top owner is one gang of one pod (its pods
// run and are reclaimed on their own, but share a queue, a priority and a PodGroup), and a
// bare pod is its own.
func perOwner(w *Workload) (Gang, error) {
	return Gang{Object: w.Top(), MinMember: 1, DefaultPriority: TrainPriority}, nil
}

// FieldError is a workload field a rule cannot use: negative replicas, an unknown policy, a
// number where none can be. It names the object and the field, so the user can fix it.
type FieldError struct {
	Object  *unstructured.Unstructured
	Field   string
	Problem string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s %s: %s %s", e.Object.GetKind(), objectKey(e.Object), e.Field, e.Problem)
}

// podObject is the pod as an object a FieldError can name (a label of the pod's is wrong).
func podObject(pod *v1.Pod) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetAPIVersion("v1")
	o.SetKind("Pod")
	o.SetNamespace(pod.Namespace)
	o.SetName(pod.Name)
	o.SetUID(pod.UID)
	return o
}

// objectKey is namespace/name, or name for a cluster-scoped object.
func objectKey(o metav1.Object) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}

// count reads a non-negative whole number at a path of an object: ok is false when the field
// is absent; a negative or non-whole value, or one of another type, is a FieldError.
func count(o *unstructured.Unstructured, path ...string) (n int32, ok bool, err error) {
	value, found, err := unstructured.NestedFieldNoCopy(o.Object, path...)
	if err != nil || !found || value == nil {
		return 0, false, nil
	}
	field := strings.Join(path, ".")
	whole, isWhole := wholeNumber(value)
	switch {
	case !isWhole:
		return 0, false, &FieldError{Object: o, Field: field, Problem: fmt.Sprintf("is %v, not a whole number", value)}
	case whole < 0 || whole > 1<<30:
		return 0, false, &FieldError{Object: o, Field: field, Problem: fmt.Sprintf("is %d, not a count of pods", whole)}
	}
	return int32(whole), true, nil
}

// wholeNumber is a decoded JSON value as a whole number, if it is one.
func wholeNumber(value any) (int64, bool) {
	switch v := value.(type) {
	case int64:
		return v, true
	case int32:
		return int64(v), true
	case int:
		return int64(v), true
	case float64:
		return int64(v), v == float64(int64(v))
	}
	return 0, false
}

// countOr is count with a default for an absent field.
func countOr(o *unstructured.Unstructured, fallback int32, path ...string) (int32, error) {
	n, ok, err := count(o, path...)
	if err != nil || !ok {
		return fallback, err
	}
	return n, nil
}

// text reads a string field, empty when absent or of another type.
func text(o *unstructured.Unstructured, path ...string) string {
	s, _, _ := unstructured.NestedString(o.Object, path...)
	return s
}
