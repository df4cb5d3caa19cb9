package gpuwebhook

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/gpureservation"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

const (
	// VolumeName is the pod volume holding the share's ConfigMap, <prefix>-<index>.
	VolumeName = "kai-gpu-share"
	// MountPath is where the container given the share finds that ConfigMap's keys as files
	// (NVIDIA_VISIBLE_DEVICES, GPU_PORTION), read-only.
	MountPath = "/etc/kai/gpu-share"
)

// Mutate is the webhook's rule for one pod at its creation. It returns a copy of pod
// prepared for its GPU share (see the package documentation), or nil when the pod is to be
// left as it is: another scheduler's (Options.SchedulerName), it asks for no share, or it
// already carries the ConfigMap annotation. A
// share the scheduler would refuse, or a container name naming no container, is an error
// naming the annotation. pod itself is never changed. Options are as NewHandler checks them.
func Mutate(pod *v1.Pod, opts Options) (*v1.Pod, error) {
	if opts.SchedulerName != "" && pod.Spec.SchedulerName != opts.SchedulerName {
		return nil, nil // another scheduler's pod: its own binder prepares it, or none does
	}
	share, err := model.ParseGPUShare(pod)
	if err != nil || share == nil {
		return nil, err
	}
	index, init, err := gpureservation.TargetContainer(pod)
	if err != nil {
		return nil, err
	}
	if _, done := pod.Annotations[scheduling.SharedGPUConfigMapAnnotation]; done {
		return nil, nil
	}
	opts = opts.withDefaults()

	mutated := pod.DeepCopy()
	// The longest name the prefix starts: the target's environment ConfigMap.
	prefix := configMapPrefix(pod, opts.RandomPart(), len(gpureservation.EnvConfigMapName(gpureservation.ConfigMapName("", index, init))))
	if mutated.Annotations == nil {
		mutated.Annotations = map[string]string{}
	}
	mutated.Annotations[scheduling.SharedGPUConfigMapAnnotation] = prefix
	if mutated.Spec.RuntimeClassName == nil || *mutated.Spec.RuntimeClassName == "" {
		mutated.Spec.RuntimeClassName = ptr.To(opts.RuntimeClassName)
	}
	shareConfigMap := gpureservation.ConfigMapName(prefix, index, init)
	if init {
		giveShare(&mutated.Spec.InitContainers[index], shareConfigMap)
	} else {
		giveShare(&mutated.Spec.Containers[index], shareConfigMap)
	}
	setVolume(mutated, v1.Volume{Name: VolumeName, VolumeSource: v1.VolumeSource{
		ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: shareConfigMap}},
	}})
	return mutated, nil
}

// giveShare points container at the share's ConfigMaps: its two keys as variables of the
// same name, the "-evar" ConfigMap as environment, and the share's ConfigMap as files.
func giveShare(container *v1.Container, shareConfigMap string) {
	for _, key := range []string{scheduling.VisibleDevicesKey, scheduling.GPUPortionKey} {
		setEnv(container, v1.EnvVar{Name: key, ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
			LocalObjectReference: v1.LocalObjectReference{Name: shareConfigMap}, Key: key,
		}}})
	}
	container.EnvFrom = append(container.EnvFrom, v1.EnvFromSource{ConfigMapRef: &v1.ConfigMapEnvSource{
		LocalObjectReference: v1.LocalObjectReference{Name: gpureservation.EnvConfigMapName(shareConfigMap)},
	}})
	setMount(container, v1.VolumeMount{Name: VolumeName, MountPath: MountPath, ReadOnly: true})
}

// setEnv sets a variable of container, replacing one of the same name: a value the user
// wrote for NVIDIA_VISIBLE_DEVICES would otherwise hand the container the wrong devices.
func setEnv(container *v1.Container, env v1.EnvVar) {
	container.Env = setNamed(container.Env, env, func(e v1.EnvVar) string { return e.Name })
}

// setMount mounts a volume in container, replacing a mount of the same volume.
func setMount(container *v1.Container, mount v1.VolumeMount) {
	container.VolumeMounts = setNamed(container.VolumeMounts, mount, func(m v1.VolumeMount) string { return m.Name })
}

// setVolume adds a volume to pod, replacing one of the same name.
func setVolume(pod *v1.Pod, volume v1.Volume) {
	pod.Spec.Volumes = setNamed(pod.Spec.Volumes, volume, func(v v1.Volume) string { return v.Name })
}

// setNamed puts item in list in place of the one of the same name, or at the end.
func setNamed[T any](list []T, item T, name func(T) string) []T {
	if i := slices.IndexFunc(list, func(x T) bool { return name(x) == name(item) }); i >= 0 {
		list[i] = item
		return list
	}
	return append(list, item)
}
