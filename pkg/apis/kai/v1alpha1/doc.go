// Package v1alpha1 owns the kai.scheduler/v1alpha1 API: the cluster-scoped Topology that
// names the node labels of a cluster's network levels (zone, block, rack, NVLink domain, host),
// widest first, so that a PodGroup's topologyConstraint can ask to run inside one domain of a
// level. It is upstream KAI-Scheduler's Topology, field for field, with its validation served
// by the API server.
//
// +kubebuilder:object:generate=true
// +groupName=kai.scheduler
package v1alpha1
