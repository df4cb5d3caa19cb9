// Package memcluster is the simulated API server the scheduler of a simulation reads and
// writes: Nodes, Queues, PriorityClasses, Topologies, Pods and PodGroups held in memory,
// served as the lists the snapshot builder reads, and the writes the scheduler makes
// (binding, graceful deletion, status patches) applied as an API server applies them. Every
// change is told to the schedulers' stores, as informers would tell them, and binds,
// deletions and PodGroup statuses to the simulation, which plays the kubelet and the
// workloads' controllers and reports what the scheduler showed.
package memcluster
