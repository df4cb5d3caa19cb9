package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/kai/v1alpha1"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/gpureservation"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// Problem is something wrong in the cluster's objects that the scheduler works around and
// must report: an unparsable start stamp, a pod whose PodGroup does not exist.
type Problem struct {
	// Object is what the problem is about (a PodGroup or a Pod).
	Object client.Object
	// Reason is a CamelCase cause, Message says it to a person.
	Reason, Message string
}

// Builder makes a snapshot every cycle from a Store: one fed by informer events (Store), or,
// when Reader is set, one refreshed from full lists of the reader first.
type Builder struct {
	// Reader, when set, is listed every cycle (tests and tools; the scheduler and kai-sim
	// feed Store instead).
	Reader client.Reader
	// Store holds the converted objects; a Builder with a Reader makes its own.
	Store *Store
	// SchedulerName selects the pods this scheduler schedules (other pods only use
	// resources) and Pool the node pool it serves, for the store a Builder with a Reader
	// makes; a given Store has its own.
	SchedulerName string
	Pool          scheduling.NodePool
	Overlay       *Overlay
}

// objects is everything one snapshot is built from.
type objects struct {
	nodes    v1.NodeList
	pods     v1.PodList
	groups   v2alpha2.PodGroupList
	queues   v2.QueueList
	priority schedulingv1.PriorityClassList
	// topologies stays empty where the Topology CRD is not served.
	topologies v1alpha1.TopologyList
}

// Snapshot assembles the cluster's current state. It never fails on bad objects: those are
// returned as problems and left out or defaulted; only a failing list is an error.
func (b *Builder) Snapshot(ctx context.Context) (*model.Snapshot, []Problem, error) {
	if b.Store == nil {
		b.Store = New(b.SchedulerName, b.Pool)
	}
	if b.Reader != nil {
		var o objects
		for _, list := range []client.ObjectList{&o.nodes, &o.pods, &o.groups, &o.queues, &o.priority} {
			// The snapshot only reads the objects, so the cache need not copy them every cycle.
			if err := b.Reader.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
				return nil, nil, fmt.Errorf("listing %T: %w", list, err)
			}
		}
		// Topologies are optional: a cluster without their CRD has none.
		if err := b.Reader.List(ctx, &o.topologies, client.UnsafeDisableDeepCopy); err != nil && !meta.IsNoMatchError(err) {
			return nil, nil, fmt.Errorf("listing %T: %w", &o.topologies, err)
		}
		b.Store.replace(&o)
	}
	return b.Store.assemble(b.Overlay)
}

