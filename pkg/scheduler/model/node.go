package model

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeInfo is one node and the resources its pods hold.
type NodeInfo struct {
	Name   string
	Labels map[string]string
	// Unschedulable nodes (cordoned) take no new pods, unless a pod tolerates it.
	Unschedulable bool
	// Taints repel pods that do not tolerate them.
	Taints []v1.Taint
	// OtherPorts are the host ports bound by pods of other schedulers (ours carry theirs in
	// their Placement).
	OtherPorts []HostPort
	// Allocatable is what pods may use in all.
	Allocatable Resources
	// Used is held by active pods, including pods of other schedulers.
	Used Resources
	// Releasing is held by pods that are terminating; it becomes idle when they are gone.
	Releasing Resources
	// Pipelined is promised to pipelined pods: resources still being released, or already
	// idle where a preemptor's victims are gone but it is not bound yet.
	Pipelined Resources
	// Pods are the scheduler's pods on this node in name order (pods of other schedulers are
	// only counted in Used).
	Pods []*PodInfo
	// GPUMemoryMiB is the memory of each of the node's GPU devices (label
	// nvidia.com/gpu.memory); 0 when unknown, and then no share asked in memory fits here.
	GPUMemoryMiB int64
	// GPUGroups are the node's devices holding GPU shares, sorted by ID; nil when none.
	GPUGroups []GPUGroup

	// version changes whenever what the node holds changes, or the job of a running or bound
	// pod on it changes: searches keep what they computed for a node until it moves. Only
	// the snapshot moves it (Snapshot.bump), so that it can tell which nodes moved.
	version uint64
	// position is the node's index in its snapshot's Nodes; listed is 1 + the index of its
	// latest entry in the snapshot's list of moved nodes (0: none).
	position, listed int

	// object is the node as the Kubernetes helpers read it (name, labels, taints); built once,
	// when a placement check first needs it.
	object *v1.Node
}

// Position is the node's index in its snapshot's Nodes.
func (n *NodeInfo) Position() int { return n.position }

// Version changes whenever a pod joins or leaves the node or changes status on it, and when
// a pod of a job with running or bound pods on the node changes status anywhere (a job's
// state, such as having gained by eviction or being above its minimum, decides whether its
// pods here may be victims). Equal versions mean an unchanged node within a session.
func (n *NodeInfo) Version() uint64 { return n.version }

// Object is the node as the Kubernetes helpers read it, built once so that the placement
// checks, which read it for every pod, allocate nothing after the first.
func (n *NodeInfo) Object() *v1.Node {
	if n.object == nil {
		n.object = &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels},
			Spec:       v1.NodeSpec{Unschedulable: n.Unschedulable, Taints: n.Taints},
		}
	}
	return n.object
}

// Idle is what a pod can be given now.
func (n *NodeInfo) Idle() Resources {
	return n.Allocatable.Sub(n.Used).Sub(n.Releasing)
}

// Bindable is what a pod can be bound to now without touching a promise: idle now, less
// everything promised to pipelined pods. Promises outlive a cycle (they are kept as the pods'
// nominated node) and take idle resources first, whichever pods' release freed them, so that
// a preemptor binds as soon as its own victims are gone: binding into idle resources a
// promise counts on would hand a preemptor's resources to someone else — typically back to
// the victim that was evicted for it — or make it wait for other, slower victims.
func (n *NodeInfo) Bindable() Resources {
	idle := n.Idle()
	if n.Pipelined.IsZero() {
		return idle // the common case, and the only one on the hot path of a full cluster
	}
	return idle.Sub(n.promisedFromIdle(promiseOf{}))
}

// BindableToPromise is what the promise made to job at promisedAt may bind into now, its own
// pipelined pods withdrawn from the node: idle resources, less what the promises made before
// it need from them, and less what the promises made after it need beyond what is being
// released here for no promise in particular. A promise is kept first come, first served: a
// later promise placed onto resources another preemptor's victims release beyond its needs
// (a victim gang larger than the room it made) waits for them, and does not hold back an
// earlier preemptor whose own victims have gone.
func (n *NodeInfo) BindableToPromise(job JobID, promisedAt int64) Resources {
	return n.Idle().Sub(n.promisedFromIdle(promiseOf{job: job, at: promisedAt}))
}

// promiseOf is the promise asking what it may bind into (promisedFromIdle); the zero value is
// a pod promised nothing, which comes after every promise.
type promiseOf struct {
	job JobID
	at  int64 // Unix seconds (PodInfo.PromisedAt)
}

// before reports whether a promise made to job at t was made before p (the asking one): by
// time, then by job, so that promises of one moment are served in one order. Every promise
// is before a pod promised nothing.
func (p promiseOf) before(job JobID, t int64) bool {
	if p.job == "" {
		return true
	}
	if t != p.at {
		return t < p.at
	}
	return job < p.job
}

