package input

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/kai/v1alpha1"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/conf"
)

// Job is a PodGroup of the scenario with its pods and simulation settings.
type Job struct {
	Group *v2alpha2.PodGroup
	// Pods are the job's pods; those of a running job that name a node start there.
	Pods     []*v1.Pod
	SubmitAt time.Duration // negative: before the start
	// Running says the job runs from the start, since RunningFor before it.
	Running            bool
	RunningFor         time.Duration
	Duration           time.Duration // 0: never finishes
	Startup            time.Duration
	CheckpointInterval time.Duration // 0: never
	// FailAfter is, per pod name, how long after it first runs the pod fails.
	FailAfter map[string]time.Duration
}

// Scenario is a parsed scenario file.
type Scenario struct {
	Nodes   []*v1.Node
	Queues  []*v2.Queue
	Classes []*schedulingv1.PriorityClass
	// Topologies are the cluster's kai.scheduler/v1alpha1 Topologies, in name order, checked
	// as the API server checks them.
	Topologies []*v1alpha1.Topology
	// Jobs in submission order (then name).
	Jobs []*Job
	// Fixed are the pods of other schedulers, bound to their nodes (DaemonSets, system
	// pods, services): they hold what they request there throughout, in name order.
	Fixed []*v1.Pod
}

// SchedulerName is the scheduler kai-sim runs: a pod naming no scheduler is its, and a pod
// naming another is foreign (it only holds resources on its node).
const SchedulerName = "kai-scheduler"

// defaultClasses are the PriorityClasses a KAI installation has.
var defaultClasses = map[string]int32{"train": 50, "build-preemptible": 75, "build": 100, "inference": 125}

// Parse reads a scenario: ordinary manifests of Nodes, Queues, PodGroups (with simulation
// annotations), Pods (with the pod-group-name annotation, or owned by a workload of the
// file), optionally PriorityClasses and Topologies, and workloads of any other kind (a batch
// Job, a PyTorchJob) whose pods KAI's pod grouper groups into PodGroups, as on a cluster (see
// workloads.go), for kai-sim's default node-pool label key. Errors name the document (by
// position, and kind and name or, for one that has none, its lines) and the field, in the
// terms of the YAML written. A scenario of no objects is an error, as an empty scheduler
// configuration is.
func Parse(data []byte) (*Scenario, error) {
	return parse(data, false, scheduling.NodePoolLabel)
}

// ParseForPools is Parse for a simulation whose node pools are told apart by poolKey
// (empty: one scheduler for everything): each pool's pod grouper groups the workloads
// labelled for it, and labels their PodGroups so.
func ParseForPools(data []byte, poolKey string) (*Scenario, error) {
	return parse(data, false, poolKey)
}

