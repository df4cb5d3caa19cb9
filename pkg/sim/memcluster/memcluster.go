package memcluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	jsonpatch "github.com/evanphx/json-patch/v5"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/kai/v1alpha1"
	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/store"
)

// Cluster is the simulated API server: the objects, and the few writes the scheduler makes
// (bind, pod status patch, delete, PodGroup patches). Lists hand out shallow copies without
// serialising anything — the scheduler only reads them — which keeps a day of simulated
// cycles fast. Methods the scheduler never calls are left to the nil embedded client and
// would panic.
type Cluster struct {
	client.Client
	clock   clock.PassiveClock
	nodes   []*v1.Node
	queues  []*v2.Queue
	classes []*schedulingv1.PriorityClass
	// topologies are the cluster's Topologies; a cluster without them serves an empty list,
	// as one with the CRD and no objects does.
	topologies []*v1alpha1.Topology
	pods       map[types.NamespacedName]*v1.Pod
	groups     map[types.NamespacedName]*v2alpha2.PodGroup
	// OnBind and OnDelete tell the simulation about the scheduler's writes: a pod bound to
	// a node, and a pod whose graceful termination started. Set before the scheduler writes.
	OnBind   func(pod *v1.Pod, node string)
	OnDelete func(pod *v1.Pod)
	// OnGroupStatus, when set, is told of every PodGroup status the scheduler wrote (its
	// protection, its eviction count), as written: a completed job's PodGroup is gone by the
	// time the report is made, but what its status showed still counts.
	OnGroupStatus func(group *v2alpha2.PodGroup)
	// stores are the schedulers' views (one per node pool), each told of every change as
	// its informers would be; each keeps what belongs to its pool.
	stores []*store.Store
	// groupPatches and podPatches remember decoded status patches (see remembered).
	groupPatches map[string]*groupPatch
	podPatches   map[string]*podPatch
}

// New is a cluster of these nodes, queues, PriorityClasses and Topologies, without pods or
// PodGroups, whose deletions are stamped with clk's time.
func New(clk clock.PassiveClock, nodes []*v1.Node, queues []*v2.Queue, classes []*schedulingv1.PriorityClass, topologies []*v1alpha1.Topology) *Cluster {
	return &Cluster{
		clock: clk, nodes: nodes, queues: queues, classes: classes, topologies: topologies,
		pods: map[types.NamespacedName]*v1.Pod{}, groups: map[types.NamespacedName]*v2alpha2.PodGroup{},
	}
}

var _ client.Client = &Cluster{}

// AddStore makes s a scheduler's view of the cluster: from then on it is told of every
// change, as its informers would be. Of what is already there it learns when the caller
// passes each object to Changed, as an informer's first list tells of it.
func (c *Cluster) AddStore(s *store.Store) {
	c.stores = append(c.stores, s)
}

// Changed tells the schedulers' stores that obj was created or changed: the informer event
// of every write, whoever makes it (the scheduler, or the simulation's controllers and
// kubelet, which change the objects they got from Pod and Group in place).
func (c *Cluster) Changed(obj client.Object) {
	for _, s := range c.stores {
		s.Upsert(obj)
	}
}

// removed tells the scheduler's store that obj was deleted.
func (c *Cluster) removed(obj client.Object) {
	for _, s := range c.stores {
		s.Delete(obj)
	}
}

// Pod is the pod of that namespace and name; nil when there is none.
func (c *Cluster) Pod(key types.NamespacedName) *v1.Pod { return c.pods[key] }

// Group is the PodGroup of that namespace and name; nil when there is none.
func (c *Cluster) Group(key types.NamespacedName) *v2alpha2.PodGroup { return c.groups[key] }

// PutPod creates or replaces a pod.
func (c *Cluster) PutPod(pod *v1.Pod) {
	c.pods[keyOf(pod)] = pod
	c.Changed(pod)
}

// RemovePod deletes a pod for good (its termination is over).
func (c *Cluster) RemovePod(pod *v1.Pod) {
	delete(c.pods, keyOf(pod))
	c.removed(pod)
}

