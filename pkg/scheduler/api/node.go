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

// FutureIdle is what a pod can be promised: idle now plus what releasing pods will free,
// less what was already promised.
func (n *NodeInfo) FutureIdle() Resources {
	return n.Idle().Add(n.Releasing).Sub(n.Pipelined)
}

// addPod accounts for a pod placed on this node in the given status.
func (n *NodeInfo) addPod(p *PodInfo) {
	switch {
	case p.Status.IsActive():
		n.Used = n.Used.Add(p.Request)
	case p.Status == Releasing:
		n.Releasing = n.Releasing.Add(p.Request)
	case p.Status == Pipelined:
		n.Pipelined = n.Pipelined.Add(p.Request)
	}
}

// removePod undoes addPod for the pod's current status.
func (n *NodeInfo) removePod(p *PodInfo) {
	switch {
	case p.Status.IsActive():
		n.Used = n.Used.Sub(p.Request)
	case p.Status == Releasing:
		n.Releasing = n.Releasing.Sub(p.Request)
	case p.Status == Pipelined:
		n.Pipelined = n.Pipelined.Sub(p.Request)
	}
}