// promisedFromIdle sums what the promises on the node need from idle resources, for asker: for
// each job promised resources here, what it was promised beyond what its own victims (pods
// evicted for it) are still releasing on this node. A promise whose victims are gone claims
// idle resources; one whose victims still terminate leaves idle resources to the others, so
// each preemptor binds as soon as its own victims are gone, not someone else's. For a pod
// promised nothing every promise's need counts. For a promise kept, those made after it
// need only what the surplus being released here does not cover: releasing pods evicted for
// no preemptor, or beyond what their own preemptor was promised here (all of them, for a
// preemptor promised nothing here).
//
// It runs for every node with a promise each time a pod is tried there, which during a
// reclaim is most nodes and every pending pod: it allocates nothing for up to a node's worth
// of promises (the claims live on the stack), where a growing slice made a quarter of all
// the bytes a reclaim of 8,000 GPUs allocated.
func (n *NodeInfo) promisedFromIdle(asker promiseOf) Resources {
	type claim struct {
		job                 JobID
		promised, releasing Resources
		at                  int64 // of the promise: its pods' earliest
	}
	var onStack [8]claim
	claims := onStack[:0]
	claimOf := func(job JobID) *claim {
		i := 0
		for i < len(claims) && claims[i].job != job {
			i++
		}
		if i == len(claims) {
			claims = append(claims, claim{job: job})
		}
		return &claims[i]
	}
	var unclaimed Resources // releasing for no preemptor
	for _, p := range n.Pods {
		request := p.nodeRequest()
		switch {
		case p.Status == Pipelined:
			c := claimOf(p.Job)
			c.promised = c.promised.Add(request)
			if c.at == 0 || p.PromisedAt < c.at {
				c.at = p.PromisedAt
			}
		case p.Status == Releasing && p.EvictedFor != "":
			c := claimOf(p.EvictedFor)
			c.releasing = c.releasing.Add(request)
		case p.Status == Releasing:
			unclaimed = unclaimed.Add(request)
		}
	}
	// A device holding shares, none active, is promised and released whole: to the job of
	// its earliest promised share, by the job its releasing shares were all evicted for.
	for _, g := range n.GPUGroups {
		if g.Active > 0 {
			continue
		}
		whole := NewResources(0, 0, 1)
		if promisedTo, at := n.groupPromise(g.ID); promisedTo != "" {
			c := claimOf(promisedTo)
			c.promised = c.promised.Add(whole)
			if c.at == 0 || at < c.at {
				c.at = at
			}
		}
		switch evictedFor := n.groupRelease(g.ID); {
		case g.Releasing == 0:
		case evictedFor != "":
			c := claimOf(evictedFor)
			c.releasing = c.releasing.Add(whole)
		default:
			unclaimed = unclaimed.Add(whole)
		}
	}
	var earlier, later, surplus Resources
	surplus = unclaimed
	for _, c := range claims {
		if c.job == asker.job {
			continue // the asker's own victims, its pods withdrawn to be kept anew: its own, surplus to no one
		}
		need := c.promised.Sub(c.releasing).AtLeastZero()
		if asker.before(c.job, c.at) {
			earlier = earlier.Add(need)
		} else {
			later = later.Add(need)
		}
		surplus = surplus.Add(c.releasing.Sub(c.promised).AtLeastZero())
	}
	return earlier.Add(later.Sub(surplus).AtLeastZero())
}

// nodeRequest is what the pod takes of its node's resources counted whole: a placed share
// pod's GPUs are its devices', which its groups account (NodeInfo.accountShares).
func (p *PodInfo) nodeRequest() Resources {
	if p.IsShare() && len(p.GPUGroups) > 0 {
		return p.Request.With(GPU, 0)
	}
	return p.Request
}

// groupPromise is the job promised the group's device: the one whose pipelined share on it
// was promised first (by time, then job), and when; "" when no share on it is pipelined.
func (n *NodeInfo) groupPromise(id string) (JobID, int64) {
	var job JobID
	var at int64
	for _, p := range n.Pods {
		if p.Status != Pipelined || !slices.Contains(p.GPUGroups, id) {
			continue
		}
		if job == "" || p.PromisedAt < at || (p.PromisedAt == at && p.Job < job) {
			job, at = p.Job, p.PromisedAt
		}
	}
	return job, at
}

// groupRelease is the job every releasing share on the group was evicted for; "" when they
// were evicted for different jobs or for none.
func (n *NodeInfo) groupRelease(id string) JobID {
	var job JobID
	first := true
	for _, p := range n.Pods {
		if p.Status != Releasing || !slices.Contains(p.GPUGroups, id) {
			continue
		}
		if first {
			job, first = p.EvictedFor, false
		} else if p.EvictedFor != job {
			return ""
		}
	}
	return job
}

// FutureIdle is what a pod can be promised: idle now plus what releasing pods will free,
// less what was already promised.
func (n *NodeInfo) FutureIdle() Resources {
	return n.Allocatable.Sub(n.Used).Sub(n.Pipelined) // idle + releasing - pipelined
}

// addPod accounts for a pod placed on this node in its current status.
func (n *NodeInfo) addPod(p *PodInfo) { n.account(p, 1) }

// removePod undoes addPod for the pod's current status.
func (n *NodeInfo) removePod(p *PodInfo) { n.account(p, -1) }

// account adds (sign 1) or removes (sign -1) a pod's request from the amount its status
// holds on the node: used, releasing or promised.
func (n *NodeInfo) account(p *PodInfo, sign int64) {
	request := p.Request
	if p.IsShare() && len(p.GPUGroups) > 0 {
		// A share's GPUs are its devices': whole devices move as its groups' states do.
		n.accountShares(p, sign)
		request = request.With(GPU, 0)
	}
	var amount *Resources
	switch {
	case p.Status.IsActive():
		amount = &n.Used
	case p.Status == Releasing:
		amount = &n.Releasing
	case p.Status == Pipelined:
		amount = &n.Pipelined
	default:
		return
	}
	if sign > 0 {
		*amount = amount.Add(request)
	} else {
		*amount = amount.Sub(request)
	}
}

// Charge accounts, in its status, a pod the node holds that is not the scheduler's to place
// (another scheduler's): it is counted, not listed among Pods.
func (n *NodeInfo) Charge(p *PodInfo) { n.addPod(p) }
