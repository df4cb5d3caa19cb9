package store

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
)

// lastAppliedAnnotation is kubectl's copy of an applied manifest: often the largest part of
// an object, and never read here.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// Trim is the transform the scheduler's informers apply to every object before keeping it:
// it drops what neither the scheduler nor its pod grouper ever reads, so that the informers'
// copies of thousands of pods and nodes hold only what decisions need. Managed fields go
// from every object; from pods, what the kubelet reports of containers (but a reservation pod's) and addresses and
// what containers are run with (command, environment, volumes, probes) and their limits,
// keeping their requests, ports and restart policies; from nodes, the images they hold and the volumes
// attached to them. The objects the store converts are the same with or without it
// (TestTrimLeavesWhatTheSchedulerReads).
func Trim(obj any) (any, error) {
	if o, err := meta.Accessor(obj); err == nil {
		if o.GetManagedFields() != nil {
			o.SetManagedFields(nil)
		}
		if annotations := o.GetAnnotations(); annotations[lastAppliedAnnotation] != "" {
			delete(annotations, lastAppliedAnnotation)
		}
	}
	switch o := obj.(type) {
	case *v1.Pod:
		trimPod(o)
	case *v1.Node:
		o.Status.Images, o.Status.VolumesAttached, o.Status.VolumesInUse = nil, nil, nil
	}
	return obj, nil
}

func trimPod(pod *v1.Pod) {
	pod.Spec.Volumes, pod.Spec.EphemeralContainers = nil, nil
	for _, containers := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range containers {
			c := &containers[i]
			c.Command, c.Args, c.Env, c.EnvFrom, c.VolumeMounts, c.VolumeDevices = nil, nil, nil, nil, nil, nil
			c.LivenessProbe, c.ReadinessProbe, c.StartupProbe, c.Lifecycle = nil, nil, nil, nil
			// Placement counts requests only, as kube-scheduler does (the API server has
			// already made a limit without a request its request too).
			c.Resources.Limits = nil
		}
	}
	s := &pod.Status
	if pod.Namespace != scheduling.ReservationNamespace {
		// A reservation pod's tell a bind waiting for its device that it will not start.
		s.ContainerStatuses = nil
	}
	s.InitContainerStatuses, s.EphemeralContainerStatuses = nil, nil
	s.PodIPs, s.HostIPs, s.PodIP, s.HostIP = nil, nil, "", ""
}
