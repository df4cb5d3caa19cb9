package api

import (
	"encoding/json"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// The reasons kube-scheduler's filters give for refusing a node, word for word, so that a
// pending job's message reads as users know it from `kubectl describe pod`.
var (
	ErrNodeUnschedulable = errors.New("node(s) were unschedulable")
	ErrNodeAffinity      = errors.New("node(s) didn't match Pod's node affinity/selector")
	ErrHostPorts         = errors.New("node(s) didn't have free ports for the requested pod ports")
)

// TooManyPods is kube-scheduler's reason for a node whose "pods" allocatable is used up.
const TooManyPods = "Too many pods"

// InsufficientReason is kube-scheduler's reason for a node that lacks a resource. It runs
// for every refused node of every search, so the fixed resources' reasons are built once;
// only an extended resource's reason is built when needed.
func InsufficientReason(name v1.ResourceName) string {
	if i := denseIndex(name); i >= 0 {
		return insufficientFixed[i]
	}
	return "Insufficient " + string(name)
}

var insufficientFixed = func() (reasons [numDense]string) {
	for i, name := range kubeNames {
		reasons[i] = "Insufficient " + string(name)
	}
	reasons[Pods] = TooManyPods
	return reasons
}()

// Placement is what a pod asks of a node beyond resources, as kube-scheduler's filters and
// scores read it: node selector and node affinity, tolerations and host ports. It is parsed
// once per pod spec; a pod that asks nothing has none (nil), and every check of it is then
// a nil test.
type Placement struct {
	NodeSelector map[string]string
	Affinity     *v1.NodeAffinity
	Tolerations  []v1.Toleration
	HostPorts    []HostPort

	required  nodeaffinity.RequiredNodeAffinity
	preferred *nodeaffinity.PreferredSchedulingTerms
	// preferredWeight sums the weights of the preferred terms, to scale their score.
	preferredWeight int64
	// invalid is set when the affinity cannot be parsed: no node matches it.
	invalid error
	key     string
}

// HostPort is a port a container binds on its node. Two pods cannot bind the same protocol
// and port on overlapping addresses (0.0.0.0 overlaps every address).
type HostPort struct {
	Protocol v1.Protocol
	IP       string
	Port     int32
}

func (p HostPort) conflicts(o HostPort) bool {
	return p.Port == o.Port && p.Protocol == o.Protocol && (p.IP == o.IP || p.IP == anyIP || o.IP == anyIP)
}

const anyIP = "0.0.0.0"

// NewPlacement reads what spec asks of nodes; nil when it asks nothing. An affinity that
// cannot be parsed (which the API server would have refused) is returned as an error, and
// the placement then matches no node, so the pod waits with that error as its reason.
func NewPlacement(spec *v1.PodSpec) (*Placement, error) {
	var affinity *v1.NodeAffinity
	if spec.Affinity != nil {
		affinity = spec.Affinity.NodeAffinity
	}
	ports := hostPorts(spec)
	if len(spec.NodeSelector) == 0 && affinity == nil && len(spec.Tolerations) == 0 && len(ports) == 0 {
		return nil, nil
	}
	p := &Placement{NodeSelector: spec.NodeSelector, Affinity: affinity, Tolerations: spec.Tolerations, HostPorts: ports}
	p.required = nodeaffinity.NewRequiredNodeAffinity(spec.NodeSelector, spec.Affinity)
	if affinity != nil {
		if required := affinity.RequiredDuringSchedulingIgnoredDuringExecution; required != nil {
			if _, err := nodeaffinity.NewNodeSelector(required); err != nil {
				p.invalid = fmt.Errorf("required node affinity cannot be parsed: %w", err)
			}
		}
		if terms := affinity.PreferredDuringSchedulingIgnoredDuringExecution; len(terms) > 0 {
			preferred, err := nodeaffinity.NewPreferredSchedulingTerms(terms)
			if err != nil && p.invalid == nil {
				p.invalid = fmt.Errorf("preferred node affinity cannot be parsed: %w", err)
			}
			p.preferred = preferred
			for _, t := range terms {
				p.preferredWeight += int64(t.Weight)
			}
		}
	}
	// The key describes the placement canonically (JSON sorts map keys), so that pods asking
	// the same of nodes are recognised as one shape.
	key, err := json.Marshal(struct {
		S map[string]string `json:"s,omitempty"`
		A *v1.NodeAffinity  `json:"a,omitempty"`
		T []v1.Toleration   `json:"t,omitempty"`
		P []HostPort        `json:"p,omitempty"`
	}{spec.NodeSelector, affinity, spec.Tolerations, ports})
	if err != nil {
		return nil, fmt.Errorf("describing the pod's placement: %w", err)
	}
	p.key = string(key)
	return p, p.invalid
}

// Key describes the placement canonically; "" for none.
func (p *Placement) Key() string {
	if p == nil {
		return ""
	}
	return p.key
}

// hostPorts lists the host ports of the pod's containers and of its sidecars (restartable
// init containers), which run beside them; TCP and 0.0.0.0 where the spec leaves them out.
func hostPorts(spec *v1.PodSpec) []HostPort {
	var ports []HostPort
	add := func(c *v1.Container) {
		for _, cp := range c.Ports {
			if cp.HostPort <= 0 {
				continue
			}
			p := HostPort{Protocol: cp.Protocol, IP: cp.HostIP, Port: cp.HostPort}
			if p.Protocol == "" {
				p.Protocol = v1.ProtocolTCP
			}
			if p.IP == "" {
				p.IP = anyIP
			}
			ports = append(ports, p)
		}
	}
	for i := range spec.InitContainers {
		if c := &spec.InitContainers[i]; c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			add(c)
		}
	}
	for i := range spec.Containers {
		add(&spec.Containers[i])
	}
	return ports
}

