package testenv_test

import (
	"os"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kai-minruntime/kai-scheduler/test/testenv"
)

// env is the one control plane the suite's specs share.
var env *testenv.Environment

func TestTestEnv(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "testenv: KWOK and the workload CRDs against a real API server")
}

var _ = BeforeSuite(func() {
	var err error
	// One API server for every spec, with the workload kinds' CRDs for workloads_test.go.
	env, err = testenv.StartWith(testenv.Options{WorkloadCRDs: true})
	if err != nil && os.Getenv("KUBEBUILDER_ASSETS") == "" {
		Skip(err.Error()) // needs KUBEBUILDER_ASSETS (make test builds the control plane)
	}
	// With the control plane there, a missing WORKLOAD_CRDS fails, saying how to set it.
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})
