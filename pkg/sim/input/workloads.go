package input

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/yaml"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/kai/v1alpha1"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/podgrouper"
)

// A scenario may hold workloads as users write them for a cluster (a batch Job, a PyTorchJob,
// a RayCluster, a Deployment: any kind) with the pods their controllers would create, each
// naming its controller in metadata.ownerReferences. kai-sim runs no controllers: the pods
// are written, and KAI's pod grouper, the real one, makes their PodGroups from the workloads,
// as it does on a cluster. The PodGroup carries the top owner's annotations, so the
// simulation annotations written on a workload are read as if written on its PodGroup.

// reservedGroups are the API groups whose kinds a scenario reads itself: another kind of
// theirs is a mistake (a misspelt PodGroup, a Service), not a workload.
var reservedGroups = map[string]bool{"": true, "scheduling.run.ai": true, "scheduling.k8s.io": true, v1alpha1.GroupName: true}

// podOwningCoreKinds are the core kinds that own pods: a scenario takes them as workloads.
var podOwningCoreKinds = map[string]bool{"ReplicationController": true}

// isWorkloadKind reports whether a document of this apiVersion and kind is read as a workload.
func isWorkloadKind(meta metav1.TypeMeta) bool {
	if meta.APIVersion == "" || meta.Kind == "" {
		return false
	}
	gv, err := schema.ParseGroupVersion(meta.APIVersion)
	if err != nil {
		return false
	}
	if gv.Group == "" {
		return podOwningCoreKinds[meta.Kind]
	}
	return !reservedGroups[gv.Group]
}

// workloadDocument is a workload of the file and where it was written.
type workloadDocument struct {
	object *unstructured.Unstructured
	index  int
	// settings says it carries simulation annotations, which only reach a PodGroup from the
	// top of a workload's owners.
	settings bool
	// reached says some pod of the file belongs to it.
	reached bool
}

// describe is "document N (Kind namespace/name)", as errors name a document.
func (w *workloadDocument) describe() string {
	return fmt.Sprintf("document %d (%s %s/%s)", w.index, w.object.GetKind(), w.object.GetNamespace(), w.object.GetName())
}

// workloads are the workload documents of one file, by group, kind, namespace and name.
type workloads struct {
	byKey map[workloadKey]*workloadDocument
	// poolKey is the node-pool label key the simulation runs with: each pool's pod grouper
	// groups the pods labelled for it, as on a cluster.
	poolKey  string
	groupers map[string]*podgrouper.Grouper // by pool
	owners   *podgrouper.ObjectOwners
}

type workloadKey struct {
	gk              schema.GroupKind
	namespace, name string
}

func newWorkloads(poolKey string) *workloads {
	return &workloads{byKey: map[workloadKey]*workloadDocument{}, poolKey: poolKey, groupers: map[string]*podgrouper.Grouper{}}
}

