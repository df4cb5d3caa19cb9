package harness

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// podsPerNode is the kubelet's default maximum of pods on a node.
const podsPerNode = 110

// Namespace of every job a scenario creates.
const Namespace = "ns"

// Epoch is the virtual time at which every scenario starts.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// NodeBuilder describes a node. Defaults: 64 CPUs, 512 GiB, no GPUs, 110 pods.
type NodeBuilder struct{ node model.NodeInfo }

// Node starts a node description.
func Node(name string) *NodeBuilder {
	return &NodeBuilder{node: model.NodeInfo{Name: name, Allocatable: model.NewResources(64000, 512<<30, 0).With(model.Pods, podsPerNode)}}
}

// GPUs sets the node's GPU count.
func (b *NodeBuilder) GPUs(n int64) *NodeBuilder {
	b.node.Allocatable = b.node.Allocatable.With(model.GPU, n*model.MilliGPU)
	return b
}

// CPUs sets the node's CPU in cores.
func (b *NodeBuilder) CPUs(cores int64) *NodeBuilder {
	b.node.Allocatable = b.node.Allocatable.With(model.CPU, cores*1000)
	return b
}

// MaxPods sets how many pods the node takes.
func (b *NodeBuilder) MaxPods(n int64) *NodeBuilder {
	b.node.Allocatable = b.node.Allocatable.With(model.Pods, n)
	return b
}

// Extended sets the node's amount of an extended resource.
func (b *NodeBuilder) Extended(name v1.ResourceName, n int64) *NodeBuilder {
	b.node.Allocatable = b.node.Allocatable.WithScalar(name, n)
	return b
}

// Taint adds a taint.
func (b *NodeBuilder) Taint(key, value string, effect v1.TaintEffect) *NodeBuilder {
	b.node.Taints = append(b.node.Taints, v1.Taint{Key: key, Value: value, Effect: effect})
	return b
}

// Label adds a node label.
func (b *NodeBuilder) Label(key, value string) *NodeBuilder {
	if b.node.Labels == nil {
		b.node.Labels = map[string]string{}
	}
	b.node.Labels[key] = value
	return b
}

// Cordoned marks the node unschedulable.
func (b *NodeBuilder) Cordoned() *NodeBuilder { b.node.Unschedulable = true; return b }

// QueueBuilder describes a queue. Defaults: top level, priority 100, unlimited quota and limit.
type QueueBuilder struct{ queue model.QueueInfo }

// Queue starts a queue description.
func Queue(name string) *QueueBuilder {
	b := &QueueBuilder{queue: model.QueueInfo{Name: name, Priority: model.DefaultQueuePriority}}
	for _, r := range model.QuotaResources {
		b.queue.Resources[r] = model.QueueResourceShare{Quota: model.Unlimited, OverQuotaWeight: 1, Limit: model.Unlimited}
	}
	return b
}

// Parent sets the parent queue.
func (b *QueueBuilder) Parent(name string) *QueueBuilder { b.queue.Parent = name; return b }

// Priority sets the queue priority.
func (b *QueueBuilder) Priority(p int) *QueueBuilder { b.queue.Priority = p; return b }

// GPUQuota sets the deserved GPUs (-1 unlimited).
func (b *QueueBuilder) GPUQuota(q float64) *QueueBuilder {
	b.queue.Resources[model.GPU].Quota = gpuSpec(q)
	return b
}

// GPULimit sets the GPU cap (-1 unlimited).
func (b *QueueBuilder) GPULimit(l float64) *QueueBuilder {
	b.queue.Resources[model.GPU].Limit = gpuSpec(l)
	return b
}

// gpuSpec converts GPUs as a Queue's spec gives them to the scheduler's units, keeping
// Unlimited as it is.
func gpuSpec(v float64) float64 {
	if v < 0 {
		return model.Unlimited
	}
	return v * model.MilliGPU
}

// GPUWeight sets the over-quota weight for GPUs.
func (b *QueueBuilder) GPUWeight(w float64) *QueueBuilder {
	b.queue.Resources[model.GPU].OverQuotaWeight = w
	return b
}

