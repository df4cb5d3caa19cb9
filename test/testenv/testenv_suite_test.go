package testenv_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kai-minruntime/kai-scheduler/test/testenv"
)

// env is the one control plane the suite's specs share.
var env *testenv.Environment

func TestTestEnv(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "testenv: KWOK against a real API server")
}

var _ = BeforeSuite(func() {
	var err error
	env, err = testenv.Start()
	if err != nil {
		Skip(err.Error()) // needs KUBEBUILDER_ASSETS (make test builds the control plane)
	}
})

var _ = AfterSuite(func() {
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})
