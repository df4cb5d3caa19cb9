package api

import "time"

// DefaultQueuePriority is the priority of a queue that does not set one.
const DefaultQueuePriority = 100

// Unlimited is the quota or limit value that means "no bound".
const Unlimited = -1

// QueueResourceShare is a queue's sharing policy for one resource, in the resource's unit
// (GPU devices, CPU millicores, memory bytes).
type QueueResourceShare struct {
	// Quota is the deserved amount; Unlimited (-1) means all of it.
	Quota float64
	// OverQuotaWeight divides capacity above quotas among siblings of equal priority.
	OverQuotaWeight float64
	// Limit is a hard cap; Unlimited (-1) means none. 0 caps at zero, as in KAI-Scheduler.
	Limit float64
}

// QueueInfo is one queue of the fair-share tree.
type QueueInfo struct {
	Name string
	// Parent is the parent queue's name; empty for a top-level queue.
	Parent string
	// Priority orders queues for over-quota capacity; higher first.
	Priority int
	// Resources holds the sharing policy per quota resource (CPU, memory, GPU), by ResourceName.
	Resources [NumQuotaResources]QueueResourceShare
	// PreemptMinRuntime and ReclaimMinRuntime are the queue's own min-runtime settings;
	// nil means unset (inherit).
	PreemptMinRuntime *time.Duration
	ReclaimMinRuntime *time.Duration
	// EscalationFactor and EscalationCeiling are the queue's own escalation settings (its
	// annotations); nil means unset (inherit, up to the minruntime plugin's arguments).
	EscalationFactor  *float64
	EscalationCeiling *time.Duration

	// Filled in by NewQueueTree.

	// Children are the names of the child queues, sorted.
	Children []string
	// Problem says why the queue cannot be scheduled (orphan, cycle, or a broken ancestor);
	// empty for a valid queue.
	Problem string
	// Depth is 0 for a top-level queue; only meaningful for valid queues.
	Depth int
	// ancestry is what QueueTree.Ancestry returns for the queue.
	ancestry []string
}

// IsLeaf reports whether the queue has no children and so may hold jobs.
func (q *QueueInfo) IsLeaf() bool {
	return len(q.Children) == 0
}

// IsValid reports whether the queue and all its ancestors are sound.
func (q *QueueInfo) IsValid() bool {
	return q.Problem == ""
}
