package store

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/kai/v1alpha1"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// Store keeps the cluster's objects already converted into the snapshot model, updated as
// objects change: by informer events (Handler) in the scheduler, by its own writes in kai-sim,
// or from full lists (Builder with a Reader). A snapshot is then assembled from what is
// converted: nothing is listed, summed or parsed again unless it changed, and the cost of a
// cycle's snapshot follows the number of live objects, not the history of the cluster.
//
// What may change from one cycle to the next without an event — the overlay of the
// scheduler's own writes, priority classes named by PodGroups — is applied at assembly.
type Store struct {
	schedulerName string
	// pool is the shard this scheduler serves: nodes, queues and PodGroups of other pools
	// are not kept (the pods of other pools' jobs only charge nodes, as foreign pods do).
	pool scheduling.NodePool

	mu    sync.Mutex
	nodes map[string]*nodeEntry
	// pods holds every pod by namespace/name (unique at any moment; a recreated pod replaces
	// its predecessor), and byUID the same entries by UID, for the overlay's bookkeeping.
	pods  map[string]*podEntry
	byUID map[types.UID]*podEntry
	// jobs holds, per job ID, its PodGroup (if it exists) and the scheduler's pods naming it;
	// other pods are foreign: they only charge their node.
	jobs       map[model.JobID]*jobEntry
	foreign    map[string]*podEntry
	queues     map[string]queueEntry
	priorities map[string]int32
	topologies map[string]*model.Topology
	// nodeOrder and jobOrder are the entries sorted by name, made when first needed; a node
	// coming or going drops nodeOrder, jobs are inserted and removed in place.
	nodeOrder []*nodeEntry
	jobOrder  []*jobEntry
	// changes is signalled when something changed that may let a waiting job move (see
	// Changes).
	changes chan struct{}
}

// NewStore returns an empty store for the scheduler of that name serving pool: its pods are
// placed, all other pods only use resources.
func New(schedulerName string, pool scheduling.NodePool) *Store {
	return &Store{
		schedulerName: schedulerName, pool: pool,
		nodes: map[string]*nodeEntry{}, pods: map[string]*podEntry{}, byUID: map[types.UID]*podEntry{},
		jobs: map[model.JobID]*jobEntry{}, foreign: map[string]*podEntry{},
		queues: map[string]queueEntry{}, priorities: map[string]int32{}, topologies: map[string]*model.Topology{},
		changes: make(chan struct{}, 1),
	}
}

// Changes is signalled (at most once until read) when the store saw a change that may let
// a waiting job move: a new job or pod waiting to be placed, a pod gone or finished (what it
// held is free), a node, queue or priority class added or removed, a node offering something
// else, a job's or queue's spec changed. A pod starting to run or being bound, a node's
// heartbeat, and the status the scheduler writes itself are not such changes: at 500 nodes
// they come hundreds of times a second.
func (s *Store) Changes() <-chan struct{} { return s.changes }

func (s *Store) changed() {
	select {
	case s.changes <- struct{}{}:
	default:
	}
}

// Handler feeds the store from an informer of nodes, pods, PodGroups, Queues or priority
// classes.
func (s *Store) Handler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    s.Upsert,
		UpdateFunc: func(_, obj any) { s.Upsert(obj) },
		DeleteFunc: s.Delete,
	}
}

// Upsert records the current state of an object. Objects of other kinds are ignored. The
// store keeps the object only to name it in problems; it never modifies it.
func (s *Store) Upsert(obj any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch o := obj.(type) {
	case *v1.Node:
		if !s.upsertNode(o) {
			return // a heartbeat: the node offers what it offered
		}
	case *v1.Pod:
		if !s.upsertPod(o) {
			return // a pod starting to run, bound, or told why it waits: nothing frees up
		}
	case *v2alpha2.PodGroup:
		if !s.upsertGroup(o) {
			return // its status or annotations written, by this scheduler mostly
		}
	case *v2.Queue:
		if !s.upsertQueue(o) {
			return // its status written
		}
	case *schedulingv1.PriorityClass:
		s.priorities[o.Name] = o.Value
	case *v1alpha1.Topology:
		s.topologies[o.Name] = topologyOf(o)
	default:
		return
	}
	s.changed()
}

