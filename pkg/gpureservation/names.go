package gpureservation

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
)

// PodName is the name of the reservation pod of a GPU group on a node: derived from both, so
// that a restarted scheduler finds the pod it made instead of making a second one.
func PodName(node, group string) string {
	sum := sha256.Sum256([]byte(node + "/" + group))
	return "gpu-reservation-" + hex.EncodeToString(sum[:8])
}

// GroupOf is the GPU group whose device pod holds, if pod is a reservation pod (as Pod makes
// them: in the reservation namespace, with the reservation app label).
func GroupOf(pod *v1.Pod) (group string, ok bool) {
	if pod.Namespace != scheduling.ReservationNamespace || pod.Labels[scheduling.ReservationAppLabel] != scheduling.ReservationApp {
		return "", false
	}
	return pod.Labels[scheduling.GPUGroupLabel], true
}

// TargetContainer is the container a share pod's share goes to: the one its
// gpu-fraction-container-name annotation names (an init container's too), else the first.
// The webhook points that container at the ConfigMaps, and the binder writes them under the
// same name, so both ask here. A name naming no container is an error naming the annotation.
func TargetContainer(pod *v1.Pod) (index int, init bool, err error) {
	name, named := pod.Annotations[scheduling.GPUFractionContainerNameAnnotation]
	if !named {
		if len(pod.Spec.Containers) == 0 {
			return 0, false, errors.New("the pod asks for a share of a GPU but has no container to give it to")
		}
		return 0, false, nil
	}
	for i, c := range pod.Spec.Containers {
		if c.Name == name {
			return i, false, nil
		}
	}
	for i, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return i, true, nil
		}
	}
	return 0, false, fmt.Errorf("annotation %s=%q: the pod has no container %q (its containers: %s)",
		scheduling.GPUFractionContainerNameAnnotation, name, name, containerNames(pod))
}

// containerNames lists a pod's init containers and containers, for a message.
func containerNames(pod *v1.Pod) string {
	var names []string
	for _, c := range pod.Spec.InitContainers {
		names = append(names, c.Name+" (init)")
	}
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// ConfigMapName is the name of the ConfigMap holding the device and portion of a share pod's
// container, from the prefix the webhook gave the pod (SharedGPUConfigMapAnnotation):
// <prefix>-<index>, or <prefix>-i<index> for an init container. The container's environment
// ConfigMap is EnvConfigMapName of it.
func ConfigMapName(prefix string, index int, init bool) string {
	if init {
		return fmt.Sprintf("%s-i%d", prefix, index)
	}
	return fmt.Sprintf("%s-%d", prefix, index)
}

// EnvConfigMapName is the name of the ConfigMap a share pod's container takes its
// environment from (envFrom), beside the ConfigMap named name.
func EnvConfigMapName(name string) string { return name + "-evar" }