// decodeWorkload reads a workload document: any kind, its metadata as strictly as a Pod's
// (a misspelt metadata field is an error), its namespace "default" when it names none.
func decodeWorkload(doc document) (*unstructured.Unstructured, error) {
	object := &unstructured.Unstructured{}
	if err := object.UnmarshalJSON(doc.json); err != nil {
		return nil, decodeError(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(doc.json, &top); err != nil {
		return nil, decodeError(err)
	}
	var typed struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	wrapped, err := json.Marshal(map[string]json.RawMessage{"metadata": top["metadata"]})
	if err != nil {
		return nil, decodeError(err)
	}
	dec := json.NewDecoder(bytes.NewReader(wrapped))
	dec.DisallowUnknownFields()
	err = dec.Decode(&typed)
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		// As a Pod's: a value that fits its field only as text (labels: {zone: 3}) is read
		// from the YAML with the field's type; the rest of the document is the workload's.
		typed.Metadata = metav1.ObjectMeta{}
		err = yaml.Unmarshal(doc.yaml, &typed)
	}
	if err != nil {
		return nil, decodeError(err)
	}
	m := typed.Metadata
	if m.Name == "" {
		return nil, errors.New("metadata.name: a workload needs a name, which its pods' ownerReferences name")
	}
	defaultNamespace(&m)
	object.SetNamespace(m.Namespace)
	object.SetLabels(m.Labels)
	object.SetAnnotations(m.Annotations)
	object.SetOwnerReferences(m.OwnerReferences)
	return object, nil
}

// add takes a workload document.
func (ws *workloads) add(index int, object *unstructured.Unstructured) {
	settings := false
	for key := range object.GetAnnotations() {
		if strings.HasPrefix(key, annotationPrefix) {
			settings = true
		}
	}
	ws.byKey[keyOf(object)] = &workloadDocument{object: object, index: index, settings: settings}
}

func keyOf(o *unstructured.Unstructured) workloadKey {
	return workloadKey{o.GroupVersionKind().GroupKind(), o.GetNamespace(), o.GetName()}
}

// lookup finds the document an owner reference of an object in namespace names (a
// cluster-scoped one by name alone), as the grouper's ObjectOwners does.
func (ws *workloads) lookup(namespace string, ref metav1.OwnerReference) *workloadDocument {
	return ws.find(schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind(), namespace, ref.Name)
}

// find is the document of that kind and name in namespace, else cluster-scoped, else nil.
func (ws *workloads) find(gk schema.GroupKind, namespace, name string) *workloadDocument {
	for _, ns := range []string{namespace, ""} {
		if w, ok := ws.byKey[workloadKey{gk, ns, name}]; ok {
			return w
		}
	}
	return nil
}

// chain is the pod's owners, nearest first, as the file holds them. A missing owner, one the
// reference names by another UID, and a loop are errors naming the pod and the owner.
func (ws *workloads) chain(pod *v1.Pod) ([]*workloadDocument, error) {
	var chain []*workloadDocument
	child := fmt.Sprintf("Pod %s/%s", pod.Namespace, pod.Name)
	for ref := metav1.GetControllerOfNoCopy(pod); ref != nil; {
		if len(chain) == podgrouper.MaxOwnerDepth {
			return nil, fmt.Errorf("more than %d owners above the pod, from its metadata.ownerReferences up: a loop of owner references?", podgrouper.MaxOwnerDepth)
		}
		owner := ws.lookup(pod.Namespace, *ref)
		named := fmt.Sprintf("%s %s (apiVersion %s)", ref.Kind, ref.Name, ref.APIVersion)
		switch {
		case owner == nil && len(chain) == 0:
			return nil, fmt.Errorf("its owner %s, named by metadata.ownerReferences, is not in the file: "+
				"add the workload's manifest, or name the pod's PodGroup with metadata.annotations.%s instead", named, scheduling.PodGroupNameAnnotation)
		case owner == nil:
			return nil, fmt.Errorf("its owner %s names its own owner %s in metadata.ownerReferences, which is not in the file: add that workload's manifest",
				child, named)
		case ref.UID != "" && owner.object.GetUID() != ref.UID:
			uid := "none"
			if owner.object.GetUID() != "" {
				uid = string(owner.object.GetUID())
			}
			return nil, fmt.Errorf("%s names its owner %s with UID %s, and %s has UID %s: "+
				"drop the UID from the reference, or write the same on both", child, named, ref.UID, owner.describe(), uid)
		}
		chain = append(chain, owner)
		child = fmt.Sprintf("%s %s/%s", owner.object.GetKind(), owner.object.GetNamespace(), owner.object.GetName())
		ref = metav1.GetControllerOfNoCopy(owner.object)
	}
	return chain, nil
}

// group runs the pod grouper on a pod of a workload: the PodGroup it makes and the pod's
// sub-group. Whatever the grouper finds wrong with the workload is an error naming the pod,
// since the file is what the user can fix.
func (ws *workloads) group(pod *v1.Pod) (*v2alpha2.PodGroup, string, error) {
	chain, err := ws.chain(pod)
	if err != nil {
		return nil, "", err
	}
	for _, w := range chain {
		w.reached = true
	}
	if ws.owners == nil { // once: parse adds every document before it groups any pod
		objects := make([]*unstructured.Unstructured, 0, len(ws.byKey))
		for _, w := range ws.byKey {
			objects = append(objects, w.object)
		}
		ws.owners = podgrouper.NewObjectOwners(objects...)
	}
	// The pool is the pod's label, else an owner's: one of the pools they name groups it.
	pools := map[string]bool{"": true}
	if ws.poolKey != "" {
		pools[pod.Labels[ws.poolKey]] = true
		for _, w := range chain {
			pools[w.object.GetLabels()[ws.poolKey]] = true
		}
	}
	names := make([]string, 0, len(pools))
	for name := range pools {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, pool := range names {
		grouping, err := ws.grouperFor(pool).Group(context.Background(), pod)
		if err != nil {
			return nil, "", err
		}
		if len(grouping.Problems) > 0 {
			// On a cluster, a Warning event on the pod, which runs meanwhile as the message
			// says; in a file, a mistake to fix before the run means anything.
			var problems []string
			for _, p := range grouping.Problems {
				problems = append(problems, fmt.Sprintf("the pod grouper reports %s (a Warning event on the pod, on a cluster): %s", p.Reason, p.Message))
			}
			return nil, "", errors.New(strings.Join(problems, "; and "))
		}
		if grouping.PodGroup != nil {
			return grouping.PodGroup, grouping.SubGroup, nil
		}
	}
	return nil, "", nil // skipped: the user makes its PodGroup
}

// grouperFor is the pod grouper of a pool. Its memory of owner chains lasts minutes of its
// clock, which a file's parse never reaches: the clock is a fixed one, so that grouping a file
// depends on the file alone.
func (ws *workloads) grouperFor(pool string) *podgrouper.Grouper {
	g, ok := ws.groupers[pool]
	if !ok {
		g = podgrouper.NewGrouper(ws.owners, clocktesting.NewFakePassiveClock(time.Time{}), scheduling.NodePool{LabelKey: ws.poolKey, Name: pool})
		ws.groupers[pool] = g
	}
	return g
}

// workloadOf is the document a PodGroup the grouper made names in its workload annotation.
func (ws *workloads) workloadOf(group *v2alpha2.PodGroup) *workloadDocument {
	kindName, name, ok := strings.Cut(group.Annotations[podgrouper.WorkloadAnnotation], "/")
	if !ok {
		return nil
	}
	return ws.find(schema.ParseGroupKind(kindName), group.Namespace, name)
}

// check refuses what a file's workloads would otherwise leave silently unused: a workload no
// pod belongs to (kai-sim creates no pods), and simulation annotations on an owner that is
// not the top of its pods' owners, which no PodGroup carries. tops are the workloads the
// grouper's PodGroups name.
func (ws *workloads) check(tops map[*workloadDocument]bool) error {
	documents := make([]*workloadDocument, 0, len(ws.byKey))
	for _, w := range ws.byKey {
		documents = append(documents, w)
	}
	sort.Slice(documents, func(i, j int) bool { return documents[i].index < documents[j].index })
	for _, w := range documents {
		switch {
		case !w.reached:
			return fmt.Errorf("%s: no pod of the file belongs to it: kai-sim runs no controllers, so write the pods its controller would create, "+
				"each naming its owner in metadata.ownerReferences (with controller: true)", w.describe())
		case w.settings && !tops[w]:
			return fmt.Errorf("%s: its %s annotations reach no PodGroup: the pod grouper copies those of the workload at the top of its pods' owners: move them there",
				w.describe(), strings.TrimSuffix(annotationPrefix, "/"))
		}
	}
	return nil
}

// groupPods groups, with the pod grouper, the pods of kai-scheduler that name no PodGroup and
// are owned by a workload: it adds the PodGroup it makes to groups (once per name), and
// annotates each pod with its PodGroup's name and labels it with its sub-group, as the
// grouper's reconciler does on a cluster. A pod without an owner, or with pod-group-name as
// a label, is left to be told how to name its PodGroup. seen maps "PodGroup ns/name" to the
// document that defined it.
func groupPods(pods []*v1.Pod, groups map[string]*Job, seen map[string]int, ws *workloads) error {
	tops := map[*workloadDocument]bool{}
	made := map[string]string{} // PodGroup key → the workload it was made for
	for _, pod := range pods {
		if metav1.GetControllerOfNoCopy(pod) == nil {
			continue
		}
		if pod.Spec.SchedulerName != SchedulerName {
			ws.reach(pod) // held on its node throughout, whatever its owners
			continue
		}
		if _, named := pod.Annotations[scheduling.PodGroupNameAnnotation]; named {
			ws.reach(pod)
			continue
		}
		if _, labelled := pod.Labels[scheduling.PodGroupNameAnnotation]; labelled {
			continue
		}
		group, subGroup, err := ws.group(pod)
		if err != nil {
			return fmt.Errorf("Pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		if group == nil {
			continue // skipped: its user makes its PodGroup
		}
		key := group.Namespace + "/" + group.Name
		job := groups[key]
		switch {
		case job == nil:
			w := ws.workloadOf(group)
			if job, err = jobOf(group); err != nil {
				if w != nil { // its settings are the workload's annotations
					return fmt.Errorf("%s: %w", w.describe(), err)
				}
				return fmt.Errorf("PodGroup %s, made by the pod grouper for Pod %s/%s: %w", key, pod.Namespace, pod.Name, err)
			}
			groups[key] = job
			made[key] = workloadName(group)
			if w != nil {
				tops[w] = true
			}
		case made[key] == "":
			return fmt.Errorf("Pod %s/%s: the pod grouper makes PodGroup %s for it, and document %d is a PodGroup of that name: "+
				"rename one, or name the PodGroup the pod joins with its %s annotation", pod.Namespace, pod.Name, key, seen["PodGroup "+key], scheduling.PodGroupNameAnnotation)
		case made[key] != workloadName(group):
			// Owners without UIDs are told apart by name alone: pg-<name> of a Job and of a
			// PyTorchJob of one name are one name.
			return fmt.Errorf("Pod %s/%s: the pod grouper makes PodGroup %s for both %s and %s: "+
				"rename one of the workloads, or give each a metadata.uid, which the PodGroup's name then carries",
				pod.Namespace, pod.Name, key, made[key], workloadName(group))
		}
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[scheduling.PodGroupNameAnnotation] = group.Name
		if subGroup != "" {
			if pod.Labels == nil {
				pod.Labels = map[string]string{}
			}
			pod.Labels[scheduling.SubGroupLabel] = subGroup
		}
	}
	return ws.check(tops)
}

// reach marks the owners of a pod the grouper does not group as having pods.
func (ws *workloads) reach(pod *v1.Pod) {
	chain, _ := ws.chain(pod)
	for _, w := range chain {
		w.reached = true
	}
}

// workloadName is the workload a PodGroup the grouper made is for, or its own name when the
// grouper names none (a bare pod's).
func workloadName(group *v2alpha2.PodGroup) string {
	if name := group.Annotations[podgrouper.WorkloadAnnotation]; name != "" {
		return name
	}
	return "PodGroup " + group.Name
}