// parse reads a scenario or, with arrivals, an arrivals file: jobs to add to a scenario,
// which may hold only PodGroups, Pods and workloads of jobs not submitted yet (see
// checkArrival). poolKey is the node-pool label key the pods of workloads are grouped by.
func parse(data []byte, arrivals bool, poolKey string) (*Scenario, error) {
	sc := &Scenario{}
	groups := map[string]*Job{}
	var pods []*v1.Pod
	ws := newWorkloads(poolKey)
	// seen maps kind and name to the document that defined it: an API server holds one
	// object per name, so a second one is a mistake, not a replacement.
	seen := map[string]int{}
	raws, err := splitDocuments(data)
	if err != nil {
		return nil, err
	}
	converted := toJSON(raws)
	index := 0
	for i, raw := range raws {
		index++
		doc, err := converted[i].json, converted[i].err
		if err != nil {
			return nil, fmt.Errorf("document %d (%s): invalid YAML: %s", index, raw.lines(), yamlMessage(err, raw.offset))
		}
		if trimmed := string(bytes.TrimSpace(doc)); trimmed == "null" || trimmed == "{}" {
			index--
			continue // only comments or blank
		}
		var head documentHead
		if err := json.Unmarshal(doc, &head); err != nil {
			return nil, fmt.Errorf("document %d (%s): %s", index, raw.lines(), headMessage(doc, err))
		}
		if head.APIVersion == "" && head.Kind == "" {
			return nil, fmt.Errorf("document %d (%s): %s", index, raw.lines(), kindlessMessage(doc))
		}
		meta := metav1.TypeMeta{APIVersion: head.APIVersion, Kind: head.Kind}
		name := head.name()
		workload := isWorkloadKind(meta)
		if meta.Kind == "Pod" || meta.Kind == "PodGroup" || workload {
			if !strings.Contains(name, "/") {
				name = "default/" + name
			}
		}
		if arrivals && meta.Kind != "Pod" && meta.Kind != "PodGroup" && !workload {
			return nil, fmt.Errorf("document %d (%s %s): an arrivals file holds only PodGroups and Pods, and the workloads that own its pods", index, meta.Kind, name)
		}
		key := meta.Kind + " " + name
		if workload { // a Job of batch and one of another group are two kinds
			key = schema.FromAPIVersionAndKind(meta.APIVersion, meta.Kind).GroupKind().String() + " " + name
		}
		if first, dup := seen[key]; dup {
			return nil, fmt.Errorf("document %d (%s %s): the same %s as document %d; names must be unique", index, meta.Kind, name, meta.Kind, first)
		}
		seen[key] = index
		if err := sc.add(index, meta, head.name(), document{yaml: raw.data, json: doc, offset: raw.offset}, groups, &pods, ws); err != nil {
			return nil, err
		}
	}
	if index == 0 {
		// As an empty scheduler configuration is refused: a file with nothing in it is far
		// more often a snapshot or a redirect that went wrong than a cluster of nothing, and
		// an empty report would not say so.
		if arrivals {
			return nil, errors.New("the arrivals file is empty; write the PodGroups and Pods that arrive, or pass no --arrivals")
		}
		return nil, errors.New("the scenario is empty; write its Nodes, Queues, PodGroups and Pods, or pass no file for the built-in comparison")
	}
	if err := groupPods(pods, groups, seen, ws); err != nil {
		return nil, err
	}
	nodes := map[string]bool{}
	for _, n := range sc.Nodes {
		nodes[n.Name] = true
	}
	for _, pod := range pods {
		if arrivals {
			if err := checkArrivalPod(pod); err != nil {
				return nil, fmt.Errorf("Pod %s/%s: %w", pod.Namespace, pod.Name, err)
			}
		}
		if pod.Spec.NodeName != "" && !nodes[pod.Spec.NodeName] {
			return nil, fmt.Errorf("Pod %s/%s: spec.nodeName names node %q, which the file does not define", pod.Namespace, pod.Name, pod.Spec.NodeName)
		}
		if pod.Spec.SchedulerName != SchedulerName {
			if pod.Spec.NodeName == "" {
				return nil, fmt.Errorf("Pod %s/%s: a pod of another scheduler (%s) only holds resources on the node it names: set spec.nodeName",
					pod.Namespace, pod.Name, pod.Spec.SchedulerName)
			}
			sc.Fixed = append(sc.Fixed, pod)
			continue
		}
		name, named := pod.Annotations[scheduling.PodGroupNameAnnotation]
		if !named || name == "" {
			return nil, fmt.Errorf("Pod %s/%s: %s", pod.Namespace, pod.Name, noPodGroupMessage(pod))
		}
		job := groups[pod.Namespace+"/"+name]
		if pod.Spec.NodeName != "" && job != nil && !job.Running {
			if w := ws.workloadOf(job.Group); w != nil {
				return nil, fmt.Errorf("Pod %s/%s: spec.nodeName %q: only the pods of a running job start on a node: annotate its workload, %s, with %s",
					pod.Namespace, pod.Name, pod.Spec.NodeName, w.describe(), RunningForAnnotation)
			}
			return nil, fmt.Errorf("Pod %s/%s: spec.nodeName %q: only the pods of a running job (PodGroup annotation %s) start on a node",
				pod.Namespace, pod.Name, pod.Spec.NodeName, RunningForAnnotation)
		}
		if job == nil {
			return nil, fmt.Errorf("Pod %s/%s: annotation %s names PodGroup %q, which the file does not define",
				pod.Namespace, pod.Name, scheduling.PodGroupNameAnnotation, name)
		}
		if value, ok := pod.Annotations[FailAfterAnnotation]; ok {
			d, err := conf.ParseNonNegativeDuration("metadata.annotations."+FailAfterAnnotation, value)
			if err != nil {
				return nil, fmt.Errorf("Pod %s/%s: %w", pod.Namespace, pod.Name, err)
			}
			if job.FailAfter == nil {
				job.FailAfter = map[string]time.Duration{}
			}
			job.FailAfter[pod.Name] = d
		}
		job.Pods = append(job.Pods, pod)
	}
	for key, job := range groups {
		if len(job.Pods) == 0 {
			return nil, fmt.Errorf("PodGroup %s has no pods (pods join it with the %s annotation)", key, scheduling.PodGroupNameAnnotation)
		}
		sort.Slice(job.Pods, func(i, j int) bool { return job.Pods[i].Name < job.Pods[j].Name })
		sc.Jobs = append(sc.Jobs, job)
	}
	sortJobs(sc.Jobs)
	if arrivals {
		for _, job := range sc.Jobs {
			if err := checkArrival(job); err != nil {
				return nil, fmt.Errorf("PodGroup %s/%s: %w", job.Group.Namespace, job.Group.Name, err)
			}
		}
	}
	// An arrivals file defines no classes: its jobs run under the scenario's.
	if len(sc.Classes) == 0 && !arrivals {
		for name, value := range defaultClasses {
			sc.Classes = append(sc.Classes, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value})
		}
	}
	sort.Slice(sc.Nodes, func(i, j int) bool { return sc.Nodes[i].Name < sc.Nodes[j].Name })
	sort.Slice(sc.Topologies, func(i, j int) bool { return sc.Topologies[i].Name < sc.Topologies[j].Name })
	sort.Slice(sc.Fixed, func(i, j int) bool {
		return sc.Fixed[i].Namespace+"/"+sc.Fixed[i].Name < sc.Fixed[j].Namespace+"/"+sc.Fixed[j].Name
	})
	return sc, nil
}

