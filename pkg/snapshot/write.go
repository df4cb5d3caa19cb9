package snapshot

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/kai/v1alpha1"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/store"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
)

// Write writes the cluster as a kai-sim scenario: a header saying what it holds and which
// jobs run an assumed duration, then the nodes (with all their labels, those the Topologies
// name among them), Topologies, PriorityClasses, queues, pods of other schedulers, and each
// job's PodGroup (after a comment on its times) and pods.
func (c *Cluster) Write(w io.Writer, opts Options) error {
	out := &writer{w: w}
	c.header(out, opts)
	for i := range c.Nodes {
		out.doc("", node(&c.Nodes[i]))
	}
	for i := range c.Topologies {
		t := &c.Topologies[i]
		out.doc("", &v1alpha1.Topology{TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "Topology"},
			ObjectMeta: metav1.ObjectMeta{Name: t.Name}, Spec: t.Spec})
	}
	for i := range c.Classes {
		pc := &c.Classes[i]
		out.doc("", &schedulingv1.PriorityClass{TypeMeta: metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"},
			ObjectMeta: metav1.ObjectMeta{Name: pc.Name}, Value: pc.Value})
	}
	for i := range c.Queues {
		q := &c.Queues[i]
		out.doc("", &v2.Queue{TypeMeta: metav1.TypeMeta{APIVersion: "scheduling.run.ai/v2", Kind: "Queue"},
			ObjectMeta: metav1.ObjectMeta{Name: q.Name, Labels: q.Labels}, Spec: q.Spec})
	}
	for _, pod := range c.Fixed {
		fixed := exportPod(pod, true, opts.Include)
		if fixed.Spec.SchedulerName == input.SchedulerName || fixed.Spec.SchedulerName == "" {
			// kai-sim would take it for a pod of its own jobs: a pod of ours without a
			// PodGroup, or of another scheduler of kai-sim's name. It only holds its node.
			fixed.Spec.SchedulerName = input.SchedulerName + " (not a job's)"
		}
		delete(fixed.Annotations, scheduling.PodGroupNameAnnotation)
		out.doc("", fixed)
	}
	for _, job := range c.Jobs {
		out.doc(job.comment(opts), job.podGroup())
		for _, pod := range job.Pods {
			own := exportPod(pod, job.Running && pod.DeletionTimestamp == nil, opts.Include)
			own.Spec.SchedulerName = "" // kai-sim's, whatever the cluster's scheduler is called
			out.doc("", own)
		}
	}
	return out.err
}

// header says what the scenario is, what its times mean, and which jobs run an assumed
// duration or were left out.
func (c *Cluster) header(out *writer, opts Options) {
	running := 0
	var assumed, expected []string
	for _, j := range c.Jobs {
		if j.Running {
			running++
		}
		if j.DurationFrom == ExpectedRuntimeAnnotation {
			expected = append(expected, key(j.Group))
		} else {
			assumed = append(assumed, key(j.Group))
		}
	}
	source := ""
	if opts.Source != "" {
		source = " of " + opts.Source
	}
	out.line("# kai-sim scenario: a snapshot%s at %s, by kubectl kai snapshot.", source, c.At.UTC().Format(time.RFC3339))
	out.line("# %d nodes, %d queues, %d jobs (%d running, %d pending), %d pods that only hold their nodes.",
		len(c.Nodes), len(c.Queues), len(c.Jobs), running, len(c.Jobs)-running, len(c.Fixed))
	out.line("# Times count from the snapshot: a running job says how long it has run")
	out.line("# (%s), which carries its min-runtime protection over; a pending", input.RunningForAnnotation)
	out.line("# job how long ago it was submitted (a negative %s).", input.SubmitAtAnnotation)
	out.line("# Durations: %d jobs from %s; %d assumed (%s).", len(expected), ExpectedRuntimeAnnotation, len(assumed), assumption(opts.AssumeRuntime))
	if len(assumed) > 0 {
		out.line("# Assumed: %s", strings.Join(assumed, ", "))
	}
	if len(c.Topologies) > 0 {
		names := make([]string, len(c.Topologies))
		for i := range c.Topologies {
			names[i] = c.Topologies[i].Name
		}
		out.line("# Topologies: %s.", strings.Join(names, ", "))
	}
	for _, left := range c.Left {
		out.line("# %s", left)
	}
	out.line("# Run: kai-sim --scheduler-conf <the scheduler's configuration> <this file>")
}

