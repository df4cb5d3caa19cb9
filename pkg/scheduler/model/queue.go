package model

import (
	"math"
	"strconv"
	"time"
)

// DefaultQueuePriority is the priority of a queue that does not set one.
const DefaultQueuePriority = 100

// Unlimited is the quota or limit value that means "no bound".
const Unlimited = -1

// QueueResourceShare is a queue's sharing policy for one resource, in the scheduler's unit
// of the resource (GPU thousandths, CPU millicores, memory bytes).
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
	// childPositive tells, per resource, whether a valid child has a quota above zero: what
	// a child's quota of -1 over-subscribes (QueueTree.UnlimitedQuotas).
	childPositive [NumQuotaResources]bool
}

// IsLeaf reports whether the queue has no children and so may hold jobs.
func (q *QueueInfo) IsLeaf() bool {
	return len(q.Children) == 0
}

// IsValid reports whether the queue and all its ancestors are sound.
func (q *QueueInfo) IsValid() bool {
	return q.Problem == ""
}

// QueueShare is where a queue stands in a cycle's fair-share division, per quota resource
// (indexed like QueueInfo.Resources, in the resource's unit).
type QueueShare struct {
	// Deserved is what its quota earns: the quota (-1: all its parent has), capped by its
	// request and limit, never reduced for another queue.
	Deserved [NumQuotaResources]float64
	// FairShare is Deserved plus its part of what is left over the quotas beside it.
	FairShare [NumQuotaResources]float64
	// Requested is what its jobs hold or wait for, as the division counted it.
	Requested [NumQuotaResources]float64
	// Allocated is what its jobs hold now (bound, running, or promised), as the session's
	// decisions left it.
	Allocated [NumQuotaResources]float64
	// Divided is what its parent's fair share was (the cluster's capacity, for a top-level
	// queue): what it and its siblings' quotas were owed from, and what was left over them.
	Divided [NumQuotaResources]float64
}

// QueueSpecKey names a quota resource as a Queue's spec.resources does: gpu, cpu, memory.
func QueueSpecKey(r ResourceName) string {
	return [NumQuotaResources]string{CPU: "cpu", Memory: "memory", GPU: "gpu"}[r]
}

// QueueSpecUnit is how many of the scheduler's units of r (GPU thousandths, CPU millicores,
// memory bytes) one unit of a Queue's spec is: KAI gives memory quotas in megabytes (10^6
// bytes) and GPU quotas in devices, CPU as the scheduler counts it.
func QueueSpecUnit(r ResourceName) float64 {
	switch r {
	case Memory:
		return 1e6
	case GPU:
		return MilliGPU
	}
	return 1
}

// FormatQueueAmount writes an amount of a quota resource, in the scheduler's units, as a
// Queue's spec gives it — GPU devices, CPU millicores, memory megabytes — rounded to two
// decimals and named: the numbers a user compares with their queues' quotas and limits.
func FormatQueueAmount(r ResourceName, v float64) string {
	return string(AppendQueueAmount(nil, r, v))
}

// FormatQueueNumber is FormatQueueAmount without the unit: a further number of a sentence
// that named it once.
func FormatQueueNumber(r ResourceName, v float64) string {
	return string(AppendQueueNumber(nil, r, v))
}

// AppendQueueAmount appends FormatQueueAmount's text to dst: messages built of several amounts
// cost one buffer, not a string each.
func AppendQueueAmount(dst []byte, r ResourceName, v float64) []byte {
	dst = AppendQueueNumber(dst, r, v)
	switch {
	case r == GPU && math.Round(v/MilliGPU*100) == 100:
		return append(dst, " GPU"...)
	case r == GPU:
		return append(dst, " GPUs"...)
	case r == CPU:
		return append(dst, " millicores of CPU"...)
	case r == Memory:
		return append(dst, " MB of memory"...)
	}
	return append(append(dst, ' '), r.String()...)
}

// AppendQueueNumber appends FormatQueueNumber's text to dst.
func AppendQueueNumber(dst []byte, r ResourceName, v float64) []byte {
	return strconv.AppendFloat(dst, math.Round(v/QueueSpecUnit(r)*100)/100, 'f', -1, 64)
}