// PreemptMinRuntime sets the queue's own preempt min-runtime.
func (b *QueueBuilder) PreemptMinRuntime(d time.Duration) *QueueBuilder {
	b.queue.PreemptMinRuntime = &d
	return b
}

// ReclaimMinRuntime sets the queue's own reclaim min-runtime.
func (b *QueueBuilder) ReclaimMinRuntime(d time.Duration) *QueueBuilder {
	b.queue.ReclaimMinRuntime = &d
	return b
}

// EscalationFactor and EscalationCeiling set the queue's own escalation settings, as its
// kai.scheduler/escalation-factor and -ceiling annotations do.
func (b *QueueBuilder) EscalationFactor(f float64) *QueueBuilder {
	b.queue.EscalationFactor = &f
	return b
}

func (b *QueueBuilder) EscalationCeiling(d time.Duration) *QueueBuilder {
	b.queue.EscalationCeiling = &d
	return b
}

// JobBuilder describes a job and its pods. Defaults: queue "default", priority 50
// (preemptible), gang of 1, one pod asking for 1 CPU.
type JobBuilder struct {
	job      model.JobInfo
	pods     int
	request  model.Resources
	running  []string // nodes of the first pods, which run there
	share    *model.GPUShare
	device   string     // the GPU group the running pods' shares are on ("": one each)
	subPods  []string   // sub-group of each pod, by index
	spec     v1.PodSpec // the placement fields of every pod
	podStart *time.Time // start time of the running pods, as the kubelet reports it
}

// Job starts a job description.
func Job(name string) *JobBuilder {
	return &JobBuilder{
		job: model.JobInfo{
			ID: model.NewJobID(Namespace, name), Namespace: Namespace, Name: name,
			Queue: "default", Priority: model.DefaultPriority, Preemptible: true, MinMember: 1,
			CreationTime: Epoch,
		},
		pods:    1,
		request: model.NewResources(1000, 1<<30, 0).With(model.Pods, 1),
	}
}

// Queue sets the job's leaf queue.
func (b *JobBuilder) Queue(name string) *JobBuilder { b.job.Queue = name; return b }

// Priority sets the priority; preemptibility follows it (preemptible below 100) unless set.
func (b *JobBuilder) Priority(p int32) *JobBuilder {
	b.job.Priority = p
	b.job.Preemptible = p < model.PreemptibleBelowPriority
	return b
}

// MinMember sets the gang size.
func (b *JobBuilder) MinMember(n int32) *JobBuilder { b.job.MinMember = n; return b }

// Pods sets how many pods the job has.
func (b *JobBuilder) Pods(n int) *JobBuilder { b.pods = n; return b }

// GPUs sets each pod's GPU request.
func (b *JobBuilder) GPUs(n int64) *JobBuilder {
	b.request = b.request.With(model.GPU, n*model.MilliGPU)
	return b
}

// Share makes each pod ask for a fraction of devices GPU devices (upstream KAI's gpu-fraction
// and gpu-fraction-num-devices) instead of whole GPUs.
func (b *JobBuilder) Share(fraction float64, devices int32) *JobBuilder {
	b.share = &model.GPUShare{Fraction: fraction, Devices: devices}
	b.request = b.request.With(model.GPU, model.FractionPortion(fraction)*int64(devices))
	return b
}

// OnDevice puts the running pods' shares on the device of GPU group id (shares of several
// devices on id-0, id-1, …; without it each running share has devices of its own).
func (b *JobBuilder) OnDevice(id string) *JobBuilder { b.device = id; return b }

// CPUs sets each pod's CPU request in cores.
func (b *JobBuilder) CPUs(cores int64) *JobBuilder {
	b.request = b.request.With(model.CPU, cores*1000)
	return b
}

// Extended sets each pod's request of an extended resource.
func (b *JobBuilder) Extended(name v1.ResourceName, n int64) *JobBuilder {
	b.request = b.request.WithScalar(name, n)
	return b
}

