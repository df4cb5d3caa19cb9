// Command workloadcrds gathers the CRDs of the workload kinds the pod grouper groups (Kubeflow
// training jobs and TrainJob, KubeRay, Knative Serving, JobSet, LeaderWorkerSet, the MPI
// operator's MPIJob, Kubeflow's Notebook, Argo's Workflow) into one directory, for envtest to
// install, and prints that directory's absolute path:
//
//	export WORKLOAD_CRDS=$(go run ./hack/workloadcrds)
//
// It owns two things. The pin table (pins.go): each project's Go module, its version and the
// CRD files inside it, taken as they are from the module cache (`go mod download -json`), never
// written by hand. And the copy: every CRD of those files, and of the hand-written CRDs in
// test/crds (projects whose module the Go module proxy does not serve), one CRD a file named
// after the CRD, into bin/crds/workloads/<hash>/, where the hash covers the pins and the
// hand-written files. A second run with the same pins and files prints the directory at once,
// without calling go.
package main
