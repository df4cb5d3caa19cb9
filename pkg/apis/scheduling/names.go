package scheduling

// GroupName is the API group of Queues and PodGroups, shared with KAI-Scheduler so that
// existing manifests apply unchanged.
const GroupName = "scheduling.run.ai"

// Labels and annotations of the KAI-compatible contract.
const (
	// PodGroupNameAnnotation on a Pod names its PodGroup in the same namespace.
	PodGroupNameAnnotation = "pod-group-name"
	// QueueLabel on a Pod or its top owner names the Queue of the workload.
	QueueLabel = "kai.scheduler/queue"
	// LastStartTimestampAnnotation on a PodGroup records, in RFC3339, when the job last went
	// from zero to a running gang. Min-runtime protection counts from it.
	LastStartTimestampAnnotation = "kai.scheduler/last-start-timestamp"
	// ExpectedRuntimeAnnotation on a PodGroup (or, when the PodGroup has none, on one of its
	// pods, where a workload's pod template puts it) says how long the job runs in all, from
	// its start. The scheduler does not read it: kubectl kai snapshot gives kai-sim the
	// job's duration from it.
	ExpectedRuntimeAnnotation = "kai.scheduler/expected-runtime"
	// PreemptionDelayAnnotation on a PodGroup (or, when the PodGroup sets neither it nor
	// spec.preemptionDelay, on one of its pods) is a Go duration: how long the pending job may
	// not evict other jobs, from its creation or its last eviction.
	PreemptionDelayAnnotation = "kai.scheduler/preemption-delay"
	// PreemptMinRuntimeAnnotation and ReclaimMinRuntimeAnnotation on a PodGroup are Go
	// durations by which the job shortens its own min-runtime (a job that checkpoints often
	// loses little to an eviction and may volunteer). They can only shorten: a value at or
	// above the one the queues and the plugin's defaults resolve is not honoured, so a job's
	// owner, who may write its annotations, can never buy protection with them.
	PreemptMinRuntimeAnnotation = "kai.scheduler/preempt-min-runtime"
	ReclaimMinRuntimeAnnotation = "kai.scheduler/reclaim-min-runtime"
	// LastEvictionTimestampAnnotation on a PodGroup records, in RFC3339, when the scheduler
	// last evicted pods of the job; the preemption delay re-arms from it.
	LastEvictionTimestampAnnotation = "kai.scheduler/last-eviction-timestamp"
	// LastCheckpointTimestampAnnotation on a PodGroup records, in RFC3339, when the job last
	// saved its work, as the workload reports it. Among victims that priority and fair
	// share leave equal, the one that loses least (whose checkpoint, or else start, is the
	// latest) is evicted first. It is clamped to the job's run: a checkpoint before the run
	// started saves nothing of it, one in the future counts as now (api.JobInfo.SavedPoint;
	// docs/minruntime.md, "Least lost work first").
	LastCheckpointTimestampAnnotation = "kai.scheduler/last-checkpoint-timestamp"
	// EscalationFactorAnnotation and EscalationCeilingAnnotation on a Queue set, for the jobs
	// of its subtree, the minruntime plugin's escalationFactor (a number of at least 1; 1
	// is off) and escalationCeiling (a Go duration) in place of the plugin's arguments, each
	// from the nearest queue up the tree that sets it. Annotations, so that the Queue's
	// schema stays upstream's.
	EscalationFactorAnnotation  = "kai.scheduler/escalation-factor"
	EscalationCeilingAnnotation = "kai.scheduler/escalation-ceiling"
	// StalenessGracePeriodAnnotation on a PodGroup (or, when the PodGroup has none, on one of
	// its pods) is a Go duration: how long the running job may stay below its minimum before
	// it is evicted as stale. The PodGroup's spec.stalenessGracePeriod wins over it.
	StalenessGracePeriodAnnotation = "kai.scheduler/staleness-grace-period"
	// PreemptibilityLabel on a Pod or owner is "preemptible" or "non-preemptible".
	PreemptibilityLabel = "kai.scheduler/preemptibility"
	// SubGroupLabel on a Pod names its sub-group within the PodGroup.
	SubGroupLabel = "kai.scheduler/subgroup-name"
	// NodePoolLabel on Nodes, Queues and PodGroups selects a node pool (scheduler shard).
	NodePoolLabel = "kai.scheduler/node-pool"
	// SkipPodGrouperAnnotation "true" on a Pod or one of its owners leaves the pod to a
	// PodGroup its user makes (and names with PodGroupNameAnnotation): the pod grouper makes
	// none for it.
	SkipPodGrouperAnnotation = "kai.scheduler/skip-podgrouper"
)

