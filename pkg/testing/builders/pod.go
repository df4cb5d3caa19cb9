package builders

import (
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
)

// SchedulerName is the scheduler a pod made by MakePod asks for.
const SchedulerName = "kai-scheduler"

// gpuResource is the GPUs' resource name, as users and NVIDIA's device plugin write it.
const gpuResource v1.ResourceName = "nvidia.com/gpu"

// PodWrapper builds a v1.Pod; its options act on the pod's first container.
type PodWrapper struct {
	v1.Pod
	meta[*PodWrapper]
}

// MakePod is a pending pod of this scheduler (SchedulerName) with one container, main
// (image busybox), asking for nothing.
func MakePod(namespace, name string) *PodWrapper {
	p := &PodWrapper{Pod: v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: v1.PodSpec{SchedulerName: SchedulerName,
			Containers: []v1.Container{{Name: "main", Image: "busybox"}}},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}}
	p.meta = meta[*PodWrapper]{p, &p.ObjectMeta}
	return p
}

// Obj is the pod built.
func (p *PodWrapper) Obj() *v1.Pod { return &p.Pod }

// PodGroup makes the pod one of the PodGroup's (the pod-group-name annotation).
func (p *PodWrapper) PodGroup(name string) *PodWrapper {
	return p.Annotation(scheduling.PodGroupNameAnnotation, name)
}

// Queue labels the pod with the queue the PodGroup made for it goes to.
func (p *PodWrapper) Queue(name string) *PodWrapper { return p.Label(scheduling.QueueLabel, name) }

// SubGroup puts the pod in a sub-group of its PodGroup (the kai.scheduler/subgroup-name label).
func (p *PodWrapper) SubGroup(name string) *PodWrapper {
	return p.Label(scheduling.SubGroupLabel, name)
}

// SchedulerName sets the scheduler the pod asks for.
func (p *PodWrapper) SchedulerName(name string) *PodWrapper {
	p.Spec.SchedulerName = name
	return p
}

// ControlledBy makes owner, of kind gvk, the pod's controller (a Job's pods, for example).
func (p *PodWrapper) ControlledBy(owner metav1.Object, gvk schema.GroupVersionKind) *PodWrapper {
	p.OwnerReferences = append(p.OwnerReferences, *metav1.NewControllerRef(owner, gvk))
	return p
}

// GPUs asks for n GPUs: a request and an equal limit, as the API server wants of an extended
// resource.
func (p *PodWrapper) GPUs(n int64) *PodWrapper {
	return p.Resource(gpuResource, strconv.FormatInt(n, 10))
}

// Resource asks for a quantity of a resource ("1", "500m", "1Gi"), request and limit alike,
// as extended resources must be asked for.
func (p *PodWrapper) Resource(name v1.ResourceName, quantity string) *PodWrapper {
	r := &p.Spec.Containers[0].Resources
	r.Limits = setQuantity(r.Limits, name, quantity)
	return p.Request(name, quantity)
}

// Request requests a quantity of a resource without a limit (CPU and memory, usually).
func (p *PodWrapper) Request(name v1.ResourceName, quantity string) *PodWrapper {
	r := &p.Spec.Containers[0].Resources
	r.Requests = setQuantity(r.Requests, name, quantity)
	return p
}

// Image sets the container's image.
func (p *PodWrapper) Image(image string) *PodWrapper {
	p.Spec.Containers[0].Image = image
	return p
}

// Env sets an environment variable of the container.
func (p *PodWrapper) Env(name, value string) *PodWrapper {
	c := &p.Spec.Containers[0]
	c.Env = append(c.Env, v1.EnvVar{Name: name, Value: value})
	return p
}

// SecretVolume mounts a Secret into the container at path.
func (p *PodWrapper) SecretVolume(name, secret, path string) *PodWrapper {
	p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: name,
		VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: secret}}})
	c := &p.Spec.Containers[0]
	c.VolumeMounts = append(c.VolumeMounts, v1.VolumeMount{Name: name, MountPath: path})
	return p
}

// HostPort has the container listen on port, taken on the node as hostPort.
func (p *PodWrapper) HostPort(port, hostPort int32) *PodWrapper {
	c := &p.Spec.Containers[0]
	c.Ports = append(c.Ports, v1.ContainerPort{ContainerPort: port, HostPort: hostPort})
	return p
}

// Toleration adds a toleration.
func (p *PodWrapper) Toleration(t v1.Toleration) *PodWrapper {
	p.Spec.Tolerations = append(p.Spec.Tolerations, t)
	return p
}

// NodeSelector adds a node selector's label.
func (p *PodWrapper) NodeSelector(key, value string) *PodWrapper {
	p.Spec.NodeSelector = set(p.Spec.NodeSelector, key, value)
	return p
}

// RequiredNodeAffinityIn requires a node whose label key has one of values.
func (p *PodWrapper) RequiredNodeAffinityIn(key string, values ...string) *PodWrapper {
	p.Spec.Affinity = RequiredNodeAffinityIn(key, values...)
	return p
}

// SchedulingGate holds the pod back from scheduling until the gate is removed.
func (p *PodWrapper) SchedulingGate(name string) *PodWrapper {
	p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, v1.PodSchedulingGate{Name: name})
	return p
}

// TerminationGracePeriod sets how long the pod may take to stop, in seconds.
func (p *PodWrapper) TerminationGracePeriod(seconds int64) *PodWrapper {
	p.Spec.TerminationGracePeriodSeconds = &seconds
	return p
}

// Node binds the pod to a node (spec.nodeName).
func (p *PodWrapper) Node(name string) *PodWrapper {
	p.Spec.NodeName = name
	return p
}

// NominatedNode sets the node the pod was promised (status.nominatedNodeName).
func (p *PodWrapper) NominatedNode(name string) *PodWrapper {
	p.Status.NominatedNodeName = name
	return p
}

// Phase sets the pod's phase.
func (p *PodWrapper) Phase(phase v1.PodPhase) *PodWrapper {
	p.Status.Phase = phase
	return p
}

// StartedAt makes the pod running since t (status.startTime, as a kubelet writes it).
func (p *PodWrapper) StartedAt(t time.Time) *PodWrapper {
	p.Status.Phase = v1.PodRunning
	p.Status.StartTime = &metav1.Time{Time: t}
	return p
}

// Condition adds a status condition.
func (p *PodWrapper) Condition(c v1.PodCondition) *PodWrapper {
	p.Status.Conditions = append(p.Status.Conditions, c)
	return p
}

// Finalizer adds a finalizer, which keeps the pod, once deleted, terminating.
func (p *PodWrapper) Finalizer(name string) *PodWrapper {
	p.Finalizers = append(p.Finalizers, name)
	return p
}

// DeletedAt makes the pod terminating since t (give it a Finalizer too: a fake client keeps
// a deleted object only with one).
func (p *PodWrapper) DeletedAt(t time.Time) *PodWrapper {
	p.DeletionTimestamp = &metav1.Time{Time: t}
	return p
}

// RequiredNodeAffinityIn is the affinity that requires a node whose label key has one of
// values.
func RequiredNodeAffinityIn(key string, values ...string) *v1.Affinity {
	return &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: values}},
		}}},
	}}
}

// setQuantity is list with name set to quantity, list made if nil.
func setQuantity(list v1.ResourceList, name v1.ResourceName, quantity string) v1.ResourceList {
	if list == nil {
		list = v1.ResourceList{}
	}
	list[name] = resource.MustParse(quantity)
	return list
}
