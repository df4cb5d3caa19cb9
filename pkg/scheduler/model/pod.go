package model

import "time"

// PodStatus is where a pod stands in its life as the scheduler sees it.
type PodStatus int

// Pod statuses. Allocated and Pipelined are decisions of the current session that have not
// reached the cluster yet.
const (
	// Pending pods wait for a node.
	Pending PodStatus = iota
	// Allocated pods were given idle resources on a node in this session; commit binds them.
	Allocated
	// Pipelined pods were promised resources that other pods are still releasing; they are
	// not bound until a later cycle finds the resources idle.
	Pipelined
	// Bound pods have a node but are not running yet.
	Bound
	// Running pods run on their node.
	Running
	// Releasing pods are being evicted or are terminating; they hold resources until gone.
	Releasing
	// Succeeded and Failed pods have finished and hold nothing.
	Succeeded
	Failed
)

var podStatusNames = [...]string{"Pending", "Allocated", "Pipelined", "Bound", "Running", "Releasing", "Succeeded", "Failed"}

func (s PodStatus) String() string {
	if int(s) < len(podStatusNames) {
		return podStatusNames[s]
	}
	return "Unknown"
}

// IsActive reports whether a pod in this status holds or has been given resources that it
// keeps: it counts toward its job's gang and toward the job having started.
func (s PodStatus) IsActive() bool {
	return s == Allocated || s == Bound || s == Running
}

// HoldsNodeResources reports whether the pod's request is used on its node.
func (s PodStatus) HoldsNodeResources() bool {
	return s.IsActive() || s == Releasing
}

// PodInfo is one pod (a task of a job).
type PodInfo struct {
	// Status, Request and NodeName come first: the victim search reads them for every pod
	// of every candidate, and on one cache line that scan runs markedly faster.

	// Status is where the pod stands.
	Status PodStatus
	// Request is what the pod needs on a node; for a share pod its GPUs are the shares (0.5
	// GPU for half a device), which is what its queue is charged, while on the node it takes
	// part of a device (GPUGroups).
	Request Resources
	// NodeName is the node holding the pod (for Allocated, Pipelined, Bound, Running, Releasing).
	NodeName string
	// Namespace and Name identify the pod; UID is kept for the API calls that need it.
	Namespace, Name, UID string
	// Job is the ID of the pod's job.
	Job JobID
	// SubGroup is the sub-group of the job this pod belongs to, if any.
	SubGroup string
	// EvictedFor is, for a releasing pod, the job its eviction made room for; empty when it
	// terminates for another reason. What it releases is that job's promise.
	EvictedFor JobID
	// Moved is, for a releasing pod, whether it was evicted to be placed again elsewhere
	// (consolidation): the room it will need again is not free for another move.
	Moved bool
	// Placement is what the pod asks of nodes beyond resources; nil when nothing.
	Placement *Placement
	// StartTime is when the kubelet reported the pod started, if it did.
	StartTime *time.Time
	// CreationTime is when the pod object was created (zero if unknown).
	CreationTime time.Time
	// Share is what a pod asking for shares of GPU devices asks (nil for any other pod), and
	// GPUGroups the devices its shares are on, one group ID per device, once it is placed.
	Share     *GPUShare
	GPUGroups []string
	// GPUGroupLabels are the groups the pod's labels name as read (a promise's, which stay
	// when the pod is bound elsewhere): the binder replaces them with GPUGroups.
	GPUGroupLabels []string
	// PromisedAt is, for a pipelined pod that holds a promise (its nominated node, kept across
	// cycles, made when reclaim or preempt evicted for its job), when it was promised, in Unix
	// seconds, as its kai.scheduler/Promised condition records it; 0 for a placement
	// pipelined for this cycle only, onto resources released for other reasons. Promises
	// are kept in that order (NodeInfo.BindableToPromise). Seconds, not a time.Time: every
	// pod of a snapshot carries the field.
	PromisedAt int64
}

// Key is namespace/name, unique in the cluster.
func (p *PodInfo) Key() string {
	return p.Namespace + "/" + p.Name
}
