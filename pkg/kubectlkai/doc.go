// Package kubectlkai is the kubectl-kai plugin's command line: it parses `kubectl kai`
// arguments, connects to the cluster of the kubeconfig, and runs the subcommand (explain)
// on package explain. cmd/kubectl-kai only wires it to the process.
package kubectlkai
