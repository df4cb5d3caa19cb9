// Package v2 owns the scheduling.run.ai/v2 API: the cluster-scoped Queue that forms the
// fair-share tree, extended with the preempt/reclaim minimum-runtime fields.
//
// +kubebuilder:object:generate=true
// +groupName=scheduling.run.ai
package v2
