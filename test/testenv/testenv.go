package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
)

// RepoRoot is the absolute path of the repository, found from this source file so that
// suites in any directory agree on it.
func RepoRoot() string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// CRDDir holds the CRD manifests that the Helm chart installs.
func CRDDir() string {
	return filepath.Join(RepoRoot(), "deployments", "kai-scheduler", "crds")
}

// WorkloadCRDDir is the directory of the workload kinds' CRDs (Kubeflow, Ray, Knative, JobSet,
// LeaderWorkerSet, MPIJob, Notebook, Argo Workflow) that hack/workloadcrds gathers, from
// WORKLOAD_CRDS, which `make test` sets.
func WorkloadCRDDir() (string, error) {
	dir := os.Getenv("WORKLOAD_CRDS")
	if dir == "" {
		return "", errors.New("WORKLOAD_CRDS is not set: run the suite with `make test`, " +
			"or export WORKLOAD_CRDS=$(go run ./hack/workloadcrds)")
	}
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("WORKLOAD_CRDS: %w: export WORKLOAD_CRDS=$(go run ./hack/workloadcrds) again", err)
	}
	return dir, nil
}

// Options say what a control plane starts with besides this repository's CRDs.
type Options struct {
	// WorkloadCRDs installs the workload kinds' CRDs too (WorkloadCRDDir), for the objects
	// of workloads.go.
	WorkloadCRDs bool
}

// Environment is a running control plane with the CRDs installed.
type Environment struct {
	env    *envtest.Environment
	Config *rest.Config
	Client client.Client
}

// Start launches etcd and kube-apiserver and waits until the CRDs are served. The binaries
// come from KUBEBUILDER_ASSETS, which `make test` sets after building them.
func Start() (*Environment, error) {
	return StartWith(Options{})
}

// StartWith is Start with options: StartWith(Options{WorkloadCRDs: true}) installs the
// workload kinds' CRDs as well as the chart's.
func StartWith(opts Options) (*Environment, error) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		return nil, errors.New("KUBEBUILDER_ASSETS is not set: run the suite with `make test`, " +
			"or export KUBEBUILDER_ASSETS=$(hack/build-control-plane.sh)")
	}
	crds := []string{CRDDir()}
	if opts.WorkloadCRDs {
		dir, err := WorkloadCRDDir()
		if err != nil {
			return nil, err
		}
		crds = append(crds, dir)
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     crds,
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w", assets, err)
	}
	scheme, err := install.Scheme()
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	return &Environment{env: env, Config: cfg, Client: c}, nil
}

// Stop shuts the control plane down and removes its data.
func (e *Environment) Stop() error {
	return e.env.Stop()
}

// WriteKubeconfig writes a kubeconfig of a cluster administrator for command-line tools
// (helm, kubectl) to path.
func (e *Environment) WriteKubeconfig(path string) error {
	user, err := e.env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	data, err := user.KubeConfig()
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}