// PutGroup creates a PodGroup.
func (c *Cluster) PutGroup(group *v2alpha2.PodGroup) {
	c.groups[keyOf(group)] = group
	c.Changed(group)
}

// RemoveGroup deletes a PodGroup.
func (c *Cluster) RemoveGroup(group *v2alpha2.PodGroup) {
	delete(c.groups, keyOf(group))
	c.removed(group)
}

func keyOf(o client.Object) types.NamespacedName {
	return types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
}

// List serves the six lists the snapshot builder reads.
func (c *Cluster) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	switch l := list.(type) {
	case *v1.NodeList:
		l.Items = make([]v1.Node, len(c.nodes))
		for i, n := range c.nodes {
			l.Items[i] = *n
		}
	case *v2.QueueList:
		l.Items = make([]v2.Queue, len(c.queues))
		for i, q := range c.queues {
			l.Items[i] = *q
		}
	case *schedulingv1.PriorityClassList:
		l.Items = make([]schedulingv1.PriorityClass, len(c.classes))
		for i, pc := range c.classes {
			l.Items[i] = *pc
		}
	case *v1.PodList:
		l.Items = make([]v1.Pod, 0, len(c.pods))
		for _, p := range c.pods {
			l.Items = append(l.Items, *p)
		}
	case *v2alpha2.PodGroupList:
		l.Items = make([]v2alpha2.PodGroup, 0, len(c.groups))
		for _, g := range c.groups {
			l.Items = append(l.Items, *g)
		}
	case *v1alpha1.TopologyList:
		l.Items = make([]v1alpha1.Topology, len(c.topologies))
		for i, t := range c.topologies {
			l.Items[i] = *t
		}
	default:
		return fmt.Errorf("the simulated cluster cannot list %T", list)
	}
	return nil
}

// Get reads a PodGroup, as the status updater does before adding to its eviction count.
func (c *Cluster) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	into, ok := obj.(*v2alpha2.PodGroup)
	if !ok {
		return fmt.Errorf("the simulated cluster cannot get %T", obj)
	}
	group, ok := c.groups[key]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Group: "scheduling.run.ai", Resource: "podgroups"}, key.Name)
	}
	group.DeepCopyInto(into)
	return nil
}

// Patch applies the status updater's merge patches to PodGroups, and the binder's to pods
// (a share pod's GPU-group labels); a pod patch naming another UID is refused, as the API
// server refuses a change of a pod's UID.
func (c *Cluster) Patch(_ context.Context, obj client.Object, patch client.Patch, _ ...client.PatchOption) error {
	if _, isPod := obj.(*v1.Pod); isPod {
		pod, ok := c.pods[keyOf(obj)]
		if !ok {
			return apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, obj.GetName())
		}
		patched := pod.DeepCopy()
		if err := c.applyMergePatch(patched, patch, obj); err != nil {
			return err
		}
		if patched.UID != pod.UID {
			return apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, obj.GetName(), nil)
		}
		*pod = *patched // in place: the simulation holds the pod by pointer
		c.Changed(pod)
		return nil
	}
	group, ok := c.groups[keyOf(obj)]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Group: "scheduling.run.ai", Resource: "podgroups"}, obj.GetName())
	}
	if err := c.applyMergePatch(group, patch, obj); err != nil {
		return err
	}
	c.Changed(group)
	return nil
}

// Delete starts a pod's graceful termination, as the API server does: it only gets a
// deletion timestamp; the engine's kubelet removes it after its grace period.
func (c *Cluster) Delete(_ context.Context, obj client.Object, _ ...client.DeleteOption) error {
	pod, ok := c.pods[keyOf(obj)]
	if !ok || (obj.GetUID() != "" && obj.GetUID() != pod.UID) {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, obj.GetName())
	}
	if pod.DeletionTimestamp == nil {
		now := metav1.NewTime(c.clock.Now())
		pod.DeletionTimestamp = &now
		c.Changed(pod)
		c.OnDelete(pod)
	}
	return nil
}