// Delete forgets an object, also when the informer only knows its last state
// (DeletedFinalStateUnknown).
func (s *Store) Delete(obj any) {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch o := obj.(type) {
	case *v1.Node:
		s.removeNode(o.Name)
	case *v1.Pod:
		// A delete that arrives after the pod was recreated under its name is about the
		// predecessor: the successor stays.
		if e := s.pods[objectKey(o.Namespace, o.Name)]; e != nil && (o.UID == "" || o.UID == e.uid) {
			s.removePod(e.key)
		}
	case *v2alpha2.PodGroup:
		id := model.NewJobID(o.Namespace, o.Name)
		// As for pods: a late delete of a recreated PodGroup spares its successor.
		if je := s.jobs[id]; je != nil && (je.group != nil || je.otherPool) && (o.UID == "" || o.UID == je.groupUID()) {
			s.removeGroup(je)
		}
	case *v2.Queue:
		delete(s.queues, o.Name)
	case *schedulingv1.PriorityClass:
		delete(s.priorities, o.Name)
	case *v1alpha1.Topology:
		delete(s.topologies, o.Name)
	default:
		return
	}
	s.changed()
}

// replace makes the store hold exactly the listed objects, keeping what it converted of
// those that did not change.
func (s *Store) replace(o *objects) {
	s.mu.Lock()
	defer s.mu.Unlock()
	nodes := make(map[string]bool, len(o.nodes.Items))
	for i := range o.nodes.Items {
		s.upsertNode(&o.nodes.Items[i])
		nodes[o.nodes.Items[i].Name] = true
	}
	groups := make(map[model.JobID]bool, len(o.groups.Items))
	for i := range o.groups.Items {
		s.upsertGroup(&o.groups.Items[i])
		groups[model.NewJobID(o.groups.Items[i].Namespace, o.groups.Items[i].Name)] = true
	}
	pods := make(map[string]bool, len(o.pods.Items))
	for i := range o.pods.Items {
		s.upsertPod(&o.pods.Items[i])
		pods[objectKey(o.pods.Items[i].Namespace, o.pods.Items[i].Name)] = true
	}
	clear(s.queues)
	for i := range o.queues.Items {
		s.upsertQueue(&o.queues.Items[i])
	}
	clear(s.priorities)
	for _, pc := range o.priority.Items {
		s.priorities[pc.Name] = pc.Value
	}
	clear(s.topologies)
	for i := range o.topologies.Items {
		s.topologies[o.topologies.Items[i].Name] = topologyOf(&o.topologies.Items[i])
	}
	for name := range s.nodes {
		if !nodes[name] {
			s.removeNode(name)
		}
	}
	for key := range s.pods {
		if !pods[key] {
			s.removePod(key)
		}
	}
	for id, je := range s.jobs {
		if !groups[id] {
			s.removeGroup(je)
		}
	}
}

func objectKey(namespace, name string) string { return namespace + "/" + name }

// nodeEntry is a node as every snapshot starts it: no pods, nothing used.
type nodeEntry struct {
	info    model.NodeInfo
	problem *Problem
}

// upsertNode records a node and says whether what it offers changed: it is new, or its
// labels, taints, schedulability or allocatable resources differ (a status heartbeat changes
// none of them).
func (s *Store) upsertNode(n *v1.Node) bool {
	if !s.pool.Includes(n.Labels) {
		return s.removeNode(n.Name) // it may have just been moved to another pool
	}
	e := &nodeEntry{info: model.NodeInfo{
		Name: n.Name, Labels: n.Labels, Unschedulable: n.Spec.Unschedulable, Taints: n.Spec.Taints,
		Allocatable: model.ResourcesFromList(n.Status.Allocatable), GPUMemoryMiB: model.GPUMemoryMiB(n.Labels),
	}}
	if e.info.Allocatable.HasNegative() {
		// No kubelet reports this; if one did, the node offers nothing of the resource
		// rather than a debt the accounting would turn into room elsewhere.
		e.problem = &Problem{Object: n, Reason: "InvalidAllocatable",
			Message: fmt.Sprintf("node %s reports a negative allocatable amount (%s); counted as none", n.Name, e.info.Allocatable)}
		e.info.Allocatable = e.info.Allocatable.AtLeastZero()
	}
	if old := s.nodes[n.Name]; old != nil {
		same := old.info.Unschedulable == e.info.Unschedulable && old.info.Allocatable.Equal(e.info.Allocatable) &&
			maps.Equal(old.info.Labels, e.info.Labels) && equality.Semantic.DeepEqual(old.info.Taints, e.info.Taints)
		*old = *e // in place: the sorted order keeps pointing at it
		return !same
	}
	s.nodes[n.Name] = e
	s.nodeOrder = nil
	return true
}

