// Package topology checks the Topology CRD (kai.scheduler/v1alpha1) as users meet it, against
// a real kube-apiserver: valid topologies are stored unchanged, and every rule upstream
// states is enforced by the API server with a message that names the mistake (levels 1 to
// 16, node labels unique, kubernetes.io/hostname only last, aliases unique and no other
// level's label, the node labels immutable while aliases may change), within the API
// server's CEL cost limits. It also starts the scheduler on a cluster without the CRD, which
// must run without topologies, saying so once, and on one with it.
package topology
