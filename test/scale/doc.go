// Package scale is the scale suite: the scheduler, run as its binary with the Helm chart's
// default configuration, against a real kube-apiserver and etcd with hundreds of simulated
// GPU nodes played by KWOK, through upstream KAI-Scheduler's scale scenarios (fill, reclaim,
// large gangs, distributed jobs, unschedulable jobs) and this product's own (protected
// victims at scale, and the same across crashes; a fill and a reclaim with half the jobs GPU
// shares, the scheduler sharing GPUs on the node, the suite playing the reservation pods'
// program; a fill of rack-constrained gangs and a reclaim for one, on nodes labelled into
// racks and blocks of a Topology, each beside an unconstrained twin from 500 nodes). An observer apart from the scheduler watches every pod and PodGroup and checks,
// all along, that no node is over-committed (a shared device counted once), no device is
// shared beyond one GPU or reserved twice, no share runs without its device's reservation,
// no pod is lost, no protected job is evicted early and no start stamp or protection status
// is lost; each scenario writes its figures as JSON and the run prints them as a table.
//
// `make test` runs it at 50 nodes, asserting the invariants only; `make scale` at 500
// (NODES=1000 or 5000 possible) for the figures of docs/performance.md.
package scale