// noPodGroupMessage says that a pod of kai-scheduler names no PodGroup, and how to name one:
// with the annotation KAI reads (the pod grouper writes it on a cluster), not a label.
func noPodGroupMessage(pod *v1.Pod) string {
	key := scheduling.PodGroupNameAnnotation
	if group, ok := pod.Labels[key]; ok {
		return fmt.Sprintf("%s is a label here, and KAI reads it as an annotation: move it to metadata.annotations (%s: %s)", key, key, group)
	}
	if _, ok := pod.Annotations[key]; ok {
		return fmt.Sprintf("its %s annotation is empty: write the name of its PodGroup, of the same namespace", key)
	}
	if metav1.GetControllerOfNoCopy(pod) != nil {
		// Grouped by no pool's grouper: its workload or it says its user makes its PodGroup.
		return fmt.Sprintf("has no %s annotation, and its workload leaves its PodGroup to its user (%s: \"true\"): "+
			"add metadata.annotations.%s with the name of its PodGroup, of the same namespace", key, scheduling.SkipPodGrouperAnnotation, key)
	}
	uncontrolled := ""
	if len(pod.OwnerReferences) > 0 {
		uncontrolled = " (its metadata.ownerReferences mark no owner controller: true, which is how the pod grouper finds its workload)"
	}
	return fmt.Sprintf("has no %s annotation, so it belongs to no job%s: add metadata.annotations.%s with the name of its PodGroup, "+
		"of the same namespace, or metadata.ownerReferences naming the workload of the file its controller would create it for "+
		"(on a cluster, KAI's pod grouper groups it by its workload); a pod of another scheduler sets spec.schedulerName and spec.nodeName instead",
		key, uncontrolled, key)
}

// sortJobs puts jobs in submission order, then name order, the order the engine submits them.
func sortJobs(jobs []*Job) {
	sort.Slice(jobs, func(i, j int) bool {
		a, b := jobs[i], jobs[j]
		if a.SubmitAt != b.SubmitAt {
			return a.SubmitAt < b.SubmitAt
		}
		return a.Key() < b.Key()
	})
}

// rawDocument is one document of a YAML stream and where it is in its file.
type rawDocument struct {
	data []byte
	// offset is the number of file lines before data: the YAML parser counts from data.
	offset int
	// first and last are the file lines of its first and last lines that are neither blank
	// nor a comment (1-based); 0 when it has none. end is its last line of any kind.
	first, last, end int
}

// lines says where the document is, for errors about a document without a kind and name.
func (d rawDocument) lines() string {
	if d.first == 0 { // blank or comments, and yet not YAML: a tab, say
		d.first, d.last = d.offset+1, d.end
	}
	if d.first == d.last {
		return fmt.Sprintf("line %d", d.first)
	}
	return fmt.Sprintf("lines %d-%d", d.first, d.last)
}

