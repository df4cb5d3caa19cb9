// Package v2alpha2 owns the scheduling.run.ai/v2alpha2 API: the namespaced PodGroup that
// turns a set of pods into one gang-scheduled job in a queue, and the format of what its
// status shows of min-runtime protection (minruntime.go), for every writer and reader alike.
//
// +kubebuilder:object:generate=true
// +groupName=scheduling.run.ai
package v2alpha2
