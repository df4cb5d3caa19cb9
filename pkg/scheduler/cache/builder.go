package cache

import (
	"context"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
)

// Problem is something wrong in the cluster's objects that the scheduler works around and
// must report: an unparsable start stamp, a pod whose PodGroup does not exist.
type Problem struct {
	// Object is what the problem is about (a PodGroup or a Pod).
	Object client.Object
	// Reason is a CamelCase cause, Message says it to a person.
	Reason, Message string
}

// Builder makes a snapshot from a (cache-backed) reader every cycle.
type Builder struct {
	Reader client.Reader
	// SchedulerName selects the pods this scheduler schedules; other pods only use resources.
	SchedulerName string
	Overlay       *Overlay

	// specs caches what each pod asks of a node by UID and generation (an in-place resize or
	// an added toleration bumps the generation; see podSpec for older API servers): summing
	// containers and parsing affinities are the most expensive part of a snapshot.
	specs map[types.UID]cachedSpec
	// stamps caches each job's parsed start stamp by the annotation's text.
	stamps map[api.JobID]cachedStamp
}

// objects is everything one snapshot is built from.
type objects struct {
	nodes    v1.NodeList
	pods     v1.PodList
	groups   v2alpha2.PodGroupList
	queues   v2.QueueList
	priority schedulingv1.PriorityClassList
}

// Snapshot lists the cluster and converts it. It never fails on bad objects: those are
// returned as problems and left out or defaulted; only a failing list is an error.
func (b *Builder) Snapshot(ctx context.Context) (*api.Snapshot, []Problem, error) {
	var o objects
	for _, list := range []client.ObjectList{&o.nodes, &o.pods, &o.groups, &o.queues, &o.priority} {
		// The snapshot only reads the objects, so the cache need not copy them every cycle.
		if err := b.Reader.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			return nil, nil, fmt.Errorf("listing %T: %w", list, err)
		}
	}
	var problems []Problem
	nodes := make([]*api.NodeInfo, 0, len(o.nodes.Items))
	nodeByName := map[string]*api.NodeInfo{}
	for i := range o.nodes.Items {
		n := &o.nodes.Items[i]
		info := &api.NodeInfo{
			Name: n.Name, Labels: n.Labels, Unschedulable: n.Spec.Unschedulable, Taints: n.Spec.Taints,
			Allocatable: api.ResourcesFromList(n.Status.Allocatable),
		}
		if info.Allocatable.HasNegative() {
			// No kubelet reports this; if one did, the node offers nothing of the resource
			// rather than a debt the accounting would turn into room elsewhere.
			problems = append(problems, Problem{Object: n, Reason: "InvalidAllocatable",
				Message: fmt.Sprintf("node %s reports a negative allocatable amount (%s); counted as none", n.Name, info.Allocatable)})
			info.Allocatable = info.Allocatable.AtLeastZero()
		}
		nodes = append(nodes, info)
		nodeByName[n.Name] = info
	}
	priorities := map[string]int32{}
	for _, pc := range o.priority.Items {
		priorities[pc.Name] = pc.Value
	}
	jobs := map[api.JobID]*api.JobInfo{}
	liveJobs := map[api.JobID]bool{}
	for i := range o.groups.Items {
		job, problem := b.job(&o.groups.Items[i], priorities)
		jobs[job.ID], liveJobs[job.ID] = job, true
		if problem != nil {
			problems = append(problems, *problem)
		}
	}
	livePods := map[types.UID]bool{}
	for i := range o.pods.Items {
		pod := &o.pods.Items[i]
		livePods[pod.UID] = true
		if problem := b.addPod(pod, jobs, nodeByName); problem != nil {
			problems = append(problems, *problem)
		}
	}
	if b.Overlay != nil {
		b.Overlay.forget(livePods, liveJobs)
	}
	for uid := range b.specs {
		if !livePods[uid] {
			delete(b.specs, uid)
		}
	}
	for job := range b.stamps {
		if !liveJobs[job] {
			delete(b.stamps, job)
		}
	}
	queues := make([]*api.QueueInfo, 0, len(o.queues.Items))
	for i := range o.queues.Items {
		queues = append(queues, QueueInfo(&o.queues.Items[i]))
	}
	jobList := make([]*api.JobInfo, 0, len(jobs))
	for _, j := range jobs {
		jobList = append(jobList, j)
	}
	sort.Slice(jobList, func(i, j int) bool { return jobList[i].ID < jobList[j].ID })
	snapshot, err := api.NewSnapshot(nodes, jobList, queues)
	return snapshot, problems, err
}

