package v2alpha2

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodGroup makes its pods one job: scheduled together (a gang of at least MinMember pods),
// in one queue, with one priority. Pods join it through the pod-group-name annotation.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=pg
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Queue",type=string,JSONPath=`.spec.queue`,description="Queue the job is scheduled in"
// +kubebuilder:printcolumn:name="MinMember",type=integer,JSONPath=`.spec.minMember`,description="Pods that must be placed together (gang size)"
// +kubebuilder:printcolumn:name="Preempt-Until",type=string,JSONPath=`.status.minRuntime.preempt.until`,description="Until when the running job is protected against higher-priority jobs of its queue; empty when its preemptMinRuntime is 0s"
// +kubebuilder:printcolumn:name="Reclaim-Until",type=string,JSONPath=`.status.minRuntime.reclaimUntil`,description="Until when the running job is protected against jobs of other queues (the first of its reclaim protections to end); empty when no reclaimMinRuntime above 0s applies to it"
// +kubebuilder:printcolumn:name="MinSubGroup",type=integer,JSONPath=`.spec.minSubGroup`,priority=1,description="Sub-groups that must be ready, when the gang is counted in sub-groups instead of pods"
// +kubebuilder:printcolumn:name="Evictions",type=integer,JSONPath=`.status.evictions.total`,priority=1,description="How often the scheduler ended the job's run by preemption or reclaim; with escalation on, each lengthens its next protection"
// +kubebuilder:printcolumn:name="Priority-Class",type=string,JSONPath=`.spec.priorityClassName`,priority=1
// +kubebuilder:printcolumn:name="Preemptibility",type=string,JSONPath=`.spec.preemptibility`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type PodGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PodGroupSpec   `json:"spec,omitempty"`
	Status PodGroupStatus `json:"status,omitempty"`
}

// Preemptibility says whether a job may be evicted for another.
// +kubebuilder:validation:Enum=preemptible;non-preemptible;""
type Preemptibility string

const (
	// Preemptible jobs may use over-quota resources and may be preempted or reclaimed.
	Preemptible Preemptibility = "preemptible"
	// NonPreemptible jobs run only within their queue's deserved quota and are never victims.
	NonPreemptible Preemptibility = "non-preemptible"
	// PreemptibilityFromPriority (empty) derives it: preemptible iff priority is below 100.
	PreemptibilityFromPriority Preemptibility = ""
)

