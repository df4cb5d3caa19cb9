package model

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
)

// JobID identifies a job (pod group) as namespace/name.
type JobID string

// NewJobID joins a namespace and name.
func NewJobID(namespace, name string) JobID {
	return JobID(namespace + "/" + name)
}

// NamespacedName splits the ID back into the namespace and name of its PodGroup.
func (id JobID) NamespacedName() types.NamespacedName {
	namespace, name, _ := strings.Cut(string(id), "/")
	return types.NamespacedName{Namespace: namespace, Name: name}
}

// DefaultPriority is the priority of a job whose priority class is unknown.
const DefaultPriority int32 = 50

// PreemptibleBelowPriority: a job without an explicit preemptibility is preemptible iff its
// priority is below this.
const PreemptibleBelowPriority int32 = 100

// SubGroupInfo is a named part of a job's gang with its own minimum: MinMember pods labelled
// with its name, or, when MinSubGroup is set, that many of its direct children ready.
type SubGroupInfo struct {
	Name string
	// Parent names the sub-group this one is nested in; empty at the top level (and for a
	// parent that does not exist or would close a loop, so that the sub-groups form a tree).
	Parent    string
	MinMember int32
	// MinSubGroup, when set, replaces MinMember: how many direct children must be ready.
	MinSubGroup *int32
	// Topology, when set, places the sub-group's pods in one domain of its own inside its
	// parent's (or the job's).
	Topology *TopologyConstraint
}

// JobInfo is a pod group: pods scheduled together in one queue with one priority.
type JobInfo struct {
	ID        JobID
	Namespace string
	Name      string
	// Queue is the name of the job's leaf queue.
	Queue string
	// Priority orders jobs; higher runs first and may preempt lower in the same queue.
	Priority int32
	// Preemptible jobs may be evicted by reclaim and preempt; others never are and run only
	// within their queue's deserved quota.
	Preemptible bool
	// MinMember is the gang size in pods; 0 when MinSubGroup sets the gang instead.
	MinMember int32
	// MinSubGroup, when set, is the gang counted in sub-groups: how many top-level sub-groups
	// must be ready (see MinimumGuard).
	MinSubGroup *int32
	// SubGroups, sorted by name, each need their own minimum (see SubGroupInfo).
	SubGroups []SubGroupInfo
	// Topology, when set, is where in the cluster's network the job must (or would rather)
	// run: inside one domain of a level (see TopologyConstraint).
	Topology *TopologyConstraint
	// CreationTime orders jobs of equal priority: older first.
	CreationTime time.Time
	// LastStartTimestamp is when the job last went from no active pods to a placed gang; nil
	// if it never started (or the stamp was unreadable). Min-runtime protection counts from it.
	LastStartTimestamp *time.Time
	// PreemptionDelay is how long the job, while it waits, may not evict other jobs (through
	// reclaim or preempt), counted from the later of its creation and its last eviction; 0
	// for none. It comes from the PodGroup's spec, else its annotation, else its pods'.
	PreemptionDelay time.Duration
	// PreemptionDelayProblem says why a preemption-delay annotation was not used; the job
	// then has no delay, and is told so in its pending reasons. Empty when there was none.
	PreemptionDelayProblem string
	// Refusal says why the job is not scheduled at all (a pod's GPU-share request that
	// upstream refuses): it waits with this reason until the pod is fixed. Empty for most.
	Refusal string
	// LastEvictionTimestamp is when the scheduler last evicted pods of the job, as the
	// PodGroup records it; nil if never. The preemption delay re-arms from it.
	LastEvictionTimestamp *time.Time
	// LastCheckpoint is when the job last saved its work, as its PodGroup's
	// last-checkpoint-timestamp annotation says; nil without one (or unreadable). Among
	// victims otherwise equal, the one that loses least goes first.
	LastCheckpoint *time.Time
	// Evictions counts the job's runs the scheduler ended by preempt and reclaim, as its
	// PodGroup's status records them (zero when it records none).
	Evictions EvictionCount
	// OwnPreemptMinRuntime and OwnReclaimMinRuntime are the min-runtimes the job's PodGroup
	// annotations ask for (nil: none, or a bad value). They can only shorten the resolved
	// one (see minruntime.Shorten).
	OwnPreemptMinRuntime, OwnReclaimMinRuntime *time.Duration
	// ShownProtection is the min-runtime protection the PodGroup's status shows (see
	// Protection.Shown); nil when it shows none.
	ShownProtection *Protection
	// Pods are the job's pods sorted by name.
	Pods []*PodInfo
	// StalenessGracePeriod is how long the job may run below its minimum before it is
	// evicted as stale (negative: never); nil uses the scheduler configuration's default.
	StalenessGracePeriod *time.Duration
	// LastPodFailure is when the last of the job's failed pods stopped; zero if none failed.
	// It is how a restarted scheduler still knows since when a gang has been short.
	LastPodFailure time.Time
	// SucceededPods counts the job's pods that finished successfully; finished pods are not
	// in Pods. They count toward the gang of a job without sub-group minimums (a pod retried
	// after its peers succeeded completes the gang alone).
	SucceededPods int32
	// MarkUnschedulable asks for PodScheduled=False on the pods of a job left pending, which
	// is what cluster autoscalers look for.
	MarkUnschedulable bool
}

