// Package testenv starts the real control plane the integration and end-to-end suites run
// against: kube-apiserver and etcd built by hack/build-control-plane.sh, driven through
// controller-runtime's envtest, with this repository's CRDs installed.
package testenv