// Tolerate adds a toleration (operator Equal; Exists when value is empty) to every pod.
func (b *JobBuilder) Tolerate(key, value string, effect v1.TaintEffect) *JobBuilder {
	t := v1.Toleration{Key: key, Operator: v1.TolerationOpEqual, Value: value, Effect: effect}
	if value == "" {
		t.Operator = v1.TolerationOpExists
	}
	b.spec.Tolerations = append(b.spec.Tolerations, t)
	return b
}

// HostPort makes every pod bind a TCP port on its node.
func (b *JobBuilder) HostPort(port int32) *JobBuilder {
	b.spec.Containers = append(b.spec.Containers, v1.Container{Name: fmt.Sprint("port-", port),
		Ports: []v1.ContainerPort{{ContainerPort: port, HostPort: port}}})
	return b
}

// RequireLabelIn requires, by node affinity, a node whose label key has one of values.
func (b *JobBuilder) RequireLabelIn(key string, values ...string) *JobBuilder {
	b.spec.Affinity = builders.RequiredNodeAffinityIn(key, values...)
	return b
}

// Running places the first pods, one per listed node, as running there.
func (b *JobBuilder) Running(nodes ...string) *JobBuilder { b.running = nodes; return b }

// StartedAt sets the job's last start timestamp.
func (b *JobBuilder) StartedAt(t time.Time) *JobBuilder { b.job.LastStartTimestamp = &t; return b }

// CheckpointedAt sets when the job last saved its work, as its
// last-checkpoint-timestamp annotation reports it.
func (b *JobBuilder) CheckpointedAt(t time.Time) *JobBuilder { b.job.LastCheckpoint = &t; return b }

// PodsStartedAt sets the start time the kubelet reported for the running pods.
func (b *JobBuilder) PodsStartedAt(t time.Time) *JobBuilder { b.podStart = &t; return b }

// PreemptionDelay sets the job's preemption delay, as spec.preemptionDelay does.
func (b *JobBuilder) PreemptionDelay(d time.Duration) *JobBuilder {
	b.job.PreemptionDelay = d
	return b
}

// PreemptionDelayAnnotation sets the delay from a kai.scheduler/preemption-delay value, read
// as the scheduler reads it: a bad one leaves no delay and is kept to be told.
func (b *JobBuilder) PreemptionDelayAnnotation(value string) *JobBuilder {
	_ = b.job.SetPreemptionDelayAnnotation(value) // a bad value is the point of such a test
	return b
}

// OwnMinRuntimes give the job kai.scheduler/preempt-min-runtime and reclaim-min-runtime
// annotations' values (nil: none), which may only shorten what its queues give it.
func (b *JobBuilder) OwnMinRuntimes(preempt, reclaim *time.Duration) *JobBuilder {
	b.job.OwnPreemptMinRuntime, b.job.OwnReclaimMinRuntime = preempt, reclaim
	return b
}

// EvictedAt sets when pods of the job were last evicted, as the PodGroup records it.
func (b *JobBuilder) EvictedAt(t time.Time) *JobBuilder { b.job.LastEvictionTimestamp = &t; return b }

// EvictedTimes records, as the PodGroup's status.evictions would, that preempt and reclaim
// already ended the job's runs so many times.
func (b *JobBuilder) EvictedTimes(preempt, reclaim int32) *JobBuilder {
	b.job.Evictions.Preempt, b.job.Evictions.Reclaim = preempt, reclaim
	return b
}

// StalenessGracePeriod sets the job's own staleness grace period (spec.stalenessGracePeriod).
func (b *JobBuilder) StalenessGracePeriod(d time.Duration) *JobBuilder {
	b.job.StalenessGracePeriod = &d
	return b
}

// PodFailedAt says that a pod of the job, gone from its pods, failed at t.
func (b *JobBuilder) PodFailedAt(t time.Time) *JobBuilder { b.job.LastPodFailure = t; return b }

// CreatedAt sets the creation time (older jobs go first among equals).
func (b *JobBuilder) CreatedAt(t time.Time) *JobBuilder { b.job.CreationTime = t; return b }

