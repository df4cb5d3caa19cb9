package api

// NodeInfo is one node and the resources its pods hold.
type NodeInfo struct {
	Name   string
	Labels map[string]string
	// Unschedulable nodes (cordoned) take no new pods.
	Unschedulable bool
	// Allocatable is what pods may use in all.
	Allocatable Resources
	// Used is held by active pods, including pods of other schedulers.
	Used Resources
	// Releasing is held by pods that are terminating; it becomes idle when they are gone.
	Releasing Resources
	// Pipelined is the part of Releasing already promised to pipelined pods.
	Pipelined Resources
	// Pods are the scheduler's pods on this node in name order (pods of other schedulers are
	// only counted in Used).
	Pods []*PodInfo
}

// Idle is what a pod can be given now.
func (n *NodeInfo) Idle() Resources {
	return n.Allocatable.Sub(n.Used).Sub(n.Releasing)
}

// Bindable is what a pod can be bound to now without breaking a promise: idle now, less the
// part of the promises to pipelined pods that the releasing pods will not cover. Promises
// outlive a cycle (they are kept as the pods' nominated node), so binding into idle
// resources that a promise counts on would hand a preemptor's resources to someone else —
// typically back to the victim that was evicted for it.
func (n *NodeInfo) Bindable() Resources {
	idle, future := n.Idle(), n.FutureIdle()
	for i := range idle {
		idle[i] = min(idle[i], future[i])
	}
	return idle
}

// FutureIdle is what a pod can be promised: idle now plus what releasing pods will free,
// less what was already promised.
func (n *NodeInfo) FutureIdle() Resources {
	return n.Idle().Add(n.Releasing).Sub(n.Pipelined)
}

// addPod accounts for a pod placed on this node in its current status.
func (n *NodeInfo) addPod(p *PodInfo) { n.account(p, 1) }

// removePod undoes addPod for the pod's current status.
func (n *NodeInfo) removePod(p *PodInfo) { n.account(p, -1) }

// account adds (sign 1) or removes (sign -1) a pod's request from the amount its status
// holds on the node: used, releasing or promised.
func (n *NodeInfo) account(p *PodInfo, sign int64) {
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
	for i := range amount {
		amount[i] += sign * p.Request[i]
	}
}