// unschedulableTaint is the taint kube-scheduler's NodeUnschedulable filter asks a pod to
// tolerate before it goes onto a cordoned node (DaemonSet pods do).
var unschedulableTaint = v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}

// Refusal says why kube-scheduler's filters would refuse the pod on the node, in their
// words, or nil: the node is cordoned, a NoSchedule or NoExecute taint is not tolerated, the
// node selector or required node affinity does not match, a host port is taken. Resources
// are checked apart, against what the caller counts as free. It runs for every pod on every
// node, so it allocates nothing, whatever it answers.
func Refusal(pod *PodInfo, node *NodeInfo) error {
	pl := pod.Placement
	var tolerations []v1.Toleration
	if pl != nil {
		tolerations = pl.Tolerations
	}
	if node.Unschedulable && !tolerates(tolerations, &unschedulableTaint) {
		return ErrNodeUnschedulable
	}
	for i := range node.Taints {
		t := &node.Taints[i]
		if (t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute) && !tolerates(tolerations, t) {
			return node.taintError(i)
		}
	}
	if pl == nil {
		return nil
	}
	if pl.invalid != nil {
		return pl.invalid
	}
	if ok, err := pl.required.Match(node.Object()); err != nil {
		return err
	} else if !ok {
		return ErrNodeAffinity
	}
	if len(pl.HostPorts) > 0 && node.portTaken(pod) {
		return ErrHostPorts
	}
	return nil
}

// tolerates asks the Kubernetes helper; comparison operators (Gt, Lt) are honoured, since
// the API server only stores them where its feature gate allows them.
func tolerates(tolerations []v1.Toleration, taint *v1.Taint) bool {
	return corev1helpers.TolerationsTolerateTaint(klog.Background(), tolerations, taint, true)
}

// Preference scores what the pod prefers of the node, as kube-scheduler's NodeAffinity and
// TaintToleration scores do: the share of its preferred node-affinity weight that the node
// matches (0 to 1), and how many PreferNoSchedule taints of the node it does not tolerate.
func Preference(pod *PodInfo, node *NodeInfo) (affinity float64, untolerated int) {
	pl := pod.Placement
	var tolerations []v1.Toleration
	if pl != nil {
		tolerations = pl.Tolerations
		if pl.preferred != nil && pl.preferredWeight > 0 {
			affinity = float64(pl.preferred.Score(node.Object())) / float64(pl.preferredWeight)
		}
	}
	for i := range node.Taints {
		if t := &node.Taints[i]; t.Effect == v1.TaintEffectPreferNoSchedule && !tolerates(tolerations, t) {
			untolerated++
		}
	}
	return affinity, untolerated
}

// portTaken reports whether a port of the pod is bound by another pod holding the node: a
// pod of another scheduler, or one of ours that runs, was placed, is promised the node or is
// still terminating. The pod itself may already be there, promised the node.
func (n *NodeInfo) portTaken(pod *PodInfo) bool {
	ports := pod.Placement.HostPorts
	if PortsConflict(ports, n.OtherPorts) {
		return true
	}
	for _, q := range n.Pods {
		if q != pod && q.Placement != nil && (q.Status.HoldsNodeResources() || q.Status == Pipelined) &&
			PortsConflict(ports, q.Placement.HostPorts) {
			return true
		}
	}
	return false
}

// PortsConflict reports whether two sets of host ports cannot be bound on one node.
func PortsConflict(a, b []HostPort) bool {
	for _, p := range a {
		for _, o := range b {
			if p.conflicts(o) {
				return true
			}
		}
	}
	return false
}