// SubGroup adds a sub-group with its minimum and assigns it the next count pods.
func (b *JobBuilder) SubGroup(name string, minMember int32, count int) *JobBuilder {
	b.job.SubGroups = append(b.job.SubGroups, model.SubGroupInfo{Name: name, MinMember: minMember})
	for range count {
		b.subPods = append(b.subPods, name)
	}
	return b
}

// MinSubGroup makes the job's gang count sub-groups: it runs when n of its top-level
// sub-groups are ready (and has no pod minimum of its own).
func (b *JobBuilder) MinSubGroup(n int32) *JobBuilder {
	b.job.MinSubGroup, b.job.MinMember = &n, 0
	return b
}

// Replicas adds n top-level sub-groups NAME-0..NAME-(n-1) of size pods each, every pod needed
// (minMember size): the replicas of a MinSubGroup job.
func (b *JobBuilder) Replicas(name string, n int, size int32) *JobBuilder {
	for r := range n {
		b.SubGroup(fmt.Sprintf("%s-%d", name, r), size, int(size))
	}
	return b
}

// SubGroupUnder adds a sub-group nested in parent, with its minimum, and assigns it the next
// count pods.
func (b *JobBuilder) SubGroupUnder(parent, name string, minMember int32, count int) *JobBuilder {
	b.SubGroup(name, minMember, count)
	b.job.SubGroups[len(b.job.SubGroups)-1].Parent = parent
	return b
}

// SubGroupOfGroups adds a sub-group (nested in parent; "" for the top level) that is ready when
// minSubGroup of its children are; it has no pods of its own.
func (b *JobBuilder) SubGroupOfGroups(parent, name string, minSubGroup int32) *JobBuilder {
	b.job.SubGroups = append(b.job.SubGroups, model.SubGroupInfo{Name: name, Parent: parent, MinSubGroup: &minSubGroup})
	return b
}

// InTopology sets the job's topology constraint: topology's required and preferred levels
// (either may be empty).
func (b *JobBuilder) InTopology(topology, required, preferred string) *JobBuilder {
	b.job.Topology = &model.TopologyConstraint{Topology: topology, Required: required, Preferred: preferred}
	return b
}

// SubGroupInTopology sets the topology constraint of the sub-group added last.
func (b *JobBuilder) SubGroupInTopology(topology, required, preferred string) *JobBuilder {
	b.job.SubGroups[len(b.job.SubGroups)-1].Topology = &model.TopologyConstraint{Topology: topology, Required: required, Preferred: preferred}
	return b
}

// NodeSelector sets every pod's node selector.
func (b *JobBuilder) NodeSelector(key, value string) *JobBuilder {
	b.spec.NodeSelector = map[string]string{key: value}
	return b
}

// build returns the job with its pods.
func (b *JobBuilder) build() *model.JobInfo {
	job := b.job
	job.Pods = nil
	placement, err := model.NewPlacement(&b.spec)
	if err != nil {
		panic(fmt.Sprintf("scenario job %s: %v", job.Name, err))
	}
	for i := range max(b.pods, len(b.subPods)) {
		pod := &model.PodInfo{
			Namespace: Namespace, Name: fmt.Sprintf("%s-%d", job.Name, i), Job: job.ID,
			Request: b.request, Status: model.Pending, Placement: placement,
		}
		if i < len(b.subPods) {
			pod.SubGroup = b.subPods[i]
		}
		if b.share != nil {
			share := *b.share
			pod.Share = &share
		}
		if i < len(b.running) {
			pod.Status, pod.NodeName, pod.StartTime = model.Running, b.running[i], b.podStart
			switch {
			case b.share == nil:
			case b.device != "" && b.share.Devices == 1:
				pod.GPUGroups = []string{b.device}
			case b.device != "":
				for d := range b.share.Devices { // shares of several devices: id-0, id-1, …
					pod.GPUGroups = append(pod.GPUGroups, fmt.Sprintf("%s-%d", b.device, d))
				}
			default:
				pod.GPUGroups = model.OwnGPUGroups(pod.NodeName, pod.Key(), b.share.Devices)
			}
		}
		job.AddPod(pod)
	}
	return &job
}