// splitDocuments cuts a YAML stream into its documents at its "---" lines, as kubectl does
// (k8s.io/apimachinery's YAMLReader: a separator may be followed by a comment only; CRLF
// line ends read as LF), keeping where each document is: a document that says neither
// kind nor name is known by its lines. The stream is read whole, however long its lines
// and whether or not a newline ends it.
func splitDocuments(data []byte) ([]rawDocument, error) {
	var docs []rawDocument
	var current rawDocument
	for i, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) == 0 {
			break // after the last newline
		}
		number := i + 1
		line = append(bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r")), '\n')
		if rest, ok := bytes.CutPrefix(line, []byte("---")); ok {
			if trimmed := bytes.TrimSpace(rest); len(trimmed) > 0 && trimmed[0] != '#' {
				return nil, fmt.Errorf("line %d: invalid document separator %q: only a comment may follow ---", number, line[:len(line)-1])
			}
			if len(current.data) > 0 {
				docs = append(docs, current)
			}
			current = rawDocument{}
			continue
		}
		if len(current.data) == 0 {
			current.offset = number - 1
		}
		current.data = append(current.data, line...)
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 && trimmed[0] != '#' {
			if current.first == 0 {
				current.first = number
			}
			current.last = number
		}
		current.end = number
	}
	if len(current.data) > 0 {
		docs = append(docs, current)
	}
	return docs, nil
}

// yamlLine is a line number in the YAML parser's errors, counted from its document.
var yamlLine = regexp.MustCompile(`\bline (\d+)`)

// yamlMessage is a YAML parser's error with the lines of the file, not of the document
// (offset lines before it), and without the parser's name: "line 9: mapping values are not
// allowed in this context".
func yamlMessage(err error, offset int) string {
	msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
	msg = strings.TrimPrefix(msg, "yaml: ")
	// Strict parsing lists its findings on lines of their own.
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n  ")
	msg = strings.ReplaceAll(msg, "\n  ", "; ")
	return yamlLine.ReplaceAllStringFunc(msg, func(match string) string {
		n, err := strconv.Atoi(strings.TrimPrefix(match, "line "))
		if err != nil {
			return match
		}
		return fmt.Sprintf("line %d", n+offset)
	})
}

// supportedKinds is what a scenario may hold.
const supportedKinds = "v1 Node or Pod, scheduling.run.ai/v2 Queue, scheduling.run.ai/v2alpha2 PodGroup, scheduling.k8s.io/v1 PriorityClass, " +
	"kai.scheduler/v1alpha1 Topology, " +
	"or a workload of another group (batch/v1 Job, kubeflow.org/v1 PyTorchJob) that owns pods of the file"

// headMessage says why a document's apiVersion, kind and metadata do not read: it is not a
// mapping (a file that is not a manifest at all), or one of them is not what it must be.
func headMessage(doc []byte, err error) string {
	if trimmed := bytes.TrimSpace(doc); len(trimmed) == 0 || trimmed[0] != '{' {
		return "must be a Kubernetes object (a mapping with apiVersion, kind and metadata), got " + describeJSON(trimmed)
	}
	return decodeError(err).Error()
}

// kindlessMessage says what a mapping without apiVersion and kind is not, and what it may
// be instead: a scheduler configuration given where the scenario goes is a likely mistake.
func kindlessMessage(doc []byte) string {
	var top map[string]json.RawMessage
	if json.Unmarshal(doc, &top) == nil {
		if _, actions := top["actions"]; actions {
			return "has actions but no apiVersion and kind: this is a scheduler configuration, not a scenario (kai-sim takes it with --scheduler-conf)"
		}
		if _, tiers := top["tiers"]; tiers {
			return "has tiers but no apiVersion and kind: this is a scheduler configuration, not a scenario (kai-sim takes it with --scheduler-conf)"
		}
	}
	return "has no apiVersion and kind; a scenario holds Kubernetes objects: " + supportedKinds
}

// describeJSON names what a JSON value is, as a YAML writer thinks of it: a mapping, a
// list, or the value itself (text cut short).
func describeJSON(raw []byte) string {
	var text string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &text) == nil {
		if runes := []rune(text); len(runes) > 40 {
			text = strings.TrimSpace(string(runes[:40])) + "..."
		}
		return fmt.Sprintf("the text %q", text)
	}
	return conf.Describe(raw)
}

type convertedDocument struct {
	json []byte
	err  error
}