// job converts a PodGroup. An unparsable start stamp is a problem, and the job counts as
// unstamped (its pods' start still protects it).
func (b *Builder) job(pg *v2alpha2.PodGroup, priorities map[string]int32) (*api.JobInfo, *Problem) {
	job := &api.JobInfo{
		ID: api.NewJobID(pg.Namespace, pg.Name), Namespace: pg.Namespace, Name: pg.Name,
		Queue: pg.Spec.Queue, Priority: api.DefaultPriority, MinMember: max(pg.Spec.MinMember, 1),
		CreationTime:      pg.CreationTimestamp.Time,
		MarkUnschedulable: pg.Spec.MarkUnschedulable == nil || *pg.Spec.MarkUnschedulable,
	}
	if p, ok := priorities[pg.Spec.PriorityClassName]; ok {
		job.Priority = p
	}
	switch pg.Spec.Preemptibility {
	case v2alpha2.Preemptible:
		job.Preemptible = true
	case v2alpha2.NonPreemptible:
		job.Preemptible = false
	default:
		job.Preemptible = job.Priority < api.PreemptibleBelowPriority
	}
	for _, sg := range pg.Spec.SubGroups {
		job.SubGroups = append(job.SubGroups, api.SubGroupInfo{Name: sg.Name, MinMember: sg.MinMember})
	}
	sort.Slice(job.SubGroups, func(i, j int) bool { return job.SubGroups[i].Name < job.SubGroups[j].Name })
	stamp, err := b.startTime(job.ID, pg.Annotations)
	var problem *Problem
	if err != nil {
		problem = &Problem{Object: pg, Reason: "InvalidStartTimestamp", Message: err.Error()}
	}
	if b.Overlay != nil {
		if written, ok := b.Overlay.stamp(job.ID, stamp); ok {
			stamp = &written
		}
	}
	job.LastStartTimestamp = stamp
	return job, problem
}

// addPod puts a pod into its job, or — for pods of other schedulers and pods without a
// PodGroup — only charges its node.
func (b *Builder) addPod(pod *v1.Pod, jobs map[api.JobID]*api.JobInfo, nodes map[string]*api.NodeInfo) *Problem {
	if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
		return nil
	}
	spec := b.podSpec(pod)
	request := spec.request
	nodeName := pod.Spec.NodeName
	if b.Overlay != nil {
		if bound, ok := b.Overlay.boundNode(pod.UID, nodeName); ok {
			nodeName = bound
		}
	}
	// A pending pod's nominated node is the promise of an earlier cycle: resources that
	// evictions are freeing for it. It comes back as a pipelined pod on that node, so that
	// nobody else — above all not the victim — is bound onto them meanwhile.
	nominated := pod.Status.NominatedNodeName
	if b.Overlay != nil {
		if written, ok := b.Overlay.nominatedNode(pod.UID, nominated); ok {
			nominated = written
		}
	}
	deleting := pod.DeletionTimestamp != nil
	evictedFor := evictionPreemptor(pod)
	if b.Overlay != nil {
		if preemptor, ok := b.Overlay.evicted(pod.UID, deleting); ok {
			deleting, evictedFor = true, preemptor
		}
	}
	var job *api.JobInfo
	var problem *Problem
	if pod.Spec.SchedulerName == b.SchedulerName {
		if name := pod.Annotations[scheduling.PodGroupNameAnnotation]; name != "" {
			job = jobs[api.NewJobID(pod.Namespace, name)]
			if job == nil {
				problem = &Problem{Object: pod, Reason: "PodGroupNotFound",
					Message: fmt.Sprintf("PodGroup %q of pod %s/%s does not exist", name, pod.Namespace, pod.Name)}
			}
		}
	}
	if job == nil {
		// Not ours to schedule, but it uses the node: while it terminates its resources are
		// releasing, not idle, or a pod bound onto them would be refused by the kubelet.
		if node := nodes[nodeName]; node != nil {
			if deleting {
				node.Releasing = node.Releasing.Add(request)
			} else {
				node.Used = node.Used.Add(request)
			}
			if spec.placement != nil {
				node.OtherPorts = append(node.OtherPorts, spec.placement.HostPorts...)
			}
		}
		return problem
	}
	if spec.err != nil {
		// The API server refuses such a spec; if one gets through, the pod waits, saying why.
		reason := "InvalidPlacement"
		if spec.negative {
			reason = "InvalidRequest"
		}
		problem = &Problem{Object: pod, Reason: reason, Message: spec.err.Error()}
		if spec.negative && nodeName == "" {
			return problem
		}
	}
	info := &api.PodInfo{
		Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID), Job: job.ID,
		SubGroup: pod.Labels[scheduling.SubGroupLabel], Request: request,
		NodeName: nodeName, Placement: spec.placement, CreationTime: pod.CreationTimestamp.Time,
	}
	if pod.Status.StartTime != nil {
		t := pod.Status.StartTime.Time
		info.StartTime = &t
	}
	switch {
	case nodeName == "" && len(pod.Spec.SchedulingGates) > 0:
		return problem // gated: the API server refuses to bind it, so it is not ready to schedule
	case nodes[nodeName] == nil && nodeName != "":
		return &Problem{Object: pod, Reason: "UnknownNode", Message: fmt.Sprintf("pod is on unknown node %q", nodeName)}
	case deleting && nodeName == "":
		return nil // a pending pod going away holds nothing
	case deleting:
		info.Status, info.EvictedFor = api.Releasing, evictedFor
	case nodeName == "" && nodes[nominated] != nil:
		info.Status, info.NodeName = api.Pipelined, nominated
	case nodeName == "":
		info.Status = api.Pending
	case pod.Status.Phase == v1.PodRunning:
		info.Status = api.Running
	default:
		info.Status = api.Bound
	}
	job.AddPod(info)
	return problem
}