// gangSize is the fewest pods the job's gang needs, as the scheduler reads its PodGroup
// (minMember, or the smallest ready tree under minSubGroup).
func gangSize(spec *v2alpha2.PodGroupSpec) int32 {
	minMember, minSubGroup, groups := store.JobMinimum(spec)
	return (&model.JobInfo{MinMember: minMember, MinSubGroup: minSubGroup, SubGroups: groups}).GangSize()
}

func assumption(d time.Duration) string {
	if d == 0 {
		return "--assume-runtime 0: they never finish"
	}
	return fmt.Sprintf("--assume-runtime %s: %s from the snapshot on", d, d)
}

// comment tells, above a job's PodGroup, what the scenario makes of it.
func (j *Job) comment(opts Options) string {
	var b strings.Builder
	if j.Running {
		fmt.Fprintf(&b, "# %s: running for %s on %s", key(j.Group), j.RunningFor, strings.Join(j.Nodes, ", "))
		if j.StartNote != "" {
			fmt.Fprintf(&b, " (%s)", j.StartNote)
		}
		if minimum := gangSize(&j.Group.Spec); int32(j.OnNodes) < minimum {
			fmt.Fprintf(&b, "; only %d of the %d pods its gang needs are on nodes: they hold them, and it waits for the rest", j.OnNodes, minimum)
		}
	} else {
		fmt.Fprintf(&b, "# %s: pending for %s", key(j.Group), j.Age)
	}
	switch {
	case j.DurationFrom == ExpectedRuntimeAnnotation && j.Running && j.Duration > 0 && j.RunningFor >= j.Duration:
		fmt.Fprintf(&b, "; ran past its expected %s, so it finishes as the simulation starts", j.Duration)
	case j.DurationFrom == ExpectedRuntimeAnnotation:
		fmt.Fprintf(&b, "; runs %s in all (%s)", j.Duration, ExpectedRuntimeAnnotation)
	case j.Duration == 0:
		b.WriteString("; duration assumed: never finishes")
	default:
		fmt.Fprintf(&b, "; duration assumed: %s more (--assume-runtime)", opts.AssumeRuntime)
	}
	if j.Why != "" {
		fmt.Fprintf(&b, "\n#   %s is unusable: %s", ExpectedRuntimeAnnotation, j.Why)
	}
	return b.String()
}

// podGroup is the job's PodGroup with its times as simulation annotations. Of the live
// annotations it keeps those of the scheduler (kai.scheduler/, but not the start, eviction and
// checkpoint stamps, absolute times the simulation's clock would misread: a job's preemption
// delay then counts from its submission, and a job with a checkpoint interval reports its
// checkpoints in virtual time) and the simulation hints a user may have put on the workload
// (startup, checkpoint interval); of its status, the eviction count.
func (j *Job) podGroup() *v2alpha2.PodGroup {
	annotations := map[string]string{}
	for k, v := range j.Group.Annotations {
		keep := strings.HasPrefix(k, "kai.scheduler/") && k != scheduling.LastStartTimestampAnnotation &&
			k != scheduling.LastEvictionTimestampAnnotation && k != scheduling.LastCheckpointTimestampAnnotation
		keep = keep || k == input.StartupAnnotation || k == input.CheckpointIntervalAnnotation
		if keep {
			annotations[k] = v
		}
	}
	annotations[input.SubmitAtAnnotation] = (-j.Age).String()
	if j.Running {
		annotations[input.RunningForAnnotation] = j.RunningFor.String()
	}
	if j.Duration > 0 {
		// kai-sim's duration is the work done after each start's startup.
		annotations[input.DurationAnnotation] = max(j.Duration-j.Startup, time.Second).String()
	}
	group := &v2alpha2.PodGroup{TypeMeta: metav1.TypeMeta{APIVersion: "scheduling.run.ai/v2alpha2", Kind: "PodGroup"},
		ObjectMeta: metav1.ObjectMeta{Namespace: j.Group.Namespace, Name: j.Group.Name, Labels: j.Group.Labels, Annotations: annotations},
		Spec:       j.Group.Spec}
	if e := j.Group.Status.Evictions; e != nil {
		// How often the job was evicted lengthens its protection when escalation is on;
		// when is an absolute time, which kai-sim leaves out.
		group.Status.Evictions = &v2alpha2.EvictionCount{Total: e.Total, Preempt: e.Preempt, Reclaim: e.Reclaim}
	}
	return group
}