// Status patches pods (the DisruptionTarget condition) and PodGroups (conditions).
func (c *Cluster) Status() client.SubResourceWriter { return statusWriter{c} }

// SubResource serves pods/binding.
func (c *Cluster) SubResource(name string) client.SubResourceClient {
	return bindingWriter{c: c, name: name}
}

type statusWriter struct {
	c *Cluster
}

func (w statusWriter) Create(context.Context, client.Object, client.Object, ...client.SubResourceCreateOption) error {
	return fmt.Errorf("the simulated cluster does not create status")
}
func (w statusWriter) Update(context.Context, client.Object, ...client.SubResourceUpdateOption) error {
	return fmt.Errorf("the simulated cluster does not update status")
}
func (w statusWriter) Apply(context.Context, runtime.ApplyConfiguration, ...client.SubResourceApplyOption) error {
	return fmt.Errorf("the simulated cluster does not apply status")
}

func (w statusWriter) Patch(_ context.Context, obj client.Object, patch client.Patch, _ ...client.SubResourcePatchOption) error {
	switch obj.(type) {
	case *v1.Pod:
		pod, ok := w.c.pods[keyOf(obj)]
		if !ok {
			return apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, obj.GetName())
		}
		data, err := patch.Data(obj)
		if err != nil {
			return err
		}
		defer w.c.Changed(pod)
		if applied, err := w.c.applyPodConditionPatch(pod, data); applied {
			return err
		}
		original, _ := json.Marshal(pod)
		patched, err := strategicpatch.StrategicMergePatch(original, data, v1.Pod{})
		if err != nil {
			return err
		}
		return json.Unmarshal(patched, pod)
	case *v2alpha2.PodGroup:
		group, ok := w.c.groups[keyOf(obj)]
		if !ok {
			return apierrors.NewNotFound(schema.GroupResource{Resource: "podgroups"}, obj.GetName())
		}
		defer w.c.Changed(group)
		if err := w.c.applyMergePatch(group, patch, obj); err != nil {
			return err
		}
		if w.c.OnGroupStatus != nil {
			w.c.OnGroupStatus(group)
		}
		return nil
	case *v2.Queue:
		for _, queue := range w.c.queues {
			if queue.Name == obj.GetName() {
				defer w.c.Changed(queue)
				return w.c.applyMergePatch(queue, patch, obj)
			}
		}
		return apierrors.NewNotFound(schema.GroupResource{Resource: "queues"}, obj.GetName())
	}
	return fmt.Errorf("the simulated cluster cannot patch the status of %T", obj)
}

// bindingWriter serves pods/binding; every other sub-resource operation is refused.
type bindingWriter struct {
	c    *Cluster
	name string
}

func (w bindingWriter) Get(context.Context, client.Object, client.Object, ...client.SubResourceGetOption) error {
	return fmt.Errorf("the simulated cluster does not get %s", w.name)
}
func (w bindingWriter) Update(context.Context, client.Object, ...client.SubResourceUpdateOption) error {
	return fmt.Errorf("the simulated cluster does not update %s", w.name)
}
func (w bindingWriter) Patch(context.Context, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
	return fmt.Errorf("the simulated cluster does not patch %s", w.name)
}
func (w bindingWriter) Apply(context.Context, runtime.ApplyConfiguration, ...client.SubResourceApplyOption) error {
	return fmt.Errorf("the simulated cluster does not apply %s", w.name)
}

// Create binds a pod, refusing a pod that is already bound or gone as the API server would.
func (w bindingWriter) Create(_ context.Context, obj client.Object, sub client.Object, _ ...client.SubResourceCreateOption) error {
	binding, ok := sub.(*v1.Binding)
	if w.name != "binding" || !ok {
		return fmt.Errorf("the simulated cluster does not create %s", w.name)
	}
	pod, exists := w.c.pods[keyOf(obj)]
	if !exists || (obj.GetUID() != "" && obj.GetUID() != pod.UID) {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, obj.GetName())
	}
	if pod.Spec.NodeName != "" {
		return apierrors.NewConflict(schema.GroupResource{Resource: "pods/binding"}, pod.Name, fmt.Errorf("pod is already bound to %s", pod.Spec.NodeName))
	}
	pod.Spec.NodeName = binding.Target.Name
	w.c.Changed(pod)
	w.c.OnBind(pod, binding.Target.Name)
	return nil
}

