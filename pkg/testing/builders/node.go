package builders

import (
	"strconv"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeWrapper builds a v1.Node.
type NodeWrapper struct {
	v1.Node
	meta[*NodeWrapper]
}

// MakeNode is a node that offers nothing until told (its allocatable is empty).
func MakeNode(name string) *NodeWrapper {
	n := &NodeWrapper{Node: v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}}
	n.meta = meta[*NodeWrapper]{n, &n.ObjectMeta}
	return n
}

// Obj is the node built.
func (n *NodeWrapper) Obj() *v1.Node { return &n.Node }

// GPUs offers n GPUs.
func (n *NodeWrapper) GPUs(count int64) *NodeWrapper {
	return n.Allocatable(gpuResource, strconv.FormatInt(count, 10))
}

// MaxPods offers room for count pods.
func (n *NodeWrapper) MaxPods(count int64) *NodeWrapper {
	return n.Allocatable(v1.ResourcePods, strconv.FormatInt(count, 10))
}

// Allocatable offers a quantity of a resource ("64", "512Gi", "-1").
func (n *NodeWrapper) Allocatable(name v1.ResourceName, quantity string) *NodeWrapper {
	n.Status.Allocatable = setQuantity(n.Status.Allocatable, name, quantity)
	return n
}

// Taint adds a taint.
func (n *NodeWrapper) Taint(t v1.Taint) *NodeWrapper {
	n.Spec.Taints = append(n.Spec.Taints, t)
	return n
}