func node(n *v1.Node) *v1.Node {
	return &v1.Node{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels},
		Spec:       v1.NodeSpec{Taints: n.Spec.Taints, Unschedulable: n.Spec.Unschedulable},
		Status:     v1.NodeStatus{Allocatable: n.Status.Allocatable}}
}

// exportPod keeps of a pod what decides where it may go and what it holds: labels (other
// pods' affinity matches them; a GPU share's runai-gpu-group, its device), the pod-group,
// scheduler and GPU-sharing annotations (what a share asks for), and the spec's
// placement fields and containers' names, resources and ports. onNode keeps its node.
// Images, environment and volumes are exported only when included.
func exportPod(pod *v1.Pod, onNode bool, include []string) *v1.Pod {
	gpuSharing := map[string]bool{scheduling.GPUFractionAnnotation: true, scheduling.GPUMemoryAnnotation: true,
		scheduling.GPUFractionNumDevicesAnnotation: true, scheduling.GPUFractionContainerNameAnnotation: true}
	annotations := map[string]string{}
	for k, v := range pod.Annotations {
		if k == scheduling.PodGroupNameAnnotation || strings.HasPrefix(k, "kai.scheduler/") || gpuSharing[k] {
			annotations[k] = v
		}
	}
	s := &pod.Spec
	spec := v1.PodSpec{
		SchedulerName: s.SchedulerName, PriorityClassName: s.PriorityClassName,
		NodeSelector: s.NodeSelector, Affinity: s.Affinity, Tolerations: s.Tolerations,
		TopologySpreadConstraints: s.TopologySpreadConstraints, SchedulingGates: s.SchedulingGates,
		Overhead: s.Overhead, Resources: s.Resources, HostNetwork: s.HostNetwork,
		TerminationGracePeriodSeconds: s.TerminationGracePeriodSeconds,
		InitContainers:                containers(s.InitContainers, include), Containers: containers(s.Containers, include),
	}
	if onNode {
		spec.NodeName = s.NodeName
	}
	if slices.Contains(include, "volumes") {
		spec.Volumes = s.Volumes
	}
	return &v1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, Labels: pod.Labels, Annotations: annotations},
		Spec:       spec}
}

func containers(in []v1.Container, include []string) []v1.Container {
	out := make([]v1.Container, 0, len(in))
	for _, c := range in {
		kept := v1.Container{Name: c.Name, Resources: c.Resources, Ports: c.Ports, RestartPolicy: c.RestartPolicy}
		if slices.Contains(include, "images") {
			kept.Image = c.Image
		}
		if slices.Contains(include, "env") {
			kept.Env, kept.EnvFrom = c.Env, c.EnvFrom
		}
		if slices.Contains(include, "volumes") {
			kept.VolumeMounts = c.VolumeMounts
		}
		out = append(out, kept)
	}
	return out
}

// writer writes documents, keeping the first error.
type writer struct {
	w   io.Writer
	err error
}

func (o *writer) line(format string, args ...any) {
	if o.err == nil {
		_, o.err = fmt.Fprintf(o.w, format+"\n", args...)
	}
}

// doc writes one document, after a comment, without the nulls typed objects carry
// (creationTimestamp: null). Nothing else empty is dropped: an empty label selector matches
// every pod, where a missing one matches none.
func (o *writer) doc(comment string, obj any) {
	if o.err != nil {
		return
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		o.err = err
		return
	}
	var tree map[string]any
	if o.err = json.Unmarshal(raw, &tree); o.err != nil {
		return
	}
	// Of a status only a node's allocatable resources and a job's eviction count are
	// scheduling's input: the rest is what the cluster did, which the simulation does again.
	status, _ := tree["status"].(map[string]any)
	delete(tree, "status")
	switch obj.(type) {
	case *v1.Node:
		tree["status"] = map[string]any{"allocatable": status["allocatable"]}
	case *v2alpha2.PodGroup:
		if evictions, ok := status["evictions"]; ok {
			tree["status"] = map[string]any{"evictions": evictions}
		}
	}
	data, err := yaml.Marshal(dropNulls(tree))
	if err != nil {
		o.err = err
		return
	}
	o.line("---")
	if comment != "" {
		o.line("%s", comment)
	}
	_, o.err = o.w.Write(data)
}

// dropNulls drops the null fields of objects, at every depth: in Kubernetes objects a null
// field is an absent one.
func dropNulls(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			if child == nil {
				delete(t, k)
			} else {
				t[k] = dropNulls(child)
			}
		}
	case []any:
		for i, child := range t {
			t[i] = dropNulls(child)
		}
	}
	return v
}