// assemble builds a snapshot from the store's entries, laying the overlay over them. Every
// snapshot gets its own nodes, jobs and pods: a session changes them as it decides.
func (s *Store) assemble(overlay *Overlay) (*model.Snapshot, []Problem, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if overlay != nil {
		overlay.forget(func(uid types.UID) bool { return s.byUID[uid] != nil },
			func(job model.JobID) bool { je := s.jobs[job]; return je != nil && je.group != nil })
		overlay.mu.Lock() // for the readers of every pod and job below
		defer overlay.mu.Unlock()
	}
	a := assembly{store: s, overlay: overlay, nodes: make(map[string]*model.NodeInfo, len(s.nodes))}
	// Nodes, jobs and pods come from one array each: a snapshot is thrown away whole after
	// its cycle, and three allocations cost less than one per object.
	nodes := make([]*model.NodeInfo, 0, len(s.nodes))
	nodeInfos := make([]model.NodeInfo, len(s.nodes))
	for i, e := range s.sortedNodes() {
		info := &nodeInfos[i]
		*info = e.info
		nodes = append(nodes, info)
		a.nodes[info.Name] = info
		if e.problem != nil {
			a.problems = append(a.problems, *e.problem)
		}
	}
	var shared map[string]bool // the groups shares hold, once a reservation pod is met
	for _, e := range s.foreign {
		if e.terminal {
			continue
		}
		if group, ok := gpureservation.GroupOf(e.obj); ok {
			if shared == nil {
				shared = a.sharedGroups()
			}
			v := a.view(e)
			if shared[group] {
				// Its device is the shares', which hold it; the rest of what it asks (a sliver of
				// CPU and memory) is its own.
				a.chargeRequest(e, v, e.spec.request.With(model.GPU, 0))
				continue
			}
			// No share holds it: it goes once collected, and its device with it. Charged as
			// releasing, what it holds is promised to a preemptor that emptied the device, who
			// waits for it rather than having more victims evicted.
			v.deleting = true
			a.charge(e, v)
			continue
		}
		a.charge(e, a.view(e))
	}
	jobs := make([]*model.JobInfo, 0, len(s.jobs))
	a.jobInfos = make([]model.JobInfo, 0, len(s.jobs))
	a.pods = make([]*model.PodInfo, 0, len(s.pods))
	a.podInfos = make([]model.PodInfo, 0, len(s.pods))
	for _, je := range s.sortedJobs() {
		if je.group == nil {
			// Pods without a PodGroup here still use their node. Those of another pool's job
			// are that pool's scheduler's to place and to report; the others are orphans.
			for _, e := range je.pods {
				if e.terminal {
					continue
				}
				if !je.otherPool {
					a.problems = append(a.problems, Problem{Object: e.obj, Reason: "PodGroupNotFound",
						Message: fmt.Sprintf("PodGroup %q of pod %s/%s does not exist", e.groupName, e.obj.Namespace, e.name)})
				}
				a.charge(e, a.view(e))
			}
			continue
		}
		job := a.job(je.group)
		jobs = append(jobs, job)
		start := len(a.pods)
		delayFound := je.group.delaySet
		for _, e := range je.pods {
			a.staleness(job, e) // terminal pods too: a failed one tells since when the gang is short
			if e.terminal {
				continue
			}
			a.place(e)
			if !delayFound && e.hasPreemptionDelay {
				// The first pod by name that carries the annotation speaks for the job, as
				// a workload's pod template gives every pod the same.
				delayFound = true
				if p := setPreemptionDelay(job, e.preemptionDelay); p != nil {
					p.Object = job.ID.PodGroupRef()
					a.problems = append(a.problems, *p)
				}
			}
		}
		// The job's own part of the array: an append beyond it reallocates, never spills
		// into the next job's pods.
		job.Pods = a.pods[start:len(a.pods):len(a.pods)]
	}
	for _, n := range nodes {
		// Foreign pods are charged in map order; the ports' order means nothing, but equal
		// clusters must give equal snapshots.
		slices.SortFunc(n.OtherPorts, func(a, b model.HostPort) int {
			return cmp.Or(cmp.Compare(a.Port, b.Port), strings.Compare(string(a.Protocol), string(b.Protocol)), strings.Compare(a.IP, b.IP))
		})
	}
	queues := make([]*model.QueueInfo, 0, len(s.queues))
	var queueProblems []Problem // rare: only queues with unreadable annotations have any
	for _, q := range s.queues {
		// The queue tree writes its findings (children, depth, problems) into its entries.
		copied := *q.info
		queues = append(queues, &copied)
		queueProblems = append(queueProblems, q.problems...)
	}
	// In a stable order, by queue (each queue's own in the order it found them); the map's
	// order is not, and sorting every queue's name each cycle would cost the many for the few.
	slices.SortStableFunc(queueProblems, func(x, y Problem) int { return strings.Compare(x.Object.GetName(), y.Object.GetName()) })
	a.problems = append(a.problems, queueProblems...)
	snapshot, err := model.NewSnapshot(nodes, jobs, queues)
	if err == nil {
		topologies := make([]*model.Topology, 0, len(s.topologies))
		for _, t := range s.topologies {
			topologies = append(topologies, t)
		}
		snapshot.SetTopologies(topologies) // a copy of the map: the store's changes after this one stay out
		for _, u := range snapshot.Queues.UnlimitedQuotas() {
			a.problems = append(a.problems, Problem{Object: model.QueueRef(u.Queue), Reason: model.ReasonUnlimitedQuota, Message: u.Message()})
		}
	}
	return snapshot, a.problems, err
}

func (s *Store) sortedNodes() []*nodeEntry {
	if s.nodeOrder == nil {
		s.nodeOrder = make([]*nodeEntry, 0, len(s.nodes))
		for _, e := range s.nodes {
			s.nodeOrder = append(s.nodeOrder, e)
		}
		slices.SortFunc(s.nodeOrder, func(a, b *nodeEntry) int { return strings.Compare(a.info.Name, b.info.Name) })
	}
	return s.nodeOrder
}

