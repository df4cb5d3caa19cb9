package framework

import (
	"context"
	"strings"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// Effects carries committed decisions out of the session: to the API server in production,
// to the in-memory cluster in the simulator, to a mock in tests.
type Effects interface {
	// Bind places an allocated pod on its node.
	Bind(ctx context.Context, pod *model.PodInfo, nodeName string) error
	// Evict starts the eviction of a pod, for the reason given.
	Evict(ctx context.Context, pod *model.PodInfo, reason EvictionReason) error
	// Pipeline tells that a pod was placed, for this cycle, onto resources still being
	// released on a node; the pod is not bound, and the next cycle places it anew.
	Pipeline(ctx context.Context, pod *model.PodInfo, nodeName string) error
	// Nominate promises a pod the resources its job's victims release on a node. The promise
	// must outlive the cycle (and a restart): it is kept as the pod's nominated node, which
	// the next snapshot reads back as a pipelined pod.
	Nominate(ctx context.Context, pod *model.PodInfo, nodeName string) error
	// CancelPipeline withdraws a promise that can no longer be kept: the pod is pending again
	// and nominated nowhere.
	CancelPipeline(ctx context.Context, pod *model.PodInfo) error
	// RecordJobStart persists that a job went from no active pods to a running gang at
	// startedAt, the session's now.
	RecordJobStart(ctx context.Context, job *model.JobInfo, startedAt time.Time) error
}

// EvictionReason says why a pod is evicted and for whom.
type EvictionReason struct {
	Action    ActionType
	Preemptor model.JobID
	Message   string
	// Note is what the plugins had to say about this victim (see EvictionNoteFn): its text
	// goes into the event the owner reads (Message stays as ParseEvictionMessage reads it),
	// its runtime into the runtime-at-eviction metric.
	Note EvictionNote
	// EndsRun is set when the eviction takes every running pod of the victim's job, which
	// ends its run: such an eviction is counted on the job (its PodGroup's status.evictions),
	// once for all its pods, by DecidedAt, the session's now. An elastic job losing surplus
	// pods keeps its run and is not counted.
	EndsRun   bool
	DecidedAt time.Time
}

// NewEvictionReason is the reason an eviction action gives its victims. Its Message is what
// victims carry in their DisruptionTarget condition (scheduling.EvictionMessage), which
// ParseEvictionMessage reads back: a victim still terminating after a restart must still be
// known as its preemptor's.
func NewEvictionReason(action ActionType, preemptor model.JobID) EvictionReason {
	return EvictionReason{Action: action, Preemptor: preemptor,
		Message: scheduling.EvictionMessage(string(action), string(preemptor))}
}

// ParseEvictionMessage reads the action and preemptor back from a message made by
// NewEvictionReason; ok is false for any other message.
func ParseEvictionMessage(message string) (action ActionType, preemptor model.JobID, ok bool) {
	a, p, ok := scheduling.ParseEvictionMessage(message)
	return ActionType(a), model.JobID(p), ok
}

// NewStaleGangReason is the reason stalegangeviction gives the pods of a stale gang, evicted
// for no job; text says why (the pods left, since when, the grace period). EvictionAction
// reads the action back from its Message.
func NewStaleGangReason(text string) EvictionReason {
	message := scheduling.StaleGangPrefix + text
	return EvictionReason{Action: StaleGangEviction, Message: message, Note: EvictionNote{Text: message}}
}

// EvictionAction reads back the action and preemptor of any eviction message this scheduler
// writes: NewEvictionReason's, and NewStaleGangReason's (no preemptor). ok is false for any
// other message.
func EvictionAction(message string) (action ActionType, preemptor model.JobID, ok bool) {
	if strings.HasPrefix(message, scheduling.StaleGangPrefix) {
		return StaleGangEviction, "", true
	}
	return ParseEvictionMessage(message)
}
