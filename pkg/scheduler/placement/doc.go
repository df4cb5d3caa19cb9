// Package placement owns kube-scheduler's placement rules, as this scheduler applies them:
// the filters that refuse a node (cordoned, untolerated NoSchedule and NoExecute taints, node
// selector and required node affinity, host ports), the preferences that rank nodes
// (preferred node affinity, PreferNoSchedule taints), and kube-scheduler's words for each
// refusal and for a node short of a resource, so that a pending pod's message reads as users
// know it from `kubectl describe pod`.
//
// What a pod asks of nodes is the model's (api.Placement, parsed once per pod spec); what a
// node offers is api.NodeInfo. The framework applies the filters to every placement, so no
// configuration can turn them off; the predicates plugin scores the preferences. Every check
// runs for every pod on every node, so none allocates.
package placement
