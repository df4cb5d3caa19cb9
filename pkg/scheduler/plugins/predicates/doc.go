// Package predicates brings kube-scheduler's node preferences (package placement: preferred
// node affinity and PreferNoSchedule taints) into the node ordering. kube-scheduler's
// filters (taints, node affinity and selector, cordoned nodes, host ports) and resource fit
// are not here: the framework applies them to every placement (placement.Refusal), so that
// no configuration can turn them off. The plugin keeps the name KAI configurations already
// list.
package predicates
