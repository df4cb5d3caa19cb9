package gpuwebhook_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/gpuwebhook"
)

// prefixOf is the ConfigMap prefix Mutate gives pod.
func prefixOf(pod *v1.Pod, opts gpuwebhook.Options) string {
	GinkgoHelper()
	return mustMutate(pod, opts).Annotations[scheduling.SharedGPUConfigMapAnnotation]
}

// namedPod is a half-GPU pod with the given name and generateName, owned by owner if any.
func namedPod(name, generateName, owner string) *v1.Pod {
	pod := halfGPUPod().Obj()
	pod.Name, pod.GenerateName = name, generateName
	if owner != "" {
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: owner, UID: "uid-job"}}
		pod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))}
	}
	return pod
}

var _ = Describe("The ConfigMap prefix of a share pod", func() {
	DescribeTable("is named after the pod's owner, else the pod, else its generateName",
		func(pod *v1.Pod, want string) {
			Expect(prefixOf(pod, options)).To(Equal(want))
		},
		Entry("a Job's pod: the Job", namedPod("train-x7k2p", "train-", "train"), "train-abc1234-shared-gpu"),
		Entry("a bare pod: the pod", namedPod("notebook", "", ""), "notebook-abc1234-shared-gpu"),
		Entry("a bare pod named by the API server: generateName without its '-'", namedPod("", "sweep-", ""), "sweep-abc1234-shared-gpu"),
		Entry("an owner with capitals and dots: lower-cased, dots kept", namedPod("p", "", "Llama-3.1"), "llama-3.1-abc1234-shared-gpu"),
		Entry("an owner that is no DNS name: made one", namedPod("p", "", "My_Job.-x"), "my-job--x-abc1234-shared-gpu"),
		Entry("nothing to name it after", namedPod("", "", "---"), "pod-abc1234-shared-gpu"),
	)

	It("has seven random lower-case letters and digits by default, so two pods of one owner differ", func() {
		first := prefixOf(namedPod("train-0", "", "train"), gpuwebhook.Options{})
		second := prefixOf(namedPod("train-1", "", "train"), gpuwebhook.Options{})
		Expect(first).To(MatchRegexp(`^train-[a-z0-9]{7}-shared-gpu$`))
		Expect(second).To(MatchRegexp(`^train-[a-z0-9]{7}-shared-gpu$`))
		Expect(first).NotTo(Equal(second))
	})

	DescribeTable("leaves room for the longest ConfigMap name made from it, a valid name of at most 253 characters",
		func(containerName string, suffix string) {
			pod := namedPod("", strings.Repeat("Very.Long-", 40), "")
			pod.Annotations[scheduling.GPUFractionContainerNameAnnotation] = containerName
			pod.Spec.InitContainers = []v1.Container{{Name: "fetch"}, {Name: "warmup"}}
			pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: "sidecar"}, v1.Container{Name: "trainer"})

			prefix := prefixOf(pod, options)

			Expect(prefix).To(HavePrefix("very.long-very.long-"))
			for _, name := range []string{prefix, prefix + suffix, prefix + suffix + "-evar"} {
				Expect(len(name)).To(BeNumerically("<=", 253), name)
				Expect(validation.IsDNS1123Subdomain(name)).To(BeEmpty(), name)
			}
			Expect(len(prefix+suffix+"-evar")).To(BeNumerically(">=", 250), "the name was cut shorter than it must")
		},
		Entry("a container", "trainer", "-2"),
		Entry("an init container", "warmup", "-i1"),
	)
})