// applyMergePatch applies a JSON merge patch to target. The two patches the status updater
// sends to PodGroups — annotations, scheduling conditions — are applied directly, which is
// what a merge patch does to them; anything else goes through a generic merge.
func (c *Cluster) applyMergePatch(target any, patch client.Patch, obj client.Object) error {
	data, err := patch.Data(obj)
	if err != nil {
		return err
	}
	if group, ok := target.(*v2alpha2.PodGroup); ok && c.applyPodGroupPatch(group, data) {
		return nil
	}
	original, _ := json.Marshal(target)
	patched, err := jsonpatch.MergePatch(original, data)
	if err != nil {
		return err
	}
	// Into a zeroed object: unmarshalling onto the old one would keep the keys of its maps
	// that the patch removed (a label set to null, say).
	v := reflect.ValueOf(target).Elem()
	v.Set(reflect.Zero(v.Type()))
	return json.Unmarshal(patched, target)
}

// groupPatch is a decoded merge patch that only sets annotations and/or replaces the
// scheduling conditions and/or the min-runtime protection.
type groupPatch struct {
	annotations   map[string]*string
	conditions    []v2alpha2.SchedulingCondition
	setConditions bool
	minRuntime    *v2alpha2.MinRuntimeStatus
	setMinRuntime bool
}

func decodeGroupPatch(data []byte) (*groupPatch, bool) {
	var patch struct {
		Metadata *struct {
			Annotations map[string]*string `json:"annotations"`
		} `json:"metadata"`
		Status *struct {
			// Raw, to tell a list set to null from a list not mentioned.
			SchedulingConditions json.RawMessage `json:"schedulingConditions"`
			MinRuntime           json.RawMessage `json:"minRuntime"`
		} `json:"status"`
	}
	if !decodeOnly(data, &patch) {
		return nil, false
	}
	decoded := &groupPatch{}
	if patch.Metadata != nil {
		decoded.annotations = patch.Metadata.Annotations
	}
	if patch.Status != nil && patch.Status.SchedulingConditions != nil {
		decoded.setConditions = true
		if !decodeOnly(patch.Status.SchedulingConditions, &decoded.conditions) {
			return nil, false
		}
	}
	if patch.Status != nil && patch.Status.MinRuntime != nil {
		decoded.setMinRuntime = true
		if !namesEveryField(patch.Status.MinRuntime) || !decodeOnly(patch.Status.MinRuntime, &decoded.minRuntime) {
			return nil, false
		}
	}
	return decoded, true
}

// namesEveryField reports whether a min-runtime patch is null or names every field of the
// status (optional ones as null), as the status updater writes it: merging it is then
// replacing, which is all the fast path does.
func namesEveryField(raw json.RawMessage) bool {
	var fields map[string]json.RawMessage
	if string(raw) == "null" {
		return true
	}
	if json.Unmarshal(raw, &fields) != nil || len(fields) != minRuntimeFields {
		return false
	}
	var preempt map[string]json.RawMessage
	return json.Unmarshal(fields["preempt"], &preempt) == nil && len(preempt) == protectionFields
}

// minRuntimeFields and protectionFields are how many fields v2alpha2.MinRuntimeStatus and
// v2alpha2.MinRuntimeProtection have, as a patch naming every field names them.
var (
	minRuntimeFields = reflect.TypeFor[v2alpha2.MinRuntimeStatus]().NumField()
	protectionFields = reflect.TypeFor[v2alpha2.MinRuntimeProtection]().NumField()
)

