package model

import (
	"strings"
	"time"
)

// PendingReason is one explanation of why a job waits: Reason is for tools (a CamelCase
// word, as in Kubernetes conditions and events), Message for people.
type PendingReason struct {
	Reason  string
	Message string
	// LongestMinRuntime is, for ReasonMinRuntimeProtected, the longest min-runtime among
	// every protection that refused the job a victim (the message names only those that end
	// first): the most the job can be held back, which kai-sim checks an owner's wait
	// against. Zero for the other reasons.
	LongestMinRuntime time.Duration
}

// The reasons a job may wait for.
const (
	// ReasonUnschedulable: the job does not fit, for a reason the message tells.
	ReasonUnschedulable = "Unschedulable"
	// ReasonMinRuntimeProtected: the jobs that could make room are protected by their
	// min-runtime; the message names them and when each protection ends.
	ReasonMinRuntimeProtected = "MinRuntimeProtected"
	// ReasonPreemptionDelayNotElapsed: the job may not evict others yet; the message says
	// when its preemption delay ends. It still takes free capacity.
	ReasonPreemptionDelayNotElapsed = "PreemptionDelayNotElapsed"
	// ReasonInvalidPreemptionDelay: the job's preemption-delay annotation is not a
	// non-negative Go duration; the job is treated as having no delay.
	ReasonInvalidPreemptionDelay = "InvalidPreemptionDelay"
	// ReasonInvalidMinRuntimeAnnotation: the job's preempt- or reclaim-min-runtime
	// annotation is not a non-negative Go duration; it is ignored.
	ReasonInvalidMinRuntimeAnnotation = "InvalidMinRuntimeAnnotation"
	// ReasonInvalidEscalationAnnotation: a Queue's escalation-factor or escalation-ceiling
	// annotation cannot be read; the queue inherits the setting (told as an event on the
	// Queue).
	ReasonInvalidEscalationAnnotation = "InvalidEscalationAnnotation"
	// ReasonUnlimitedQuota: a Queue's quota of a resource is -1 beside queues with quotas
	// above zero, which it over-subscribes (told as an event on the Queue; see
	// QueueTree.UnlimitedQuotas).
	ReasonUnlimitedQuota = "UnlimitedQuota"
	// ReasonMinRuntimeNotShortened: the job's min-runtime annotation is at or above the
	// min-runtime its queues give it; an annotation may only shorten, so it is not honoured.
	ReasonMinRuntimeNotShortened = "MinRuntimeNotShortened"
	// ReasonAwaitingReleasedResources: the job is placed, on resources its victims are still
	// releasing, which are promised to it; the message says where. It is on its way, not
	// stuck.
	ReasonAwaitingReleasedResources = "AwaitingReleasedResources"
	// ReasonInvalidGPUShare: a pod's GPU-sharing annotations ask for a share upstream KAI
	// refuses (gpu-fraction outside (0, 1), a share beside whole GPUs, ...): its job is not
	// scheduled.
	ReasonInvalidGPUShare = "InvalidGPUShare"
)

// Unschedulable is a pending reason with the general reason and the given message.
func Unschedulable(message string) PendingReason {
	return PendingReason{Reason: ReasonUnschedulable, Message: message}
}

// Messages lists the reasons' messages in order.
func Messages(reasons []PendingReason) []string {
	messages := make([]string, len(reasons))
	for i, r := range reasons {
		messages[i] = r.Message
	}
	return messages
}

// JoinMessages joins the reasons' messages with "; ", as a condition's message.
func JoinMessages(reasons []PendingReason) string {
	return strings.Join(Messages(reasons), "; ")
}
