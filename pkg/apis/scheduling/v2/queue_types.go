package v2

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Queue is a node of the fair-share tree. Only leaf queues hold jobs; inner queues divide
// their share between their children. Queues are cluster-scoped and name their parent.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Priority",type=integer,JSONPath=`.spec.priority`,description="Queue priority; higher gets over-quota capacity first and is reclaimed last (100 when unset)"
// +kubebuilder:printcolumn:name="Parent",type=string,JSONPath=`.spec.parentQueue`,description="Parent queue; empty for a top-level queue"
// +kubebuilder:printcolumn:name="Children",type=string,JSONPath=`.status.childQueues`,description="Child queues"
// +kubebuilder:printcolumn:name="Preempt-Min-Runtime",type=string,JSONPath=`.spec.preemptMinRuntime`,description="Minimum runtime before in-queue preemption; empty inherits from the parent or the scheduler default"
// +kubebuilder:printcolumn:name="Reclaim-Min-Runtime",type=string,JSONPath=`.spec.reclaimMinRuntime`,description="Minimum runtime before reclaim by another queue; empty inherits from the parent or the scheduler default"
// +kubebuilder:printcolumn:name="GPUs",type=string,JSONPath=`.status.allocated.nvidia\.com/gpu`,priority=1,description="GPUs the queue's jobs hold"
// +kubebuilder:printcolumn:name="Deserved-GPUs",type=string,JSONPath=`.status.deserved.nvidia\.com/gpu`,priority=1,description="GPUs the queue's quota earns: its quota (-1: all its parent has), capped by its request and limit"
// +kubebuilder:printcolumn:name="Fair-Share-GPUs",type=string,JSONPath=`.status.fairShare.nvidia\.com/gpu`,priority=1,description="Deserved GPUs plus the queue's part of what is left over the quotas beside it: what reclaim holds it to"
// +kubebuilder:printcolumn:name="DisplayName",type=string,JSONPath=`.spec.displayName`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Queue struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   QueueSpec   `json:"spec,omitempty"`
	Status QueueStatus `json:"status,omitempty"`
}

// QueueSpec is what an operator declares about a queue.
type QueueSpec struct {
	// DisplayName is a human-friendly name shown by tools.
	// +optional
	DisplayName string `json:"displayName,omitempty"`

	// ParentQueue is the name of the parent Queue; empty for a top-level queue. A queue whose
	// parent does not exist, or whose ancestry loops, is reported and not scheduled.
	// +optional
	ParentQueue string `json:"parentQueue,omitempty"`

	// Resources are the queue's quota, over-quota weight and limit per resource.
	// +optional
	Resources *QueueResources `json:"resources,omitempty"`

	// Priority orders queues when over-quota capacity is shared: higher priority queues get it
	// first and are reclaimed last. The scheduler treats an unset priority as 100.
	// +optional
	Priority *int `json:"priority,omitempty"`

	// PreemptMinRuntime is how long a job in this queue (or a descendant that does not set its
	// own value) runs before a higher-priority job of the same leaf queue may preempt it.
	// Unset inherits from the parent queue, then the scheduler's node-pool default; "0s" set
	// explicitly stops inheritance and allows immediate preemption.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self) >= duration('0s')",message="must be a non-negative duration such as 0s, 90s or 1h30m (units: ns, us, ms, s, m, h)"
	PreemptMinRuntime *metav1.Duration `json:"preemptMinRuntime,omitempty"`

	// ReclaimMinRuntime is how long a job runs before another queue may reclaim its resources.
	// Which queue's value applies depends on the scheduler's reclaimResolveMethod (by default
	// the child of the lowest common ancestor on the victim's side, then upwards). Unset
	// inherits; "0s" set explicitly stops inheritance.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self) >= duration('0s')",message="must be a non-negative duration such as 0s, 90s or 1h30m (units: ns, us, ms, s, m, h)"
	ReclaimMinRuntime *metav1.Duration `json:"reclaimMinRuntime,omitempty"`
}

// QueueResources holds the per-resource sharing parameters of a queue.
type QueueResources struct {
	// GPU in devices (fractions allowed).
	// +optional
	GPU QueueResource `json:"gpu,omitempty"`
	// CPU in millicores.
	// +optional
	CPU QueueResource `json:"cpu,omitempty"`
	// Memory in megabytes (10^6 bytes).
	// +optional
	Memory QueueResource `json:"memory,omitempty"`
}

// QueueResource is the sharing policy of one resource.
type QueueResource struct {
	// Quota is the deserved amount: -1 means unlimited, 0 or unset nothing guaranteed.
	// +optional
	// +kubebuilder:validation:Minimum=-1
	Quota float64 `json:"quota,omitempty"`

	// OverQuotaWeight is this queue's weight when capacity above quotas is shared among
	// siblings of the same priority. 0 gets nothing above quota.
	// +optional
	// +kubebuilder:validation:Minimum=0
	OverQuotaWeight float64 `json:"overQuotaWeight,omitempty"`

	// Limit is a hard cap: -1 means unlimited. As in KAI-Scheduler, 0 or unset is a cap of
	// zero, so a queue that should be uncapped must say -1.
	// +optional
	// +kubebuilder:validation:Minimum=-1
	Limit float64 `json:"limit,omitempty"`
}

// QueueStatus is what the scheduler reports about a queue.
type QueueStatus struct {
	// ChildQueues are the names of the queues whose parent is this queue.
	// +optional
	ChildQueues []string `json:"childQueues,omitempty"`
	// Allocated is what the queue's jobs hold now.
	// +optional
	Allocated v1.ResourceList `json:"allocated,omitempty"`
	// AllocatedNonPreemptible is the part of Allocated held by non-preemptible jobs.
	// +optional
	AllocatedNonPreemptible v1.ResourceList `json:"allocatedNonPreemptible,omitempty"`
	// Requested is what the queue's jobs hold or wait for.
	// +optional
	Requested v1.ResourceList `json:"requested,omitempty"`
	// Deserved is what the queue's quota earns in the scheduler's latest cycle: its quota (-1:
	// all its parent has), capped by what its jobs request and by its limit. It is owed: never
	// reduced to make room for another queue. (An addition to upstream's status.)
	// +optional
	Deserved v1.ResourceList `json:"deserved,omitempty"`
	// FairShare is Deserved plus the queue's part of what is left over the quotas beside it,
	// by priority and over-quota weight: a queue may reclaim while within it, and be reclaimed
	// from while above it. (An addition to upstream's status.)
	// +optional
	FairShare v1.ResourceList `json:"fairShare,omitempty"`
	// Conditions report problems such as an orphaned queue or a parent cycle.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// QueueList is a list of Queues.
//
// +kubebuilder:object:root=true
type QueueList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Queue `json:"items"`
}