// toJSON parses each document as YAML once (strictly: a key given twice is an error) into the
// JSON it is decoded from, on every core: a scenario of thousands of jobs is mostly parsing,
// and documents do not depend on each other.
func toJSON(raws []rawDocument) []convertedDocument {
	out := make([]convertedDocument, len(raws))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(raws)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(raws); i = int(next.Add(1) - 1) {
				out[i].json, out[i].err = yaml.YAMLToJSONStrict(raws[i].data)
			}
		})
	}
	wg.Wait()
	return out
}

// DefaultMaxPods is the kubelet's default --max-pods, given to scenario nodes that do not
// say how many pods they take.
const DefaultMaxPods = 110

// add decodes one document strictly (a misspelt field is an error) into its kind.
func (sc *Scenario) add(index int, meta metav1.TypeMeta, name string, doc document, groups map[string]*Job, pods *[]*v1.Pod, ws *workloads) error {
	fail := func(err error) error {
		return fmt.Errorf("document %d (%s): %w", index, strings.TrimSpace(meta.Kind+" "+name), err)
	}
	// object is the metadata of a Node, Queue, PriorityClass or Topology, whose simulation
	// keys are checked once it is decoded (a PodGroup's and a Pod's as they are read).
	var object *metav1.ObjectMeta
	switch meta.APIVersion + "/" + meta.Kind {
	case "v1/Node":
		node := &v1.Node{}
		if err := doc.decode(node); err != nil {
			return fail(err)
		}
		if len(node.Status.Allocatable) == 0 {
			node.Status.Allocatable = node.Status.Capacity
		}
		if _, ok := node.Status.Allocatable[v1.ResourcePods]; !ok {
			// Every kubelet reports how many pods its node takes; a scenario that leaves it
			// out means the kubelet's default, as docs/simulator.md says.
			node.Status.Allocatable = node.Status.Allocatable.DeepCopy()
			if node.Status.Allocatable == nil {
				node.Status.Allocatable = v1.ResourceList{}
			}
			node.Status.Allocatable[v1.ResourcePods] = *resource.NewQuantity(DefaultMaxPods, resource.DecimalSI)
		}
		if err := nonNegative("status.allocatable", node.Status.Allocatable); err != nil {
			return fail(err)
		}
		sc.Nodes = append(sc.Nodes, node)
		object = &node.ObjectMeta
	case "scheduling.run.ai/v2/Queue":
		queue := &v2.Queue{}
		if err := doc.decode(queue); err != nil {
			return fail(err)
		}
		sc.Queues = append(sc.Queues, queue)
		object = &queue.ObjectMeta
	case "scheduling.k8s.io/v1/PriorityClass":
		pc := &schedulingv1.PriorityClass{}
		if err := doc.decode(pc); err != nil {
			return fail(err)
		}
		sc.Classes = append(sc.Classes, pc)
		object = &pc.ObjectMeta
	case v1alpha1.SchemeGroupVersion.String() + "/Topology":
		topology := &v1alpha1.Topology{}
		if err := doc.decode(topology); err != nil {
			return fail(err)
		}
		if err := checkTopology(topology, doc.json); err != nil {
			return fail(err)
		}
		sc.Topologies = append(sc.Topologies, topology)
		object = &topology.ObjectMeta
	case "scheduling.run.ai/v2alpha2/PodGroup":
		group := &v2alpha2.PodGroup{}
		if err := doc.decode(group); err != nil {
			return fail(err)
		}
		defaultNamespace(&group.ObjectMeta)
		// Checked before the annotations are read: a misspelt one is named as such.
		if err := checkSimulationKeys(meta.Kind, &group.ObjectMeta, doc.line); err != nil {
			return fail(err)
		}
		if e := group.Status.Evictions; e != nil {
			// The count of the job's past evictions is kept (escalation lengthens its
			// protection by it); when the last was decided is an absolute time the
			// simulation's clock would misread, and would hide the simulation's own.
			e.Last = metav1.MicroTime{}
		}
		job, err := jobOf(group)
		if err != nil {
			return fail(err)
		}
		groups[group.Namespace+"/"+group.Name] = job
	case "v1/Pod":
		pod := &v1.Pod{}
		if err := doc.decode(pod); err != nil {
			return fail(err)
		}
		defaultNamespace(&pod.ObjectMeta)
		if err := checkPodSimulationKeys(pod, doc.line); err != nil {
			return fail(err)
		}
		if err := podQuantitiesNonNegative(pod); err != nil {
			return fail(err)
		}
		defaultRequestsToLimits(pod)
		if pod.Spec.SchedulerName == "" {
			pod.Spec.SchedulerName = SchedulerName
		}
		*pods = append(*pods, pod)
	default:
		if !isWorkloadKind(meta) {
			return fmt.Errorf("document %d: unsupported kind %q of apiVersion %q (want %s)", index, meta.Kind, meta.APIVersion, supportedKinds)
		}
		object, err := decodeWorkload(doc)
		if err != nil {
			return fail(err)
		}
		m := metav1.ObjectMeta{Labels: object.GetLabels(), Annotations: object.GetAnnotations()}
		if err := checkWorkloadSimulationKeys(meta.Kind, &m, doc.line); err != nil {
			return fail(err)
		}
		ws.add(index, object)
	}
	if object != nil {
		if err := checkSimulationKeys(meta.Kind, object, doc.line); err != nil {
			return fail(err)
		}
	}
	return nil
}