// removeNode forgets a node and says whether it knew it.
func (s *Store) removeNode(name string) bool {
	if _, ok := s.nodes[name]; !ok {
		return false
	}
	delete(s.nodes, name)
	s.nodeOrder = nil
	return true
}

// removeGroup forgets a job's PodGroup; its pods, if any, stay, reported as orphans.
func (s *Store) removeGroup(je *jobEntry) {
	je.group, je.otherPool, je.otherPoolUID = nil, false, ""
	s.dropIfEmpty(je)
}

// queueEntry is a Queue converted, with the generation it had, to tell a spec change from a
// status write.
type queueEntry struct {
	info       *model.QueueInfo
	generation int64
	// problems are those of its annotations, told every snapshot as a job's are.
	problems []Problem
}

// upsertQueue records a queue and says whether its spec may have changed: it is new, left or
// joined the pool, or its generation moved (the API server moves it on spec changes only).
func (s *Store) upsertQueue(q *v2.Queue) bool {
	old, known := s.queues[q.Name]
	if !s.pool.Includes(q.Labels) {
		delete(s.queues, q.Name)
		return known
	}
	info, problems := queueInfo(q)
	s.queues[q.Name] = queueEntry{info: info, generation: q.Generation, problems: problems}
	// Annotations do not move the generation: a changed escalation setting is a change too.
	return !known || old.generation != q.Generation || !sameEscalation(old.info, info)
}

// groupEntry is a PodGroup converted, less what depends on other objects (its priority).
type groupEntry struct {
	uid            types.UID
	generation     int64 // moves on spec changes only
	job            model.JobInfo
	priorityClass  string
	preemptibility v2alpha2.Preemptibility
	problems       []Problem
	// delaySet: the PodGroup gave the job its preemption delay (spec or annotation, even a
	// bad one), so its pods' annotations are not read.
	delaySet bool
}