// PodGroupSpec is what a workload declares about its job.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.minMember) && has(self.minSubGroup))",message="minMember and minSubGroup are mutually exclusive: minMember counts pods, minSubGroup counts ready sub-groups; set one"
// +kubebuilder:validation:XValidation:rule="!has(self.minSubGroup) || (has(self.subGroups) ? self.subGroups.filter(c, !has(c.parent) || size(c.parent) == 0).size() : 0) >= self.minSubGroup",message="minSubGroup cannot exceed the number of top-level subGroups (those without a parent)"
type PodGroupSpec struct {
	// MinMember is the gang size: the job starts only when this many pods can be placed at once,
	// and while running it is never shrunk below it except by evicting it whole. Absent, the job
	// is a gang of one, unless MinSubGroup sets its gang in sub-groups instead. It has no
	// default in the schema because a stored default would collide with MinSubGroup.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MinMember int32 `json:"minMember,omitempty"`

	// MinSubGroup is the gang counted in sub-groups: the job runs when this many of its
	// top-level sub-groups (those without a parent) are ready, each by its own minMember or
	// minSubGroup, and keeps that many while running. 0 asks nothing at this level. It excludes
	// MinMember (upstream KAI's hierarchical elastic gangs).
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinSubGroup *int32 `json:"minSubGroup,omitempty"`

	// Queue is the name of the leaf Queue the job is scheduled in.
	// +optional
	Queue string `json:"queue,omitempty"`

	// PriorityClassName names the PriorityClass that gives the job its priority; a job without
	// a known class gets priority 50.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// Preemptibility overrides the default derived from priority (preemptible below 100).
	// +optional
	Preemptibility Preemptibility `json:"preemptibility,omitempty"`

	// PreemptionDelay is how long the pending job waits, from its creation or its last
	// eviction (whichever is later), before it may evict other jobs through reclaim or
	// preempt. It takes free capacity at once and stays evictable itself. Unset falls back to
	// the kai.scheduler/preemption-delay annotation of the PodGroup, then of its pods.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self) >= duration('0s')",message="must be a non-negative duration such as 0s, 90s or 1h30m (units: ns, us, ms, s, m, h)"
	PreemptionDelay *metav1.Duration `json:"preemptionDelay,omitempty"`

	// SubGroups split the gang into named parts with their own minimum sizes; pods join one
	// with the kai.scheduler/subgroup-name label.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:XValidation:rule="self.all(g, !has(g.parent) || g.parent == '' || self.exists(p, p.name == g.parent))",message="every subGroup parent must name another subGroup of this PodGroup"
	// +kubebuilder:validation:XValidation:rule="self.all(g, !has(g.minSubGroup) || self.filter(c, has(c.parent) && c.parent == g.name).size() >= g.minSubGroup)",message="a subGroup's minSubGroup cannot exceed the number of subGroups whose parent it is"
	SubGroups []SubGroup `json:"subGroups,omitempty"`

	// MarkUnschedulable also sets PodScheduled=False on pending pods, so that cluster
	// autoscalers notice them. The scheduler treats unset as true.
	// +optional
	MarkUnschedulable *bool `json:"markUnschedulable,omitempty"`

	// TopologyConstraint places the whole job inside one domain of a Topology's level
	// (required) and packs it into as few domains of a narrower level as fit (preferred).
	// +optional
	TopologyConstraint *TopologyConstraint `json:"topologyConstraint,omitempty"`

	// SchedulingBackoff is accepted for compatibility and ignored.
	// +optional
	SchedulingBackoff *int32 `json:"schedulingBackoff,omitempty"`

	// Parallelism, Completions and BackoffLimit are legacy fields, accepted and ignored.
	// +optional
	Parallelism *int32 `json:"parallelism,omitempty"`
	// +optional
	Completions *int32 `json:"completions,omitempty"`
	// +optional
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`

	// StalenessGracePeriod is how long the job may run with fewer pods than its minimum (a
	// pod failed or was deleted) before the stalegangeviction action evicts what is left of
	// it: such a gang holds its resources and makes no progress. A negative value never
	// evicts this job as stale; unset uses the scheduler configuration's
	// globalDefaultStalenessGracePeriod. It wins over the kai.scheduler/staleness-grace-period
	// annotation.
	// +optional
	StalenessGracePeriod *metav1.Duration `json:"stalenessGracePeriod,omitempty"`
}

// SubGroup is a named part of a gang.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.minMember) && has(self.minSubGroup))",message="minMember and minSubGroup are mutually exclusive in a subGroup: minMember counts pods, minSubGroup counts ready child subGroups; set one"
type SubGroup struct {
	// Name identifies the sub-group within the PodGroup.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// MinMember is how many pods of this sub-group must be placed together; absent (and
	// without MinSubGroup), one.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MinMember int32 `json:"minMember,omitempty"`

	// MinSubGroup is how many of this sub-group's direct children (the sub-groups naming it
	// as parent) must be ready for it to be ready; 0 asks nothing of them. It excludes
	// MinMember.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinSubGroup *int32 `json:"minSubGroup,omitempty"`

	// Parent names the sub-group this one is nested in; empty for a top-level sub-group.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Parent *string `json:"parent,omitempty"`

	// TopologyConstraint places the sub-group's pods in a domain of their own, inside the
	// job's (and the parent sub-group's) domain.
	// +optional
	TopologyConstraint *TopologyConstraint `json:"topologyConstraint,omitempty"`
}

// TopologyConstraint is upstream KAI's topology-aware placement request. Levels are named by
// their node label or their alias in the Topology.
type TopologyConstraint struct {
	// PreferredTopologyLevel: the pods are packed into as few domains of this level as they
	// fit in (soft: they spread when none has room).
	// +optional
	PreferredTopologyLevel string `json:"preferredTopologyLevel,omitempty"`
	// RequiredTopologyLevel: every pod runs inside one domain of this level, or none runs.
	// +optional
	RequiredTopologyLevel string `json:"requiredTopologyLevel,omitempty"`
	// Topology names the kai.scheduler/v1alpha1 Topology the levels belong to.
	// +optional
	Topology string `json:"topology,omitempty"`
}

// SchedulingConditionType names a kind of scheduling condition.
type SchedulingConditionType string

// UnschedulableOnNodePool reports why the job could not be scheduled in a node pool.
const UnschedulableOnNodePool SchedulingConditionType = "UnschedulableOnNodePool"

// PodGroupStatus is what the scheduler reports about a job.
type PodGroupStatus struct {
	// SchedulingConditions explain why the job is pending, one per node pool.
	// +optional
	SchedulingConditions []SchedulingCondition `json:"schedulingConditions,omitempty"`

	// ResourcesStatus sums the resources of the job's pods.
	// +optional
	ResourcesStatus PodGroupResourcesStatus `json:"resourcesStatus,omitempty"`

	// MinRuntime shows how min-runtime protects the running job from preemption and
	// reclaim; absent while the job does not run or can never be a victim.
	// +optional
	MinRuntime *MinRuntimeStatus `json:"minRuntime,omitempty"`

	// Evictions counts the runs of the job that the scheduler ended by preemption or
	// reclaim. It lives in the status, which the job's owner cannot write, because the
	// minruntime plugin may lengthen the job's next protection by it (escalation): were it
	// an annotation, an owner could raise it to buy protection. Absent until the first.
	// +optional
	Evictions *EvictionCount `json:"evictions,omitempty"`
}

// EvictionCount counts the runs of a job ended by the scheduler, by action. A run counts once
// however many of its pods went: only an eviction that leaves the job no running pod ends a
// run; an elastic job losing surplus pods keeps its run and its count.
type EvictionCount struct {
	// Total is Preempt plus Reclaim (a column cannot add).
	// +kubebuilder:validation:Minimum=0
	Total int32 `json:"total"`
	// Preempt counts runs ended by higher-priority jobs of the job's queue.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Preempt int32 `json:"preempt,omitempty"`
	// Reclaim counts runs ended by jobs of other queues.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Reclaim int32 `json:"reclaim,omitempty"`
	// Last is when the scheduler decided the last counted eviction, to the microsecond. An
	// eviction is counted only if decided after it, so that a write retried after a lost
	// answer counts it once.
	Last metav1.MicroTime `json:"last"`
}

// MinRuntimeStatus is the protection the scheduler gives a running job: the start it counts
// from and when each protection ends. Times are whole seconds: starts rounded down, ends up.
//
// A min-runtime of 0s protects nothing, so it has no end: its until is absent (not the
// start). Preemption and reclaim are told apart, as kubectl get pg shows them, because
// they protect against different jobs (Preempt-Until: .preempt.until; Reclaim-Until:
// .reclaimUntil, since a column cannot take the minimum of a list). A job that no
// min-runtime protects has no status at all.
type MinRuntimeStatus struct {
	// Start is the start of the current run that min-runtime counts from.
	Start metav1.Time `json:"start"`
	// StartNote says why the kai.scheduler/last-start-timestamp annotation was not used as
	// written (it may shorten protection, never lengthen it); empty when it was.
	// +optional
	StartNote string `json:"startNote,omitempty"`
	// ProtectedUntil is the earliest end of the protections below that protect something:
	// from then on some job that min-runtime held back may take this job's resources. It is
	// the earlier of preempt.until and reclaimUntil, kept for readers of earlier versions;
	// absent when neither is set. Jobs against which a min-runtime of 0s applies may take
	// the resources at any time.
	// +optional
	ProtectedUntil *metav1.Time `json:"protectedUntil,omitempty"`
	// ReclaimUntil is the earliest end of the reclaim protections that protect something
	// (a minRuntime above 0s): from then on some reclaimer held back by min-runtime may take
	// this job's resources. Absent when no reclaim protection does; entries of 0s are not
	// counted (the reclaimers they hold against may reclaim the job at any time).
	// +optional
	ReclaimUntil *metav1.Time `json:"reclaimUntil,omitempty"`
	// Preempt is the protection against higher-priority jobs of the same queue.
	Preempt MinRuntimeProtection `json:"preempt"`
	// Reclaim is the protection against jobs of other queues, outermost first: each entry
	// holds against reclaimers from outside its queue that no earlier entry covers.
	// +listType=atomic
	Reclaim []ReclaimProtection `json:"reclaim"`
}

// MinRuntimeProtection is one min-runtime that applies to the job and when it ends.
type MinRuntimeProtection struct {
	// MinRuntime is the value that applies; 0s protects nothing.
	MinRuntime metav1.Duration `json:"minRuntime"`
	// SetBy is the queue whose spec set the value, or the job's own annotation
	// (kai.scheduler/preempt-min-runtime or kai.scheduler/reclaim-min-runtime) when the job
	// shortened it; absent when the scheduler's default (the minruntime plugin's argument)
	// applies.
	// +optional
	SetBy string `json:"setBy,omitempty"`
	// EscalatedFrom is the min-runtime before escalation lengthened it for the job's past
	// evictions (status.evictions; the minruntime plugin's escalation arguments); absent when
	// it did not.
	// +optional
	EscalatedFrom *metav1.Duration `json:"escalatedFrom,omitempty"`
	// Until is when the protection ends; absent when MinRuntime is 0s, which protects
	// nothing.
	// +optional
	Until *metav1.Time `json:"until,omitempty"`
}

// ReclaimProtection is the reclaim protection against reclaimers from outside a queue.
type ReclaimProtection struct {
	// FromOutside names the queue (the job's leaf queue or one of its ancestors).
	FromOutside string `json:"fromOutside"`

	MinRuntimeProtection `json:",inline"`
}

// SchedulingCondition is one observation of the scheduler about a job.
type SchedulingCondition struct {
	// Type of the condition.
	Type SchedulingConditionType `json:"type"`
	// NodePool the observation applies to.
	// +optional
	NodePool string `json:"nodePool,omitempty"`
	// Status of the condition: True, False or Unknown.
	// +optional
	Status v1.ConditionStatus `json:"status,omitempty"`
	// Reasons are the machine-readable causes, each with a message for people.
	// +optional
	Reasons []UnschedulableReason `json:"reasons,omitempty"`
	// Message summarises the condition for people.
	// +optional
	Message string `json:"message,omitempty"`
	// TransitionID increases each time the condition changes.
	// +optional
	TransitionID string `json:"transitionID,omitempty"`
	// LastTransitionTime is when the condition last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
}

// UnschedulableReason is one cause of a job not being scheduled.
type UnschedulableReason struct {
	// Reason is a CamelCase cause such as NotEnoughResources or ProtectedVictims.
	Reason string `json:"reason"`
	// Message explains the cause to a person.
	// +optional
	Message string `json:"message,omitempty"`
}

// PodGroupResourcesStatus sums the resources of a job's pods.
type PodGroupResourcesStatus struct {
	// Allocated is what the job's pods hold now.
	// +optional
	Allocated v1.ResourceList `json:"allocated,omitempty"`
	// AllocatedNonPreemptible is the non-preemptible part of Allocated.
	// +optional
	AllocatedNonPreemptible v1.ResourceList `json:"allocatedNonPreemptible,omitempty"`
	// Requested is what the job's pods hold or wait for.
	// +optional
	Requested v1.ResourceList `json:"requested,omitempty"`
}

// PodGroupList is a list of PodGroups.
//
// +kubebuilder:object:root=true
type PodGroupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PodGroup `json:"items"`
}
