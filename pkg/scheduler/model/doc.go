// Package model is the scheduler's in-memory model of one scheduling cycle: nodes, pods (tasks),
// pod groups (jobs) and the queue tree, built from a snapshot of the cluster. It knows nothing
// about Kubernetes clients, so tests, the simulator and the informer cache can all fill it.
// It knows the API types only where the model is what a status shows (a job's min-runtime
// Protection and the PodGroup status that shows it, whose format is v2alpha2's), and holds
// no rules over the model that a package of their own owns (kube-scheduler's placement
// rules: package placement).
//
// Everything here is deterministic: collections that decisions iterate over are sorted slices;
// maps are only used for lookups.
package model