// upsertGroup records a PodGroup and says whether what the scheduler is asked to do may have
// changed: the job is new, moved in or out of the pool, or its spec changed (its generation
// moved). Its status and annotations, which the scheduler writes itself, are not such a change.
func (s *Store) upsertGroup(pg *v2alpha2.PodGroup) bool {
	if !s.pool.Includes(pg.Labels) {
		// Another scheduler's job: its pods are neither scheduled nor orphans here.
		je := s.job(model.NewJobID(pg.Namespace, pg.Name))
		wasOurs := je.group != nil
		je.group, je.otherPool, je.otherPoolUID = nil, true, pg.UID
		return wasOurs
	}
	g := &groupEntry{
		job: model.JobInfo{
			ID: model.NewJobID(pg.Namespace, pg.Name), Namespace: pg.Namespace, Name: pg.Name,
			Queue:             pg.Spec.Queue,
			CreationTime:      pg.CreationTimestamp.Time,
			MarkUnschedulable: pg.Spec.MarkUnschedulable == nil || *pg.Spec.MarkUnschedulable,
		},
		priorityClass: pg.Spec.PriorityClassName, preemptibility: pg.Spec.Preemptibility, uid: pg.UID,
		generation: pg.Generation,
	}
	g.job.MinMember, g.job.MinSubGroup, g.job.SubGroups = JobMinimum(&pg.Spec)
	g.job.Topology = TopologyConstraint(pg.Spec.TopologyConstraint)
	stamp, err := scheduling.ParseStartTime(pg.Annotations)
	if err != nil {
		// The job counts as unstamped: its pods' start still protects it.
		g.problems = append(g.problems, Problem{Object: pg, Reason: "InvalidStartTimestamp", Message: err.Error()})
	}
	g.job.LastStartTimestamp = stamp
	evicted, err := scheduling.ParseEvictionTime(pg.Annotations)
	if err != nil {
		// The preemption delay then counts from the job's creation.
		g.problems = append(g.problems, Problem{Object: pg, Reason: "InvalidEvictionTimestamp", Message: err.Error()})
	}
	g.job.LastEvictionTimestamp = evicted
	checkpoint, err := scheduling.ParseCheckpointTime(pg.Annotations)
	if err != nil {
		// The job is ranked among victims by its start, as one that never saved its work.
		g.problems = append(g.problems, Problem{Object: pg, Reason: "InvalidCheckpointTimestamp", Message: err.Error()})
	}
	g.job.LastCheckpoint = checkpoint
	if c := pg.Status.Evictions; c != nil {
		g.job.Evictions = model.EvictionCount{Preempt: c.Preempt, Reclaim: c.Reclaim}
	}
	if pg.Spec.PreemptionDelay != nil {
		g.job.PreemptionDelay, g.delaySet = pg.Spec.PreemptionDelay.Duration, true // the CRD refuses a negative one
	} else if value, ok := pg.Annotations[scheduling.PreemptionDelayAnnotation]; ok {
		g.delaySet = true
		if p := setPreemptionDelay(&g.job, value); p != nil {
			p.Object = pg
			g.problems = append(g.problems, *p)
		}
	}
	if pg.Spec.StalenessGracePeriod != nil {
		d := pg.Spec.StalenessGracePeriod.Duration
		g.job.StalenessGracePeriod = &d
	} else if d, problem := stalenessAnnotation(pg); problem != nil {
		g.problems = append(g.problems, *problem) // the job gets the configuration's default
	} else {
		g.job.StalenessGracePeriod = d
	}
	g.job.OwnPreemptMinRuntime = g.ownMinRuntime(pg, scheduling.PreemptMinRuntimeAnnotation)
	g.job.OwnReclaimMinRuntime = g.ownMinRuntime(pg, scheduling.ReclaimMinRuntimeAnnotation)
	g.job.ShownProtection = model.ShownProtection(pg.Status.MinRuntime)
	je := s.job(g.job.ID)
	old := je.group
	je.group, je.otherPool, je.otherPoolUID = g, false, ""
	return old == nil || old.uid != g.uid || old.generation != g.generation
}

// job returns the entry of a job, creating it.
func (s *Store) job(id model.JobID) *jobEntry {
	je := s.jobs[id]
	if je == nil {
		je = &jobEntry{id: id}
		s.jobs[id] = je
		if s.jobOrder != nil { // kept sorted as jobs come and go: they do so every few cycles
			i, _ := slices.BinarySearchFunc(s.jobOrder, id, compareJobEntry)
			s.jobOrder = slices.Insert(s.jobOrder, i, je)
		}
	}
	return je
}

func compareJobEntry(e *jobEntry, id model.JobID) int {
	return strings.Compare(string(e.id), string(id))
}

// dropIfEmpty forgets a job that has neither a PodGroup nor pods.
func (s *Store) dropIfEmpty(je *jobEntry) {
	if je.group == nil && !je.otherPool && len(je.pods) == 0 {
		delete(s.jobs, je.id)
		if i, found := slices.BinarySearchFunc(s.jobOrder, je.id, compareJobEntry); found {
			s.jobOrder = slices.Delete(s.jobOrder, i, i+1)
		}
	}
}

// jobEntry is a job's PodGroup (nil while it does not exist or belongs to another pool)
// and its pods by name.
type jobEntry struct {
	id    model.JobID
	group *groupEntry
	// otherPool is set while the job's PodGroup belongs to another node pool, whose UID is
	// otherPoolUID.
	otherPool    bool
	otherPoolUID types.UID
	pods         []*podEntry
}

// groupUID is the UID of the job's PodGroup, of this pool or another.
func (je *jobEntry) groupUID() types.UID {
	if je.group != nil {
		return je.group.uid
	}
	return je.otherPoolUID
}