func (s *Store) sortedJobs() []*jobEntry {
	if s.jobOrder == nil {
		s.jobOrder = make([]*jobEntry, 0, len(s.jobs))
		for _, je := range s.jobs {
			s.jobOrder = append(s.jobOrder, je)
		}
		slices.SortFunc(s.jobOrder, func(a, b *jobEntry) int { return strings.Compare(string(a.id), string(b.id)) })
	}
	return s.jobOrder
}

// assembly is one snapshot being put together.
type assembly struct {
	store    *Store
	overlay  *Overlay
	nodes    map[string]*model.NodeInfo
	problems []Problem
	// jobInfos, podInfos and pods back the snapshot's jobs and pods; each job's Pods is a
	// slice of pods.
	jobInfos []model.JobInfo
	podInfos []model.PodInfo
	pods     []*model.PodInfo
	// memories are the nodes' device memories (deviceMemories); nil until first asked.
	memories []int64
}

// podView is a pod as this snapshot sees it: the informer's state with the scheduler's own
// recent writes laid over it.
type podView struct {
	nodeName, nominated string
	// gpuGroups are the devices the scheduler bound (or promised) a share pod's shares to,
	// when the informer may not show its labels yet.
	gpuGroups []string
	// promisedAt is when the nominated node was promised (the pod's Promised condition).
	promisedAt time.Time
	deleting   bool
	evictedFor model.JobID
	moved      bool
}

func (a *assembly) view(e *podEntry) podView {
	v := podView{nodeName: e.nodeName, nominated: e.nominated, promisedAt: e.promisedAt, deleting: e.deleting, evictedFor: e.evictedFor, moved: e.moved}
	if a.overlay == nil {
		return v
	}
	if bound, ok := a.overlay.boundNode(e.uid, v.nodeName); ok {
		v.nodeName, v.gpuGroups = bound.node, bound.gpuGroups
	}
	// A pending pod's nominated node is the promise of an earlier cycle: resources that
	// evictions are freeing for it. It comes back as a pipelined pod on that node, so that
	// nobody else — above all not the victim — is bound onto them meanwhile.
	if written, ok := a.overlay.nominatedNode(e.uid, v.nominated); ok {
		v.nominated, v.promisedAt = written.node, written.at
		if v.nodeName == "" {
			v.gpuGroups = written.gpuGroups
		}
	}
	if ev, ok := a.overlay.evicted(e.uid, v.deleting); ok {
		v.deleting, v.evictedFor, v.moved = true, ev.preemptor, ev.moved
	}
	return v
}

// promiseTime is when a promise was made, in Unix seconds (model.PodInfo.PromisedAt): as its
// condition or the scheduler's own write says, or, for a promise written without one (by an
// older scheduler), the pod's creation, before which it cannot have been made.
func promiseTime(promisedAt, created time.Time) int64 {
	switch {
	case !promisedAt.IsZero():
		return promisedAt.Unix()
	case !created.IsZero():
		return created.Unix()
	}
	return 1 // the oldest promise there can be, and still a promise
}

// sharedGroups are the GPU groups that unfinished share pods hold: as their labels say, or,
// for a share whose bind or promise is still being written, as the overlay says — its
// reservation pod is made before its labels are. A reservation pod of one of them is not
// charged its GPU: its device is taken by the shares' group already, and charging both
// would count the device twice. One whose group no share holds (the last share left, or a
// bind failed before labelling its share) still holds its device, for the kubelet as for the
// scheduler, until it is collected: its whole GPU is charged as releasing.
func (a *assembly) sharedGroups() map[string]bool {
	shared := map[string]bool{}
	for _, e := range a.store.pods {
		if e.terminal || e.share == nil {
			continue
		}
		for _, groups := range [][]string{e.gpuGroups, a.view(e).gpuGroups} {
			for _, group := range groups {
				shared[group] = true
			}
		}
	}
	return shared
}

