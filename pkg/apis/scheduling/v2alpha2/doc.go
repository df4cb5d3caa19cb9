// Package v2alpha2 owns the scheduling.run.ai/v2alpha2 API: the namespaced PodGroup that
// turns a set of pods into one gang-scheduled job in a queue.
//
// +kubebuilder:object:generate=true
// +groupName=scheduling.run.ai
package v2alpha2
