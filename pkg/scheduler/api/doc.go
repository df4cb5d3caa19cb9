// Package api is the scheduler's in-memory model of one scheduling cycle: nodes, pods (tasks),
// pod groups (jobs) and the queue tree, built from a snapshot of the cluster. It knows nothing
// about Kubernetes clients, so tests, the simulator and the informer cache can all fill it.
//
// Everything here is deterministic: collections that decisions iterate over are sorted slices;
// maps are only used for lookups.
package api