// EvictionCount is how many of a job's runs were ended by preempt and by reclaim. (When the
// last was decided, which the PodGroup's status also keeps, is the status updater's alone:
// a snapshot holds a JobInfo per job every cycle.)
type EvictionCount struct {
	Preempt, Reclaim int32
}

// Total is every counted eviction.
func (c EvictionCount) Total() int32 { return c.Preempt + c.Reclaim }

// SetPreemptionDelayAnnotation gives the job the delay a kai.scheduler/preemption-delay
// annotation's value says. A bad value leaves the job without a delay, as upstream does, but
// not silently: it is kept in PreemptionDelayProblem (the job's pending reasons tell it) and
// returned (the caller reports it as an event).
func (j *JobInfo) SetPreemptionDelayAnnotation(value string) error {
	d, err := scheduling.ParsePreemptionDelay(value)
	j.PreemptionDelay, j.PreemptionDelayProblem = d, ""
	if err != nil {
		j.PreemptionDelayProblem = err.Error()
	}
	return err
}

// PreemptionDelayEnd is when the job's preemption delay ends: PreemptionDelay after the later
// of its creation and its last eviction, so that the delay re-arms after each eviction. ok is
// false when the job has no delay.
func (j *JobInfo) PreemptionDelayEnd() (end time.Time, ok bool) {
	if j.PreemptionDelay <= 0 {
		return time.Time{}, false
	}
	from, _ := j.PreemptionDelayFrom()
	return from.Add(j.PreemptionDelay), true
}

// PreemptionDelayFrom is when the job's preemption delay counts from, and what that time is
// for people ("its creation" or "its last eviction").
func (j *JobInfo) PreemptionDelayFrom() (time.Time, string) {
	if j.LastEvictionTimestamp != nil && j.LastEvictionTimestamp.After(j.CreationTime) {
		return *j.LastEvictionTimestamp, "its last eviction"
	}
	return j.CreationTime, "its creation"
}

// AddPod adds a pod, keeping Pods sorted by name.
func (j *JobInfo) AddPod(pod *PodInfo) {
	i := sort.Search(len(j.Pods), func(i int) bool { return j.Pods[i].Name >= pod.Name })
	j.Pods = append(j.Pods, nil)
	copy(j.Pods[i+1:], j.Pods[i:])
	j.Pods[i] = pod
}

// CountActive returns how many pods hold or were given resources they keep.
func (j *JobInfo) CountActive() int32 {
	var n int32
	for _, p := range j.Pods {
		if p.Status.IsActive() {
			n++
		}
	}
	return n
}

// CountPlaced counts active and pipelined pods: the pods that have, or were promised, a node.
func (j *JobInfo) CountPlaced() int32 {
	var n int32
	for _, p := range j.Pods {
		if p.Status.IsActive() || p.Status == Pipelined {
			n++
		}
	}
	return n
}

// PendingPods returns the pods waiting for a node, in name order.
func (j *JobInfo) PendingPods() []*PodInfo {
	return j.podsIn(Pending)
}

// podsIn returns the pods in one status, in name order.
func (j *JobInfo) podsIn(status PodStatus) []*PodInfo {
	var pods []*PodInfo
	for _, p := range j.Pods {
		if p.Status == status {
			pods = append(pods, p)
		}
	}
	return pods
}

// IsGangSatisfied reports whether enough pods are placed: MinMember overall and each
// sub-group's minimum.
func (j *JobInfo) IsGangSatisfied() bool {
	if j.CountsSubGroups() {
		return j.newGangTree(placedStatus).rootReady()
	}
	if j.CountPlaced()+j.SucceededPods < j.MinMember {
		return false
	}
	for _, sg := range j.SubGroups {
		if j.CountPlacedIn(sg.Name) < sg.MinMember {
			return false
		}
	}
	return true
}