// podEntry is what a snapshot reads of a pod, taken when the pod changed.
type podEntry struct {
	obj  *v1.Pod
	key  string
	uid  types.UID
	name string
	// job is the job naming the pod, for pods of this scheduler with a PodGroup annotation;
	// groupName is that annotation.
	job       model.JobID
	groupName string
	spec      cachedSpec
	// terminal pods (succeeded or failed) hold nothing and are skipped.
	terminal, deleting, gated, running bool
	nodeName, nominated                string
	// promisedAt is when the nominated node was promised, as the pod's Promised condition
	// says (zero without one).
	promisedAt time.Time
	evictedFor model.JobID
	moved      bool // evicted by consolidation (model.PodInfo.Moved)
	subGroup   string
	// preemptionDelay is the pod's preemption-delay annotation, if it has one.
	preemptionDelay    string
	hasPreemptionDelay bool
	startTime          *time.Time
	creationTime       time.Time
	// failedAt is when a failed pod stopped (zero for other pods): its job may be a gang
	// left below its minimum since then (see model.JobInfo.LastPodFailure).
	failedAt time.Time
	// succeeded: the pod finished successfully.
	succeeded bool
	// staleGrace is the pod's staleness-grace-period annotation, staleProblem what is
	// wrong with it.
	staleGrace   *time.Duration
	staleProblem *Problem
	// shareProblem is what is wrong with the pod's GPU-share request, nil when nothing is:
	// the pod's job is then refused (JobInfo.Refusal).
	shareProblem *Problem
	// share is the pod's GPU-share request (nil without one), gpuGroups the devices its
	// labels say its shares are on.
	share     *model.GPUShare
	gpuGroups []string
}

// upsertPod records a pod and says whether it may let a job move: it newly waits to be placed
// (created, or its scheduling gates lifted), or it newly finished, freeing what it held.
func (s *Store) upsertPod(pod *v1.Pod) bool {
	key := objectKey(pod.Namespace, pod.Name)
	old := s.pods[key]
	e := &podEntry{obj: pod, key: key, uid: pod.UID, name: pod.Name,
		terminal: pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed}
	if pod.Status.Phase == v1.PodFailed {
		e.failedAt = failedAt(pod)
	}
	e.succeeded = pod.Status.Phase == v1.PodSucceeded
	e.staleGrace, e.staleProblem = stalenessAnnotation(pod)
	if !e.terminal {
		e.spec = podSpec(pod, old)
		// Read on every version, not with the spec: annotations change without a new generation.
		share, err := model.ParseGPUShare(pod)
		if err != nil {
			e.shareProblem = &Problem{Object: pod, Reason: model.ReasonInvalidGPUShare,
				Message: err.Error() + "; the pod is not scheduled until it asks for a share upstream KAI accepts"}
		}
		e.share, e.gpuGroups = share, model.GPUGroupsOf(pod)
		e.deleting, e.gated, e.running = pod.DeletionTimestamp != nil, len(pod.Spec.SchedulingGates) > 0, pod.Status.Phase == v1.PodRunning
		e.nodeName, e.nominated = pod.Spec.NodeName, pod.Status.NominatedNodeName
		e.evictedFor, e.moved = evictionPreemptor(pod)
		e.promisedAt = promisedAt(pod)
		e.subGroup, e.creationTime = pod.Labels[scheduling.SubGroupLabel], pod.CreationTimestamp.Time
		e.preemptionDelay, e.hasPreemptionDelay = pod.Annotations[scheduling.PreemptionDelayAnnotation]
		if pod.Status.StartTime != nil {
			t := pod.Status.StartTime.Time
			e.startTime = &t
		}
	}
	if pod.Spec.SchedulerName == s.schedulerName {
		if name := pod.Annotations[scheduling.PodGroupNameAnnotation]; name != "" {
			e.job, e.groupName = model.NewJobID(pod.Namespace, name), name
		}
	}
	if old != nil {
		s.removePod(key)
	}
	s.pods[key] = e
	if e.uid != "" {
		s.byUID[e.uid] = e
	}
	newlyWaiting := e.waitsToBePlaced() && (old == nil || old.uid != e.uid || !old.waitsToBePlaced())
	newlyFinished := e.terminal && (old == nil || !old.terminal)
	if e.job == "" {
		s.foreign[key] = e
		return newlyFinished
	}
	je := s.job(e.job)
	i, _ := slices.BinarySearchFunc(je.pods, e.name, func(p *podEntry, name string) int { return strings.Compare(p.name, name) })
	je.pods = slices.Insert(je.pods, i, e)
	return newlyWaiting || newlyFinished
}