// A pod asks for part of a GPU with these annotations, as upstream KAI reads them (GPU
// sharing): such a pod requests no whole nvidia.com/gpu.
const (
	// GPUFractionAnnotation is the share of one device the pod asks for: 0 < f < 1.
	GPUFractionAnnotation = "gpu-fraction"
	// GPUMemoryAnnotation is the MiB of one device the pod asks for, instead of a fraction.
	GPUMemoryAnnotation = "gpu-memory"
	// GPUFractionNumDevicesAnnotation asks for that share of each of n devices (default 1).
	GPUFractionNumDevicesAnnotation = "gpu-fraction-num-devices"
	// GPUFractionContainerNameAnnotation names the container given the share (default the first).
	GPUFractionContainerNameAnnotation = "gpu-fraction-container-name"
	// GPUGroupLabel names, on a pod given a share of one device, the device's GPU group: the
	// ID every share of that device carries. A pod given shares of several devices carries
	// one label per group instead, GPUGroupLabel + "/" + id, with the id as value.
	GPUGroupLabel = "runai-gpu-group"
	// GPUMemoryLabel is a node's memory per GPU device, in MiB (values of 1,048,576 and more
	// are bytes), as NVIDIA's GPU feature discovery labels it.
	GPUMemoryLabel = "nvidia.com/gpu.memory"
)

// GPU sharing on the node, as upstream KAI does it (its names, which users' images and
// tooling read): a reservation pod holds each shared device against every other pod, and
// each share pod's containers find their device and portion in ConfigMaps.
const (
	// ReservationNamespace holds the reservation pods, one per shared device (GPU group).
	ReservationNamespace = "kai-resource-reservation"
	// ReservationAppLabel, with ReservationApp as value, marks a reservation pod; the pod
	// also carries GPUGroupLabel with its group.
	ReservationAppLabel = "app"
	ReservationApp      = "kai-resource-reservation"
	// ReservedGPUAnnotation is where a reservation pod writes the UUID of the device the
	// device plugin gave it.
	ReservedGPUAnnotation = "run.ai/reserve_for_gpu_index"
	// DoNotDisruptAnnotation keeps node autoscalers (Karpenter) from draining a reservation pod.
	DoNotDisruptAnnotation = "karpenter.sh/do-not-disrupt"
	// SharedGPUConfigMapAnnotation is the prefix of a share pod's ConfigMaps' names, given by
	// the admission webhook: <prefix>-<container index> (-i<index> for an init container)
	// holds VisibleDevicesKey and GPUPortionKey, and that name + "-evar" the environment.
	SharedGPUConfigMapAnnotation = "runai/shared-gpu-configmap"
	// ReceivedResourceTypeAnnotation says what a bound GPU pod received: "Regular" (whole
	// devices) or "Fraction" (a share).
	ReceivedResourceTypeAnnotation = "received-resource-type"
	// VisibleDevicesKey and GPUPortionKey are the keys (and the environment variables) of a
	// share's ConfigMap: the device UUIDs, comma-joined (or their CDI names), and the portion.
	VisibleDevicesKey = "NVIDIA_VISIBLE_DEVICES"
	GPUPortionKey     = "GPU_PORTION"
)

// PromisedCondition is the condition the scheduler sets on a pending pod with its nominated
// node, when reclaim or preempt evicts for its job: its lastTransitionTime is when the
// promise was made, and promises are kept in that order (first come, first served) when
// several count on what one node releases. The scheduler removes it when it takes the
// promise back.
const PromisedCondition = "kai.scheduler/Promised"

// ProblemEventAnnotation marks, with the value "true", an Event in which the scheduler reports
// a problem with the cluster's objects (an invalid queue, an orphaned pod, an annotation it
// cannot honour), as opposed to the events of its decisions (a bind, an eviction, why a job
// waits). kai-sim lists the events so marked as the run's problems.
const ProblemEventAnnotation = "kai.scheduler/problem"

// ProblemEventAnnotations are the annotations of a problem's event (record.EventRecorder's
// AnnotatedEventf), a fresh map each time so that no recorder can change another's.
func ProblemEventAnnotations() map[string]string {
	return map[string]string{ProblemEventAnnotation: "true"}
}
