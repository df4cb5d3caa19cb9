package gpuwebhook

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/gpuwebhook"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// stored is pod as the API server keeps it.
func stored(pod *v1.Pod) *v1.Pod {
	GinkgoHelper()
	got := &v1.Pod{}
	Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), got)).To(Succeed())
	return got
}

var _ = Describe("Creating pods through the API server with the webhook installed", func() {
	It("returns a share pod given its ConfigMaps, named after its generateName", func() {
		pod := builders.MakePod("default", "").Annotation(scheduling.GPUFractionAnnotation, "0.5").Obj()
		pod.GenerateName = "notebook-"
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())

		got := stored(pod)
		prefix := got.Annotations[scheduling.SharedGPUConfigMapAnnotation]
		Expect(prefix).To(MatchRegexp(`^notebook-[a-z0-9]{7}-shared-gpu$`))
		Expect(got.Spec.RuntimeClassName).To(Equal(ptr.To("nvidia")))
		main := got.Spec.Containers[0]
		Expect(main.Env).To(ContainElements(
			v1.EnvVar{Name: "NVIDIA_VISIBLE_DEVICES", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
				LocalObjectReference: v1.LocalObjectReference{Name: prefix + "-0"}, Key: "NVIDIA_VISIBLE_DEVICES"}}},
			v1.EnvVar{Name: "GPU_PORTION", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
				LocalObjectReference: v1.LocalObjectReference{Name: prefix + "-0"}, Key: "GPU_PORTION"}}},
		))
		Expect(main.EnvFrom).To(ConsistOf(v1.EnvFromSource{ConfigMapRef: &v1.ConfigMapEnvSource{
			LocalObjectReference: v1.LocalObjectReference{Name: prefix + "-0-evar"}}}))
		Expect(main.VolumeMounts).To(ContainElement(v1.VolumeMount{Name: gpuwebhook.VolumeName, MountPath: gpuwebhook.MountPath, ReadOnly: true}))
		Expect(got.Spec.Volumes).To(ContainElement(HaveField("ConfigMap.Name", prefix+"-0")))
	})

	It("refuses a malformed share with the reason, naming the annotation", func() {
		pod := builders.MakePod("default", "too-much").Annotation(scheduling.GPUFractionAnnotation, "1.5").Obj()
		err := k8sClient.Create(ctx, pod)
		Expect(err).To(MatchError(ContainSubstring(`denied the request: annotation gpu-fraction="1.5"`)))
	})

	It("refuses a share for a container the pod does not have, naming the annotation and the container", func() {
		pod := builders.MakePod("default", "no-trainer").Annotation(scheduling.GPUFractionAnnotation, "0.5").
			Annotation(scheduling.GPUFractionContainerNameAnnotation, "trainer").Obj()
		err := k8sClient.Create(ctx, pod)
		Expect(err).To(MatchError(ContainSubstring(`annotation gpu-fraction-container-name="trainer": the pod has no container "trainer"`)))
	})

	It("stores a plain pod as it was sent", func() {
		pod := builders.MakePod("default", "plain").Obj()
		sent := pod.DeepCopy()
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())

		got := stored(pod)
		Expect(got.Annotations).NotTo(HaveKey(scheduling.SharedGPUConfigMapAnnotation))
		Expect(got.Spec.RuntimeClassName).To(BeNil())
		Expect(got.Spec.Volumes).To(BeEmpty())
		Expect(got.Spec.Containers[0].Env).To(Equal(sent.Spec.Containers[0].Env))
		Expect(got.Spec.Containers[0].EnvFrom).To(BeEmpty())
	})
})