// waitsToBePlaced: a pod of this scheduler's job, on no node, neither finished, going nor
// held back by a scheduling gate.
func (e *podEntry) waitsToBePlaced() bool {
	return e.job != "" && e.nodeName == "" && !e.terminal && !e.deleting && !e.gated
}

func (s *Store) removePod(key string) {
	e := s.pods[key]
	if e == nil {
		return
	}
	delete(s.pods, key)
	if s.byUID[e.uid] == e {
		delete(s.byUID, e.uid)
	}
	if e.job == "" {
		delete(s.foreign, key)
		return
	}
	je := s.jobs[e.job]
	je.pods = slices.DeleteFunc(je.pods, func(p *podEntry) bool { return p == e })
	s.dropIfEmpty(je)
}

type cachedSpec struct {
	// generation, or resourceVersion where the API server keeps no generation, say which
	// version of the pod the entry was read from.
	generation      int64
	resourceVersion string
	// request is what the pod asks of a node (containers, init containers, overhead, its
	// pod slot); placement where it may go; err why its placement cannot be read.
	request   model.Resources
	placement *model.Placement
	err       error
	// negative is set for a request with a negative amount: such a pod is never placed.
	negative bool
}

// podSpec reads what a pod asks of a node, reusing what was read of the same pod's earlier
// version when its spec cannot have changed: summing containers and parsing affinities are
// the most expensive part of converting a pod.
func podSpec(pod *v1.Pod, old *podEntry) cachedSpec {
	// API servers before Kubernetes 1.33 leave a pod's generation at 0 whatever changes
	// (KEP-5067); there, any new resource version may carry new tolerations or selectors.
	version := pod.ResourceVersion
	if pod.Generation != 0 {
		version = ""
	}
	if old != nil && !old.terminal && pod.UID != "" && old.uid == pod.UID &&
		old.spec.generation == pod.Generation && old.spec.resourceVersion == version {
		return old.spec
	}
	c := cachedSpec{generation: pod.Generation, resourceVersion: version,
		request: model.PodRequest(resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}))}
	c.placement, c.err = model.NewPlacement(&pod.Spec)
	if c.request.HasNegative() {
		// The API server refuses negative requests; one that got through would make room out
		// of nothing. It holds nothing and is given nothing.
		c.err = fmt.Errorf("requests a negative amount (%s); it is not scheduled", c.request)
		c.request, c.negative = c.request.AtLeastZero(), true
	}
	return c
}

// evictionPreemptor reads, from the DisruptionTarget condition the scheduler wrote when it
// evicted the pod, which job the eviction made room for (empty for any other deletion), and
// whether it moved the pod (consolidation).
func evictionPreemptor(pod *v1.Pod) (model.JobID, bool) {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.DisruptionTarget && c.Status == v1.ConditionTrue {
			if action, preemptor, ok := scheduling.ParseEvictionMessage(c.Message); ok {
				return model.JobID(preemptor), model.ActionType(action).Moves()
			}
		}
	}
	return "", false
}