// documentHead is what identifies a document, read before its kind is known. The name is
// read loosely, for errors about documents that do not decode.
type documentHead struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      any `json:"name"`
		Namespace any `json:"namespace"`
	} `json:"metadata"`
}

// name is "namespace/name" (or "name").
func (h documentHead) name() string {
	name, _ := h.Metadata.Name.(string)
	if namespace, _ := h.Metadata.Namespace.(string); namespace != "" {
		return namespace + "/" + name
	}
	return name
}

// document is one input document, as written and as the JSON it converts to; offset is the
// number of file lines before it.
type document struct {
	yaml, json []byte
	offset     int
}

// line is the file line of the document's first line that is not a comment and holds text,
// 0 when none does: where a key is written, for a message about it.
func (d document) line(text string) int {
	for i, line := range strings.Split(string(d.yaml), "\n") {
		if trimmed := strings.TrimSpace(line); !strings.HasPrefix(trimmed, "#") && strings.Contains(line, text) {
			return d.offset + i + 1
		}
	}
	return 0
}

// decode decodes the document into obj; a field obj does not have is an error, as a
// misspelt field must not be silently ignored. The JSON is decoded directly; a document
// whose YAML scalars only fit obj's fields as text (labels: {zone: 3}) is decoded from its
// YAML with obj's types, as it always was.
func (d document) decode(obj any) error {
	dec := json.NewDecoder(bytes.NewReader(d.json))
	dec.DisallowUnknownFields()
	err := dec.Decode(obj)
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		reflect.ValueOf(obj).Elem().SetZero() // nothing of the partial decode remains
		err = yaml.UnmarshalStrict(d.yaml, obj)
	}
	if err != nil {
		return decodeError(err)
	}
	return nil
}

// decodeError says what is wrong with a document in the terms of the YAML it is written in:
// a field and what it must be ("spec.containers: must be a list, got a string"), never the
// JSON it passes through or the Go types it is decoded into.
func decodeError(err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		msg := fmt.Sprintf("must be %s, got %s", wantOf(typeErr.Type, typeErr.Value), gotOf(typeErr.Value))
		if typeErr.Field != "" {
			msg = typeErr.Field + ": " + msg
		}
		return errors.New(msg)
	}
	msg := err.Error()
	for _, prefix := range []string{"error converting YAML to JSON: ", "error unmarshaling JSON: ", "while decoding JSON: ", "json: "} {
		msg = strings.TrimPrefix(msg, prefix)
	}
	return errors.New(msg)
}

// wantOf is what a value of type t is in YAML; value is what was given instead, as
// encoding/json says it ("number 3000000000" for a number that does not fit).
func wantOf(t reflect.Type, value string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if strings.HasPrefix(value, "number ") {
			bits := t.Bits() - 1
			return fmt.Sprintf("a whole number from %d to %d", -(int64(1) << bits), int64(1)<<bits-1)
		}
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if strings.HasPrefix(value, "number ") {
			return fmt.Sprintf("a whole number from 0 to %d", ^uint64(0)>>(64-t.Bits()))
		}
		return "a whole number, 0 or more"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	default:
		return "something else"
	}
}

// gotOf is what encoding/json says it was given, in YAML's terms.
func gotOf(value string) string {
	switch value {
	case "string":
		return "a string"
	case "number":
		return "a number"
	case "bool":
		return "a boolean"
	case "array":
		return "a list"
	case "object":
		return "a mapping"
	}
	if number, ok := strings.CutPrefix(value, "number "); ok {
		return number
	}
	return value
}