// applyPodGroupPatch applies a merge patch that only sets annotations and/or replaces the
// scheduling conditions or the min-runtime protection; it reports false, changing nothing,
// for any other patch.
func (c *Cluster) applyPodGroupPatch(group *v2alpha2.PodGroup, data []byte) bool {
	patch, ok := remembered(&c.groupPatches, data, decodeGroupPatch)
	if !ok {
		return false
	}
	for k, v := range patch.annotations {
		if v == nil {
			delete(group.Annotations, k)
			continue
		}
		if group.Annotations == nil {
			group.Annotations = map[string]string{}
		}
		group.Annotations[k] = *v
	}
	if patch.setConditions {
		// A copy: the decoded patch is shared by every PodGroup it is applied to.
		group.Status.SchedulingConditions = nil
		for i := range patch.conditions {
			group.Status.SchedulingConditions = append(group.Status.SchedulingConditions, *patch.conditions[i].DeepCopy())
		}
	}
	if patch.setMinRuntime {
		group.Status.MinRuntime = patch.minRuntime.DeepCopy() // nil for null
	}
	return true
}

// maxRememberedPatches bounds each memory of decoded patches.
const maxRememberedPatches = 256

// remembered decodes a patch, or returns the decoding of the same bytes seen before: the
// status updater sends the same condition to every job waiting for the same reason, and to
// each of a job's pods, and decoding is most of what applying costs.
func remembered[T any](memory *map[string]T, data []byte, decode func([]byte) (T, bool)) (T, bool) {
	if v, ok := (*memory)[string(data)]; ok {
		return v, true
	}
	v, ok := decode(data)
	if !ok {
		return v, false
	}
	if *memory == nil || len(*memory) >= maxRememberedPatches {
		*memory = map[string]T{}
	}
	(*memory)[string(data)] = v
	return v, true
}

// decodeOnly decodes data into v if it has no field v does not know, in one pass: the
// status updater's patches are most of what a large simulation spends outside the scheduler.
func decodeOnly(data []byte, v any) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v) == nil
}

// podPatch is a decoded strategic merge patch that only carries pod conditions, the
// nominated node and optionally the UID guard.
type podPatch struct {
	uid          types.UID
	conditions   []v1.PodCondition
	nominated    *string
	setNominated bool
}

func decodePodPatch(data []byte) (*podPatch, bool) {
	var patch struct {
		Metadata *struct {
			UID types.UID `json:"uid"`
		} `json:"metadata"`
		Status *struct {
			Conditions []v1.PodCondition `json:"conditions"`
			// Raw, to tell a node set to null from a node not mentioned.
			NominatedNodeName json.RawMessage `json:"nominatedNodeName"`
		} `json:"status"`
	}
	if !decodeOnly(data, &patch) || patch.Status == nil {
		return nil, false
	}
	decoded := &podPatch{conditions: patch.Status.Conditions}
	if patch.Metadata != nil {
		decoded.uid = patch.Metadata.UID
	}
	if raw := patch.Status.NominatedNodeName; raw != nil {
		decoded.setNominated = true
		if !decodeOnly(raw, &decoded.nominated) {
			return nil, false
		}
	}
	return decoded, true
}

// applyPodConditionPatch applies a strategic merge patch that only carries pod conditions
// (merged by type, as the API server does), the nominated node (a string, or null to clear
// it) and optionally the UID guard; it reports false, changing nothing, for any other patch.
func (c *Cluster) applyPodConditionPatch(pod *v1.Pod, data []byte) (bool, error) {
	patch, ok := remembered(&c.podPatches, data, decodePodPatch)
	if !ok {
		return false, nil
	}
	if patch.uid != "" && patch.uid != pod.UID {
		return true, apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, pod.Name, fmt.Errorf("uid mismatch"))
	}
	if patch.setNominated {
		pod.Status.NominatedNodeName = ""
		if patch.nominated != nil {
			pod.Status.NominatedNodeName = *patch.nominated
		}
	}
	for _, c := range patch.conditions { // copied by value: conditions hold no references
		replaced := false
		for i := range pod.Status.Conditions {
			if pod.Status.Conditions[i].Type == c.Type {
				pod.Status.Conditions[i], replaced = c, true
			}
		}
		if !replaced {
			pod.Status.Conditions = append(pod.Status.Conditions, c)
		}
	}
	return true, nil
}