// CountPlacedIn counts the active and pipelined pods of one sub-group.
func (j *JobInfo) CountPlacedIn(subGroup string) int32 {
	var n int32
	for _, p := range j.Pods {
		if p.SubGroup == subGroup && (p.Status.IsActive() || p.Status == Pipelined) {
			n++
		}
	}
	return n
}

// IsWaiting reports whether some pod of the job waits for a node: pending, or pipelined onto
// resources still being released.
func (j *JobInfo) IsWaiting() bool {
	for _, p := range j.Pods {
		if p.Status == Pending || p.Status == Pipelined {
			return true
		}
	}
	return false
}

// PipelinedPods returns the pods promised a node they are not bound to yet (its resources
// still being released, or freed but not yet bound), in name order.
func (j *JobInfo) PipelinedPods() []*PodInfo {
	return j.podsIn(Pipelined)
}

// Surplus is how many active pods the job has above its gang size: pods it can lose one at a
// time without losing the gang.
func (j *JobInfo) Surplus() int32 {
	return max(j.CountActive()-j.GangSize(), 0)
}

// Request sums the requests of the given pods.
func Request(pods []*PodInfo) Resources {
	var total Resources
	for _, p := range pods {
		total = total.Add(p.Request)
	}
	return total
}

// GangPods returns the pending pods that would complete the job's gang, in taskOrder: first
// what each sub-group still lacks, then what the job as a whole still lacks. A job counting
// sub-groups completes the sub-groups that lack the fewest pods (see MinimumGuard).
func (j *JobInfo) GangPods(taskOrder func(l, r *PodInfo) int) ([]*PodInfo, error) {
	pending := j.PendingPods()
	slices.SortStableFunc(pending, taskOrder)
	if j.CountsSubGroups() {
		return j.newGangTree(placedStatus).gangPods(pending)
	}
	chosen := make([]*PodInfo, 0, len(pending))
	taken := make(map[*PodInfo]bool, len(pending))
	// Pods that finished their work count toward the gang: a Job's pod retried after its
	// peers succeeded is all that is left of the gang, and would otherwise wait for peers
	// that will never come again.
	placed := j.CountPlaced() + j.SucceededPods
	for _, sg := range j.SubGroups {
		lacking := sg.MinMember - j.CountPlacedIn(sg.Name)
		for _, p := range pending {
			if lacking <= 0 {
				break
			}
			if p.SubGroup == sg.Name {
				chosen, taken[p] = append(chosen, p), true
				lacking--
			}
		}
		if lacking > 0 {
			return nil, fmt.Errorf("sub-group %q needs %d more pods than it has", sg.Name, lacking)
		}
	}
	for _, p := range pending {
		if placed+int32(len(chosen)) >= j.MinMember {
			break
		}
		if !taken[p] {
			chosen = append(chosen, p)
		}
	}
	if lacking := j.MinMember - placed - int32(len(chosen)); lacking > 0 {
		return nil, fmt.Errorf("gang needs %d pods but the job has only %d", j.MinMember, placed+int32(len(chosen)))
	}
	return chosen, nil
}

// PodTimePrecision is the precision of the times a pod reports: the API keeps whole seconds,
// so a pod that started after a stamp may show a start up to a second before it.
const PodTimePrecision = time.Second

// CurrentRun is what the job's active pods say of its current run: the earliest start they
// report (known is false when none has started yet) and the earliest of their creation
// times (zero without active pods).
func (j *JobInfo) CurrentRun() (start time.Time, known bool, created time.Time) {
	for _, p := range j.Pods {
		if !p.Status.IsActive() {
			continue
		}
		if p.StartTime != nil && (!known || p.StartTime.Before(start)) {
			start, known = *p.StartTime, true
		}
		if !p.CreationTime.IsZero() && (created.IsZero() || p.CreationTime.Before(created)) {
			created = p.CreationTime
		}
	}
	return start, known, created
}

// StampOfEarlierRun reports whether the job's start stamp is older than every active pod it
// has (by more than their times' precision): the stamp of an earlier run, left because the
// restart's stamp was never written.
func (j *JobInfo) StampOfEarlierRun() bool {
	_, _, created := j.CurrentRun()
	return j.LastStartTimestamp != nil && !created.IsZero() && j.LastStartTimestamp.Before(created.Add(-PodTimePrecision))
}
