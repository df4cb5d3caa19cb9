package model

import (
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// Placement is what a pod asks of a node beyond resources, as kube-scheduler's filters and
// scores (package placement) read it: node selector and node affinity, tolerations and host ports. It is parsed
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

// HostPort is a port a container binds on its node (which ports conflict is kube-scheduler's
// NodePorts rule: placement.PortsConflict).
type HostPort struct {
	Protocol v1.Protocol
	IP       string
	Port     int32
}

// AnyIP is the address of a host port whose spec names none: every address of the node.
const AnyIP = "0.0.0.0"

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

// Invalid is why the placement's node affinity cannot be parsed (it then matches no node);
// nil when it can.
func (p *Placement) Invalid() error { return p.invalid }

// Required is the required node affinity, node selector included, as kube-scheduler's
// NodeAffinity filter matches it.
func (p *Placement) Required() *nodeaffinity.RequiredNodeAffinity { return &p.required }

// Preferred are the preferred node-affinity terms (nil when none) and the sum of their
// weights, which scales their score.
func (p *Placement) Preferred() (*nodeaffinity.PreferredSchedulingTerms, int64) {
	return p.preferred, p.preferredWeight
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
				p.IP = AnyIP
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
