package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HostnameLabel is the one node label a Topology may name only as its last level: a host is
// the narrowest domain there is.
const HostnameLabel = "kubernetes.io/hostname"

// kubectl get's columns show the widest and the narrowest level: the API server prints the
// first value a column's JSONPath finds, so a column of every level (levels[*]) would show the
// widest alone.

// Topology names the levels of a cluster's network, widest first, each by the node label whose
// value says which domain of that level a node is in. A node lacking any level's label is
// outside the topology: a job constrained to it never runs there.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="Widest",type=string,JSONPath=`.spec.levels[0].nodeLabel`,description="Node label of the widest level"
// +kubebuilder:printcolumn:name="Narrowest",type=string,JSONPath=`.spec.levels[-1:].nodeLabel`,description="Node label of the narrowest level"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Topology struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Required, as upstream's is: a Topology without levels would name no domain at all.

	// Spec lists the levels.
	// +kubebuilder:validation:Required
	Spec TopologySpec `json:"spec,omitempty"`
}

// TopologySpec lists the levels.
type TopologySpec struct {
	// Why the rules below are as they are (a note for maintainers, kept out of the CRD's
	// description, which is the doc comment under it).
	//
	// They are upstream's, and sit on the list, as upstream's do, so that a refusal names
	// spec.levels. Those that could name a level say which (messageExpression), so that a
	// refusal of a 16-level Topology points at the mistake; message is what the API server
	// says should an expression fail (none is known to).
	//
	// The messageExpressions map the levels to strings before filtering them: the API server's
	// cost estimate of a string taken from a filtered list of objects is unbounded (it refuses
	// `self.filter(...)[0].nodeLabel` at more than 100 times its budget, Kubernetes 1.37),
	// while a filtered list of strings keeps their MaxLength.
	//
	// Cost: bounded by MaxItems (16) and the strings' MaxLength, the pairwise rules compare at
	// most 16×16 strings, well inside the API server's per-rule and per-object CEL budgets,
	// which it checks when the CRD is installed (and refuses it otherwise). test/integration/topology
	// installs it and writes the largest Topology there is.
	//
	// Aliases: a constraint names a level by node label or alias, which must resolve to one
	// level, hence unique aliases and none a node label. kai-compat.md's upstream rule is
	// "distinct from labels": an alias equal to its own level's label, which would resolve to
	// that level either way, is refused too (and so is by kai-sim's check of a Topology).
	//
	// Immutability: jobs running inside a domain were placed by these labels, which a change
	// would silently redraw. Only the labels are fixed (kai-compat.md: "label list immutable");
	// aliases are names, not placement, and may change. The rule holds on updates only (it
	// reads oldSelf).

	// Levels are the topology's levels from the widest (a zone, say) to the narrowest (a rack
	// or a host), 1 to 16. A domain of a level is a set of nodes with the same values of that
	// level's label and of every wider level's. Each level has a node label of its own; an
	// alias, if any, is unique and no level's node label; kubernetes.io/hostname may
	// only be the last level. The node labels cannot change once created; aliases can.
	//
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +kubebuilder:validation:XValidation:rule="self.all(l, self.exists_one(o, o.nodeLabel == l.nodeLabel))",message="levels must name distinct node labels",messageExpression=`'levels must name distinct node labels: "' + self.map(l, l.nodeLabel).filter(n, !self.exists_one(o, o.nodeLabel == n))[0] + '" is repeated'`
	// +kubebuilder:validation:XValidation:rule="self.all(l, !has(l.alias) || self.exists_one(o, has(o.alias) && o.alias == l.alias))",message="levels must have distinct aliases",messageExpression=`'levels must have distinct aliases: "' + self.map(l, has(l.alias), l.alias).filter(a, !self.exists_one(o, has(o.alias) && o.alias == a))[0] + '" is repeated'`
	// +kubebuilder:validation:XValidation:rule="self.all(l, !has(l.alias) || !self.exists(o, o.nodeLabel == l.alias))",message="an alias must not be another level's node label",messageExpression=`"an alias must not be another level's node label: \"" + self.map(l, has(l.alias), l.alias).filter(a, self.exists(o, o.nodeLabel == a))[0] + "\" is a node label"`
	// +kubebuilder:validation:XValidation:rule="!self.exists(l, l.nodeLabel == 'kubernetes.io/hostname') || self[size(self) - 1].nodeLabel == 'kubernetes.io/hostname'",message="kubernetes.io/hostname may only be the last level"
	// +kubebuilder:validation:XValidation:rule="self.map(l, l.nodeLabel) == oldSelf.map(l, l.nodeLabel)",message="the levels' node labels cannot change (aliases can); make a new Topology"
	Levels []TopologyLevel `json:"levels"`
}

// TopologyLevel is one level: the node label saying which domain a node is in, and a shorter
// name constraints may use instead.
type TopologyLevel struct {
	// Upstream's pattern of a label key: an optional DNS-subdomain prefix and a name. At most
	// 317 characters, the longest key Kubernetes allows (253 + "/" + 63), where upstream's
	// 316 would refuse one: accepting more than upstream keeps every upstream manifest valid.

	// NodeLabel is the node label whose value names the node's domain at this level
	// ("topology.kubernetes.io/zone").
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`
	NodeLabel string `json:"nodeLabel"`

	// Alias is another name for the level in a PodGroup's topologyConstraint ("rack").
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Alias string `json:"alias,omitempty"`
}

// TopologyList is a list of Topologies.
//
// +kubebuilder:object:root=true
type TopologyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Topology `json:"items"`
}
