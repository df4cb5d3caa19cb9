// Package testenv starts the real control plane the integration and end-to-end suites run
// against: kube-apiserver and etcd built by hack/build-control-plane.sh, driven through
// controller-runtime's envtest, with this repository's CRDs installed and, with
// StartWith(Options{WorkloadCRDs: true}), the real CRDs of the workload kinds the pod grouper
// groups (hack/workloadcrds), whose objects workloads.go makes. envtest runs no
// kubelet: StartKWOK starts KWOK (built by `make tools`) to play the nodes that CreateNode
// registers — Ready, running the pods bound to them, removing the pods deleted.
package testenv
