package gpureservation

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// Pod is the reservation pod of group on node: bound there directly (no scheduler places it),
// asking for one whole GPU, which the device plugin then gives to it and to no other pod.
// It tolerates what the share pod tolerates, so that it goes wherever the share may; its
// program learns its own name and namespace from the downward API to write the device's
// UUID on itself.
func (r *Reserver) Pod(node, group string, tolerations []v1.Toleration) *v1.Pod {
	// A sliver of CPU and memory beside the GPU, limits equal to requests: a Guaranteed pod,
	// the last a kubelet under pressure evicts — its going would free the device under its
	// shares.
	resources := v1.ResourceList{model.GPUResourceName: resource.MustParse("1"),
		v1.ResourceCPU: resource.MustParse("10m"), v1.ResourceMemory: resource.MustParse("32Mi")}
	grace := int64(0) // it only holds a device: nothing to wind down
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: PodName(node, group), Namespace: scheduling.ReservationNamespace,
			Labels:      map[string]string{scheduling.ReservationAppLabel: scheduling.ReservationApp, scheduling.GPUGroupLabel: group},
			Annotations: map[string]string{scheduling.DoNotDisruptAnnotation: "true"},
		},
		Spec: v1.PodSpec{
			NodeName:                      node,
			Tolerations:                   tolerations,
			ServiceAccountName:            r.ServiceAccount,
			TerminationGracePeriodSeconds: &grace,
			Containers: []v1.Container{{
				Name: "reservation", Image: r.Image,
				Resources: v1.ResourceRequirements{Requests: resources, Limits: resources},
				Env: []v1.EnvVar{
					{Name: "POD_NAME", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
					{Name: "POD_NAMESPACE", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
				},
			}},
		},
	}
	if r.RuntimeClass != "" {
		pod.Spec.RuntimeClassName = &r.RuntimeClass
	}
	return pod
}
