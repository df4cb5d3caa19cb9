package gpuwebhook_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/gpuwebhook"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

var _ = Describe("A pod asking for a share of a GPU", func() {
	It("is given its ConfigMaps' prefix, their environment, their volume and the nvidia runtime class", func() {
		pod := halfGPUPod().Obj()
		original := pod.DeepCopy()

		mutated := mustMutate(pod, options)

		Expect(mutated.Annotations).To(HaveKeyWithValue(scheduling.SharedGPUConfigMapAnnotation, "train-0-abc1234-shared-gpu"))
		main := mutated.Spec.Containers[0]
		Expect(main.Env).To(Equal([]v1.EnvVar{
			configMapRef("NVIDIA_VISIBLE_DEVICES", "train-0-abc1234-shared-gpu-0"),
			configMapRef("GPU_PORTION", "train-0-abc1234-shared-gpu-0"),
		}))
		Expect(main.EnvFrom).To(Equal([]v1.EnvFromSource{{ConfigMapRef: &v1.ConfigMapEnvSource{
			LocalObjectReference: v1.LocalObjectReference{Name: "train-0-abc1234-shared-gpu-0-evar"}}}}))
		Expect(main.VolumeMounts).To(Equal([]v1.VolumeMount{{Name: "kai-gpu-share", MountPath: "/etc/kai/gpu-share", ReadOnly: true}}))
		Expect(mutated.Spec.Volumes).To(Equal([]v1.Volume{{Name: "kai-gpu-share", VolumeSource: v1.VolumeSource{
			ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "train-0-abc1234-shared-gpu-0"}}}}}))
		Expect(mutated.Spec.RuntimeClassName).To(Equal(ptr.To("nvidia")))
		Expect(pod).To(Equal(original), "Mutate changed the pod it was given")
	})

	DescribeTable("is prepared whatever the form of its share",
		func(annotations map[string]string) {
			pod := builders.MakePod("ns", "train-0").Obj()
			pod.Annotations = annotations
			mutated := mustMutate(pod, options)
			Expect(mutated.Annotations).To(HaveKeyWithValue(scheduling.SharedGPUConfigMapAnnotation, "train-0-abc1234-shared-gpu"))
			Expect(mutated.Spec.Containers[0].Env).To(ContainElement(configMapRef("GPU_PORTION", "train-0-abc1234-shared-gpu-0")))
		},
		Entry("a fraction", map[string]string{"gpu-fraction": "0.25"}),
		Entry("MiB of memory", map[string]string{"gpu-memory": "4096"}),
		Entry("a fraction of each of two devices", map[string]string{"gpu-fraction": "0.5", "gpu-fraction-num-devices": "2"}),
	)

	It("is left alone when another scheduler is to place it: only this one's binder writes its ConfigMaps", func() {
		opts := options
		opts.SchedulerName = "kai-scheduler"
		pod := halfGPUPod().Obj()
		pod.Spec.SchedulerName = "default-scheduler"
		Expect(gpuwebhook.Mutate(pod, opts)).To(BeNil())
		pod.Spec.SchedulerName = "kai-scheduler"
		Expect(mustMutate(pod, opts).Annotations).To(HaveKey(scheduling.SharedGPUConfigMapAnnotation))
	})

	It("keeps the runtime class it names", func() {
		pod := halfGPUPod().Obj()
		pod.Spec.RuntimeClassName = ptr.To("kata-nvidia")
		Expect(mustMutate(pod, options).Spec.RuntimeClassName).To(Equal(ptr.To("kata-nvidia")))
	})

	It("gets the configured runtime class when it names none", func() {
		opts := options
		opts.RuntimeClassName = "nvidia-cdi"
		Expect(mustMutate(halfGPUPod().Obj(), opts).Spec.RuntimeClassName).To(Equal(ptr.To("nvidia-cdi")))
	})

	It("has NVIDIA_VISIBLE_DEVICES of its own replaced, not doubled, so it cannot see other devices", func() {
		pod := halfGPUPod().Env("NVIDIA_VISIBLE_DEVICES", "all").Env("MODEL", "llama").Obj()
		Expect(mustMutate(pod, options).Spec.Containers[0].Env).To(Equal([]v1.EnvVar{
			configMapRef("NVIDIA_VISIBLE_DEVICES", "train-0-abc1234-shared-gpu-0"),
			{Name: "MODEL", Value: "llama"},
			configMapRef("GPU_PORTION", "train-0-abc1234-shared-gpu-0"),
		}))
	})

	It("keeps its own volumes and mounts beside the share's", func() {
		pod := halfGPUPod().SecretVolume("token", "hf-token", "/secrets").Obj()
		mutated := mustMutate(pod, options)
		Expect(mutated.Spec.Volumes).To(HaveLen(2))
		Expect(mutated.Spec.Volumes[0].Name).To(Equal("token"))
		Expect(mutated.Spec.Containers[0].VolumeMounts).To(HaveLen(2))
	})

	Describe("gives the share to the container gpu-fraction-container-name names", func() {
		It("numbering a container by its place in spec.containers", func() {
			pod := halfGPUPod().Annotation(scheduling.GPUFractionContainerNameAnnotation, "trainer").Obj()
			pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: "trainer", Image: "pytorch"})

			mutated := mustMutate(pod, options)

			Expect(mutated.Spec.Containers[0].Env).To(BeEmpty(), "the sidecar got the share")
			Expect(mutated.Spec.Containers[1].Env).To(ContainElement(configMapRef("NVIDIA_VISIBLE_DEVICES", "train-0-abc1234-shared-gpu-1")))
			Expect(mutated.Spec.Containers[1].EnvFrom[0].ConfigMapRef.Name).To(Equal("train-0-abc1234-shared-gpu-1-evar"))
			Expect(mutated.Spec.Volumes[0].ConfigMap.Name).To(Equal("train-0-abc1234-shared-gpu-1"))
		})

		It("numbering an init container by its place in spec.initContainers, with an 'i'", func() {
			pod := halfGPUPod().Annotation(scheduling.GPUFractionContainerNameAnnotation, "warmup").Obj()
			pod.Spec.InitContainers = []v1.Container{{Name: "fetch", Image: "busybox"}, {Name: "warmup", Image: "pytorch"}}

			mutated := mustMutate(pod, options)

			warmup := mutated.Spec.InitContainers[1]
			Expect(warmup.Env).To(Equal([]v1.EnvVar{
				configMapRef("NVIDIA_VISIBLE_DEVICES", "train-0-abc1234-shared-gpu-i1"),
				configMapRef("GPU_PORTION", "train-0-abc1234-shared-gpu-i1"),
			}))
			Expect(warmup.EnvFrom[0].ConfigMapRef.Name).To(Equal("train-0-abc1234-shared-gpu-i1-evar"))
			Expect(warmup.VolumeMounts).To(ConsistOf(v1.VolumeMount{Name: gpuwebhook.VolumeName, MountPath: gpuwebhook.MountPath, ReadOnly: true}))
			Expect(mutated.Spec.Volumes[0].ConfigMap.Name).To(Equal("train-0-abc1234-shared-gpu-i1"))
			Expect(mutated.Spec.Containers[0].Env).To(BeEmpty())
			Expect(mutated.Spec.InitContainers[0].Env).To(BeEmpty())
		})
	})

	It("is not changed again once it carries the ConfigMap annotation, as the API server may call twice", func() {
		once := mustMutate(halfGPUPod().Obj(), options)
		again, err := gpuwebhook.Mutate(once, gpuwebhook.Options{RandomPart: func() string { return "zzzzzzz" }})
		Expect(err).NotTo(HaveOccurred())
		Expect(again).To(BeNil())
	})
})

