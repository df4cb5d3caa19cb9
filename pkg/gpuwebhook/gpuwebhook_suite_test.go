package gpuwebhook_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/gpuwebhook"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

func TestGPUWebhook(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "GPU-sharing admission webhook")
}

// fixedRandom is the random part of every ConfigMap prefix the specs make, so that names
// can be written out whole.
const fixedRandom = "abc1234"

// options are the webhook's defaults with fixedRandom as random part.
var options = gpuwebhook.Options{RandomPart: func() string { return fixedRandom }}

// halfGPUPod is pod "train-0" in namespace "ns" asking for half a GPU for its one
// container, "main".
func halfGPUPod() *builders.PodWrapper {
	return builders.MakePod("ns", "train-0").Annotation(scheduling.GPUFractionAnnotation, "0.5")
}

// configMapRef is an environment variable read from key of ConfigMap name.
func configMapRef(key, name string) v1.EnvVar {
	return v1.EnvVar{Name: key, ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
		LocalObjectReference: v1.LocalObjectReference{Name: name}, Key: key}}}
}

// mustMutate is Mutate's pod, failing the spec on an error or when it changes nothing.
func mustMutate(pod *v1.Pod, opts gpuwebhook.Options) *v1.Pod {
	GinkgoHelper()
	mutated, err := gpuwebhook.Mutate(pod, opts)
	Expect(err).NotTo(HaveOccurred())
	Expect(mutated).NotTo(BeNil(), "Mutate left a share pod unchanged")
	return mutated
}