func defaultNamespace(meta *metav1.ObjectMeta) {
	if meta.Namespace == "" {
		meta.Namespace = "default"
	}
}

// jobOf reads the simulation annotations of a PodGroup.
func jobOf(group *v2alpha2.PodGroup) (*Job, error) {
	job := &Job{Group: group}
	for _, setting := range []struct {
		key    string
		target *time.Duration
	}{
		{RunningForAnnotation, &job.RunningFor}, {DurationAnnotation, &job.Duration},
		{StartupAnnotation, &job.Startup}, {CheckpointIntervalAnnotation, &job.CheckpointInterval},
	} {
		value, ok := group.Annotations[setting.key]
		if !ok {
			continue
		}
		d, err := conf.ParseNonNegativeDuration("metadata.annotations."+setting.key, value)
		if err != nil {
			return nil, err
		}
		*setting.target = d
	}
	_, job.Running = group.Annotations[RunningForAnnotation]
	if job.Running {
		job.SubmitAt = -job.RunningFor // submitted when it started, unless told earlier
	}
	if value, ok := group.Annotations[SubmitAtAnnotation]; ok {
		d, err := conf.ParseDuration(value)
		if err != nil {
			return nil, fmt.Errorf("metadata.annotations.%s: %w", SubmitAtAnnotation, err)
		}
		if job.Running && d > -job.RunningFor {
			return nil, fmt.Errorf("metadata.annotations.%s: %s is after the job started (%s %s): a running job was submitted at -%s or before",
				SubmitAtAnnotation, value, RunningForAnnotation, group.Annotations[RunningForAnnotation], job.RunningFor)
		}
		job.SubmitAt = d
	}
	if _, ok := group.Annotations[scheduling.LastStartTimestampAnnotation]; ok {
		// An absolute time means nothing in virtual time: the simulation writes the stamp.
		return nil, fmt.Errorf("metadata.annotations.%s: a scenario says how long a running job has run with %s instead",
			scheduling.LastStartTimestampAnnotation, RunningForAnnotation)
	}
	if group.Spec.MinMember < 1 && group.Spec.MinSubGroup == nil {
		group.Spec.MinMember = 1 // as the scheduler reads it; beside minSubGroup there is none
	}
	return job, nil
}

// defaultRequestsToLimits does what the API server does to a pod it stores: a container's
// resource with a limit and no request is requested at its limit. A GPU asked only as a
// limit, as GPU pods usually ask, is then requested as the scheduler reads it on a real
// cluster.
func defaultRequestsToLimits(pod *v1.Pod) {
	for _, containers := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range containers {
			c := &containers[i]
			for name, limit := range c.Resources.Limits {
				if _, ok := c.Resources.Requests[name]; !ok {
					if c.Resources.Requests == nil {
						c.Resources.Requests = v1.ResourceList{}
					}
					c.Resources.Requests[name] = limit.DeepCopy()
				}
			}
		}
	}
}

// podQuantitiesNonNegative refuses what the API server refuses: a negative request, limit or
// overhead. Taken as given, a request of -4 GPUs would make room on a node instead of
// taking it.
func podQuantitiesNonNegative(pod *v1.Pod) error {
	check := func(kind string, containers []v1.Container) error {
		for i, c := range containers {
			if err := nonNegative(fmt.Sprintf("spec.%s[%d].resources.requests", kind, i), c.Resources.Requests); err != nil {
				return err
			}
			if err := nonNegative(fmt.Sprintf("spec.%s[%d].resources.limits", kind, i), c.Resources.Limits); err != nil {
				return err
			}
		}
		return nil
	}
	if err := check("initContainers", pod.Spec.InitContainers); err != nil {
		return err
	}
	if err := check("containers", pod.Spec.Containers); err != nil {
		return err
	}
	return nonNegative("spec.overhead", pod.Spec.Overhead)
}

// nonNegative names the first negative quantity of a resource list, in name order.
func nonNegative(field string, list v1.ResourceList) error {
	names := make([]string, 0, len(list))
	for name := range list {
		names = append(names, string(name))
	}
	sort.Strings(names)
	for _, name := range names {
		if q := list[v1.ResourceName(name)]; q.Sign() < 0 {
			return fmt.Errorf("%s[%s]: must be non-negative, got %s", field, name, q.String())
		}
	}
	return nil
}