var _ = Describe("A pod without share annotations", func() {
	It("is left as it is, whole GPUs or none", func() {
		for _, pod := range []*v1.Pod{builders.MakePod("ns", "cpu").Obj(), builders.MakePod("ns", "gpu").GPUs(1).Obj()} {
			mutated, err := gpuwebhook.Mutate(pod, options)
			Expect(err).NotTo(HaveOccurred())
			Expect(mutated).To(BeNil(), pod.Name)
		}
	})
})

var _ = Describe("A malformed share request", func() {
	DescribeTable("is refused with the scheduler's reason, naming the annotation",
		func(pod *v1.Pod, annotation string) {
			_, err := gpuwebhook.Mutate(pod, options)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(annotation))
			_, parseErr := model.ParseGPUShare(pod)
			Expect(err).To(MatchError(parseErr.Error()), "the webhook's reason differs from the scheduler's")
		},
		Entry("a fraction of a whole GPU", halfGPUPod().Annotation("gpu-fraction", "1").Obj(), "gpu-fraction"),
		Entry("a fraction that is no number", halfGPUPod().Annotation("gpu-fraction", "half").Obj(), "gpu-fraction"),
		Entry("memory that is no whole number", builders.MakePod("ns", "p").Annotation("gpu-memory", "4Gi").Obj(), "gpu-memory"),
		Entry("a fraction and memory together", halfGPUPod().Annotation("gpu-memory", "4096").Obj(), "gpu-memory"),
		Entry("devices without a share", builders.MakePod("ns", "p").Annotation("gpu-fraction-num-devices", "2").Obj(), "gpu-fraction-num-devices"),
		Entry("zero devices", halfGPUPod().Annotation("gpu-fraction-num-devices", "0").Obj(), "gpu-fraction-num-devices"),
		Entry("a share beside whole GPUs", halfGPUPod().GPUs(1).Obj(), "gpu-fraction"),
	)

	It("is refused when gpu-fraction-container-name names no container, naming both", func() {
		pod := halfGPUPod().Annotation(scheduling.GPUFractionContainerNameAnnotation, "trainer").Obj()
		_, err := gpuwebhook.Mutate(pod, options)
		Expect(err).To(MatchError(ContainSubstring(`annotation gpu-fraction-container-name="trainer"`)))
		Expect(err).To(MatchError(ContainSubstring(`no container "trainer" (its containers: main)`)))
	})
})