// promisedAt is when the pod was promised its nominated node: its Promised condition's last
// transition, zero without one (a promise a scheduler without it made, kept before the
// others).
func promisedAt(pod *v1.Pod) time.Time {
	for _, c := range pod.Status.Conditions {
		if c.Type == scheduling.PromisedCondition && c.Status == v1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// setPreemptionDelay gives the job the delay an annotation says; a bad value is a problem
// (whose Object the caller sets), told as an event on the PodGroup.
func setPreemptionDelay(job *model.JobInfo, value string) *Problem {
	if err := job.SetPreemptionDelayAnnotation(value); err != nil {
		return &Problem{Reason: model.ReasonInvalidPreemptionDelay, Message: err.Error()}
	}
	return nil
}

// ownMinRuntime reads the min-runtime a PodGroup's annotation key asks for its job: nil
// without one. A value that is not a Go duration, or a negative one, is a problem told as an
// event, and the job keeps the min-runtime its queues give it (nil).
func (g *groupEntry) ownMinRuntime(pg *v2alpha2.PodGroup, key string) *time.Duration {
	value, ok := pg.Annotations[key]
	if !ok {
		return nil
	}
	d, err := scheduling.ParseDurationAnnotation(key, value)
	if err != nil {
		g.problems = append(g.problems, Problem{Object: pg, Reason: model.ReasonInvalidMinRuntimeAnnotation,
			Message: err.Error() + "; ignored: the min-runtime its queues give the job applies"})
		return nil
	}
	return &d
}

// stalenessAnnotation reads an object's staleness-grace-period annotation: nil without one; a
// Problem naming the value when it is not a Go duration (upstream's format), the job then
// getting the configuration's default.
func stalenessAnnotation(obj client.Object) (*time.Duration, *Problem) {
	value, ok := obj.GetAnnotations()[scheduling.StalenessGracePeriodAnnotation]
	if !ok {
		return nil, nil
	}
	d, err := scheduling.ParseSignedDurationAnnotation(scheduling.StalenessGracePeriodAnnotation, value)
	if err != nil {
		return nil, &Problem{Object: obj, Reason: "InvalidStalenessGracePeriod",
			Message: err.Error() + "; the scheduler's default grace period applies"}
	}
	return &d, nil
}

// failedAt is when a failed pod stopped, as durable as the pod object: the latest end of its
// containers, else when it stopped being ready, else when it was created (a pod failed before
// any container ran, at no later time the object tells).
func failedAt(pod *v1.Pod) time.Time {
	var at time.Time
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.FinishedAt.After(at) {
			at = t.FinishedAt.Time
		}
	}
	if at.IsZero() {
		for _, c := range pod.Status.Conditions {
			if c.Type == v1.PodReady && c.LastTransitionTime.After(at) {
				at = c.LastTransitionTime.Time
			}
		}
	}
	if at.IsZero() {
		at = pod.CreationTimestamp.Time
	}
	return at
}

// JobMinimum reads a PodGroup's gang as the scheduler counts it (see model.MinimumGuard): its
// pod minimum, its sub-group minimum and its sub-groups, sorted by name and made a tree. The
// simulator judges a job's progress by the same reading.
func JobMinimum(spec *v2alpha2.PodGroupSpec) (minMember int32, minSubGroup *int32, groups []model.SubGroupInfo) {
	for _, sg := range spec.SubGroups {
		groups = append(groups, model.SubGroupInfo{Name: sg.Name, Parent: ptr.Deref(sg.Parent, ""),
			MinMember: model.MinMemberOf(sg.MinMember, sg.MinSubGroup), MinSubGroup: sg.MinSubGroup,
			Topology: TopologyConstraint(sg.TopologyConstraint)})
	}
	slices.SortFunc(groups, func(a, b model.SubGroupInfo) int { return strings.Compare(a.Name, b.Name) })
	model.UntangleSubGroups(groups)
	return model.MinMemberOf(spec.MinMember, spec.MinSubGroup), spec.MinSubGroup, groups
}

// topologyOf reads a Topology object.
func topologyOf(t *v1alpha1.Topology) *model.Topology {
	levels := make([]model.TopologyLevel, len(t.Spec.Levels))
	for i, l := range t.Spec.Levels {
		levels[i] = model.TopologyLevel{NodeLabel: l.NodeLabel, Alias: l.Alias}
	}
	return &model.Topology{Name: t.Name, Levels: levels}
}

// TopologyConstraint reads a PodGroup's (or sub-group's) topology constraint; nil when it asks
// nothing.
func TopologyConstraint(c *v2alpha2.TopologyConstraint) *model.TopologyConstraint {
	if c == nil || (c.Topology == "" && c.RequiredTopologyLevel == "" && c.PreferredTopologyLevel == "") {
		return nil
	}
	return &model.TopologyConstraint{Topology: c.Topology, Required: c.RequiredTopologyLevel, Preferred: c.PreferredTopologyLevel}
}

// sameEscalation reports whether two versions of a queue set the same escalation.
func sameEscalation(a, b *model.QueueInfo) bool {
	return ptr.Equal(a.EscalationFactor, b.EscalationFactor) && ptr.Equal(a.EscalationCeiling, b.EscalationCeiling)
}