// charge counts a pod that is not ours to schedule (another scheduler's, or one whose
// PodGroup is missing) on its node: while it terminates its resources are releasing, not
// idle, or a pod bound onto them would be refused by the kubelet. A GPU share holds its
// devices as ours do.
func (a *assembly) charge(e *podEntry, v podView) { a.chargeRequest(e, v, e.spec.request) }

// chargeRequest is charge with what the pod is counted to ask for.
func (a *assembly) chargeRequest(e *podEntry, v podView, request model.Resources) {
	node := a.nodes[v.nodeName]
	if node == nil {
		return
	}
	p := model.PodInfo{Status: model.Running, Request: request, NodeName: node.Name}
	if v.deleting {
		p.Status = model.Releasing
	}
	if e.share != nil && e.shareProblem == nil {
		a.shareOf(&p, e, v, node.Name)
	}
	node.Charge(&p)
	if e.spec.placement != nil {
		node.OtherPorts = append(node.OtherPorts, e.spec.placement.HostPorts...)
	}
}

// shareOf gives a share pod placed on node (or pending, for an empty node) its share, its
// devices and what it is charged: its groups as the overlay or its labels say — or, for a
// share placed without any (by another scheduler, or its label removed), groups of its own,
// so that it holds devices of its own rather than none — and the part of each device it
// takes. It returns why the share can be given on no node of the pool, "" when it can.
func (a *assembly) shareOf(p *model.PodInfo, e *podEntry, v podView, node string) string {
	p.Share, p.GPUGroupLabels = e.share, e.gpuGroups
	if node != "" {
		p.GPUGroups = e.gpuGroups
		if v.gpuGroups != nil {
			p.GPUGroups = v.gpuGroups
		}
		if len(p.GPUGroups) == 0 {
			p.GPUGroups = model.OwnGPUGroups(node, string(e.uid), e.share.Devices)
		}
	}
	devices := int64(e.share.Devices)
	if e.share.MemoryMiB == 0 {
		p.Request = p.Request.With(model.GPU, model.FractionPortion(e.share.Fraction)*devices)
		return ""
	}
	if n := a.nodes[node]; n != nil {
		portion, _ := n.SharePortion(e.share) // one placed on too small a device holds all of it
		if portion == 0 {
			portion = model.MilliGPU
		}
		p.Request = p.Request.With(model.GPU, portion*devices)
		return ""
	}
	// Pending: charged the most it can take of any device of the pool — the portion of the
	// smallest device that holds it — so that what its queue's limit and share count before
	// it is placed is never less than after.
	memories := a.deviceMemories()
	i, _ := slices.BinarySearch(memories, e.share.MemoryMiB)
	if i == len(memories) {
		largest := "no node has the " + scheduling.GPUMemoryLabel + " label"
		if len(memories) > 0 {
			largest = fmt.Sprintf("the largest has %d MiB", memories[len(memories)-1])
		}
		return fmt.Sprintf("annotation %s=%d asks for more memory than any GPU device of the cluster has (%s)",
			scheduling.GPUMemoryAnnotation, e.share.MemoryMiB, largest)
	}
	p.Request = p.Request.With(model.GPU, model.MemoryPortion(e.share.MemoryMiB, memories[i])*devices)
	return ""
}

// deviceMemories are the pool's GPU device memories (MiB), sorted, each once: read from the
// nodes at the first pending share asked in memory, not once per such pod.
func (a *assembly) deviceMemories() []int64 {
	if a.memories == nil {
		a.memories = []int64{}
		for _, n := range a.nodes {
			if n.GPUMemoryMiB > 0 {
				a.memories = append(a.memories, n.GPUMemoryMiB)
			}
		}
		slices.Sort(a.memories)
		a.memories = slices.Compact(a.memories)
	}
	return a.memories
}

// job converts a PodGroup entry into this snapshot's job, with its priority as the priority
// classes say now and the start stamp the overlay may know better.
func (a *assembly) job(g *groupEntry) *model.JobInfo {
	a.jobInfos = append(a.jobInfos, g.job)
	job := &a.jobInfos[len(a.jobInfos)-1]
	job.Priority = model.DefaultPriority
	if p, ok := a.store.priorities[g.priorityClass]; ok {
		job.Priority = p
	}
	switch g.preemptibility {
	case v2alpha2.Preemptible:
		job.Preemptible = true
	case v2alpha2.NonPreemptible:
		job.Preemptible = false
	default:
		job.Preemptible = job.Priority < model.PreemptibleBelowPriority
	}
	a.problems = append(a.problems, g.problems...)
	if a.overlay != nil {
		if written, ok := a.overlay.stamp(job.ID, job.LastStartTimestamp); ok {
			job.LastStartTimestamp = &written
		}
		if at, ok := a.overlay.evictionStamp(job.ID, job.LastEvictionTimestamp); ok {
			evicted := at // only then on the heap: a snapshot asks for every job
			job.LastEvictionTimestamp = &evicted
		}
	}
	return job
}