// startTime parses a PodGroup's start stamp, remembering the last parse per job: the
// annotation rarely changes and is read every cycle.
func (b *Builder) startTime(job api.JobID, annotations map[string]string) (*time.Time, error) {
	raw := annotations[scheduling.LastStartTimestampAnnotation]
	if c, ok := b.stamps[job]; ok && c.raw == raw {
		return c.parsed, c.err
	}
	parsed, err := ParseStartTime(annotations)
	if b.stamps == nil {
		b.stamps = map[api.JobID]cachedStamp{}
	}
	b.stamps[job] = cachedStamp{raw: raw, parsed: parsed, err: err}
	return parsed, err
}

type cachedStamp struct {
	raw    string
	parsed *time.Time
	err    error
}

type cachedSpec struct {
	// generation, or resourceVersion where the API server keeps no generation, say which
	// version of the pod the entry was read from.
	generation      int64
	resourceVersion string
	// request is what the pod asks of a node (containers, init containers, overhead, its
	// pod slot); placement where it may go; err why its placement cannot be read.
	request   api.Resources
	placement *api.Placement
	err       error
	// negative is set for a request with a negative amount: such a pod is never placed.
	negative bool
}

// podSpec reads what a pod asks of a node, cached.
func (b *Builder) podSpec(pod *v1.Pod) cachedSpec {
	// API servers before Kubernetes 1.33 leave a pod's generation at 0 whatever changes
	// (KEP-5067); there, any new resource version may carry new tolerations or selectors.
	version := pod.ResourceVersion
	if pod.Generation != 0 {
		version = ""
	}
	if c, ok := b.specs[pod.UID]; ok && pod.UID != "" && c.generation == pod.Generation && c.resourceVersion == version {
		return c
	}
	c := cachedSpec{generation: pod.Generation, resourceVersion: version,
		request: api.PodRequest(resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}))}
	c.placement, c.err = api.NewPlacement(&pod.Spec)
	if c.request.HasNegative() {
		// The API server refuses negative requests; one that got through would make room out
		// of nothing. It holds nothing and is given nothing.
		c.err = fmt.Errorf("requests a negative amount (%s); it is not scheduled", c.request)
		c.request, c.negative = c.request.AtLeastZero(), true
	}
	if b.specs == nil {
		b.specs = map[types.UID]cachedSpec{}
	}
	b.specs[pod.UID] = c
	return c
}

// evictionPreemptor reads, from the DisruptionTarget condition the scheduler wrote when it
// evicted the pod, which job the eviction made room for; empty for any other deletion.
func evictionPreemptor(pod *v1.Pod) api.JobID {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.DisruptionTarget && c.Status == v1.ConditionTrue {
			if _, preemptor, ok := framework.ParseEvictionMessage(c.Message); ok {
				return preemptor
			}
		}
	}
	return ""
}