// staleness takes from a pod of job what staleness eviction reads: when it failed, whether it
// succeeded, and its
// grace-period annotation when the PodGroup gives none (the first pod by name that has one
// decides; each bad one is reported).
func (a *assembly) staleness(job *model.JobInfo, e *podEntry) {
	if e.failedAt.After(job.LastPodFailure) {
		job.LastPodFailure = e.failedAt
	}
	if e.succeeded {
		job.SucceededPods++
	}
	if e.staleProblem != nil {
		a.problems = append(a.problems, *e.staleProblem)
	} else if e.staleGrace != nil && job.StalenessGracePeriod == nil {
		d := *e.staleGrace
		job.StalenessGracePeriod = &d
	}
}

// place puts a pod of the job assembled last into the snapshot, in the status its state
// gives it.
func (a *assembly) place(e *podEntry) {
	job := &a.jobInfos[len(a.jobInfos)-1]
	v := a.view(e)
	if e.shareProblem != nil {
		a.problems = append(a.problems, *e.shareProblem)
		if v.nodeName == "" && job.Refusal == "" {
			job.Refusal = fmt.Sprintf("pod %s: %s", e.name, e.shareProblem.Message)
		}
	}
	if e.spec.err != nil {
		// The API server refuses such a spec; if one gets through, the pod waits, saying why.
		reason := "InvalidPlacement"
		if e.spec.negative {
			reason = "InvalidRequest"
		}
		a.problems = append(a.problems, Problem{Object: e.obj, Reason: reason, Message: e.spec.err.Error()})
		if e.spec.negative && v.nodeName == "" {
			return
		}
	}
	info := model.PodInfo{
		Namespace: job.Namespace, Name: e.name, UID: string(e.uid), Job: job.ID,
		SubGroup: e.subGroup, Request: e.spec.request, NodeName: v.nodeName, Placement: e.spec.placement,
		StartTime: e.startTime, CreationTime: e.creationTime,
	}
	if e.share != nil && e.shareProblem == nil {
		placedOn := v.nodeName
		if placedOn == "" && !v.deleting && a.nodes[v.nominated] != nil {
			placedOn = v.nominated
		}
		if refusal := a.shareOf(&info, e, v, placedOn); refusal != "" {
			a.problems = append(a.problems, Problem{Object: e.obj, Reason: model.ReasonInvalidGPUShare, Message: refusal})
			if job.Refusal == "" {
				job.Refusal = fmt.Sprintf("pod %s: %s", e.name, refusal)
			}
		}
	}
	switch {
	case v.nodeName == "" && e.gated:
		return // gated: the API server refuses to bind it, so it is not ready to schedule
	case v.nodeName != "" && a.nodes[v.nodeName] == nil:
		a.problems = append(a.problems, Problem{Object: e.obj, Reason: "UnknownNode", Message: fmt.Sprintf("pod is on unknown node %q", v.nodeName)})
		return
	case v.deleting && v.nodeName == "":
		return // a pending pod going away holds nothing
	case v.deleting:
		info.Status, info.EvictedFor, info.Moved = model.Releasing, v.evictedFor, v.moved
	case v.nodeName == "" && a.nodes[v.nominated] != nil:
		info.Status, info.NodeName, info.PromisedAt = model.Pipelined, v.nominated, promiseTime(v.promisedAt, e.creationTime)
	case v.nodeName == "":
		info.Status = model.Pending
	case e.running:
		info.Status = model.Running
	default:
		info.Status = model.Bound
	}
	a.podInfos = append(a.podInfos, info)
	a.pods = append(a.pods, &a.podInfos[len(a.podInfos)-1]) // entries are in name order
}
