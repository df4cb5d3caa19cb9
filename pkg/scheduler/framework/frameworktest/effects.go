package frameworktest

import (
	"context"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// Call is one call a framework.Effects received: its method and what it was about.
type Call struct {
	Method string
	Pod    string // namespace/name, for the calls about a pod
	Job    model.JobID
	Node   string
	Reason framework.EvictionReason
	At     time.Time
}

// Effects is a framework.Effects that records every call, in order, and answers each with
// Fail's error (nil when Fail is nil): a test says what a commit must send, and in which
// order, by comparing Calls with the calls Bound, Evicted, Pipelined, Nominated, Cancelled
// and Stamped describe.
type Effects struct {
	Calls []Call
	Fail  func(Call) error
}

var _ framework.Effects = &Effects{}

func (e *Effects) record(c Call) error {
	e.Calls = append(e.Calls, c)
	if e.Fail == nil {
		return nil
	}
	return e.Fail(c)
}

func (e *Effects) Bind(_ context.Context, pod *model.PodInfo, node string) error {
	return e.record(Bound(pod, node))
}

func (e *Effects) Evict(_ context.Context, pod *model.PodInfo, reason framework.EvictionReason) error {
	return e.record(Evicted(pod, reason))
}

func (e *Effects) Pipeline(_ context.Context, pod *model.PodInfo, node string) error {
	return e.record(Pipelined(pod, node))
}

func (e *Effects) Nominate(_ context.Context, pod *model.PodInfo, node string) error {
	return e.record(Nominated(pod, node))
}

func (e *Effects) CancelPipeline(_ context.Context, pod *model.PodInfo) error {
	return e.record(Cancelled(pod))
}

func (e *Effects) RecordJobStart(_ context.Context, job *model.JobInfo, at time.Time) error {
	return e.record(Stamped(job, at))
}

// Bound is the call that binds pod to node.
func Bound(pod *model.PodInfo, node string) Call {
	return Call{Method: "Bind", Pod: pod.Key(), Job: pod.Job, Node: node}
}

// Evicted is the call that evicts pod for reason.
func Evicted(pod *model.PodInfo, reason framework.EvictionReason) Call {
	return Call{Method: "Evict", Pod: pod.Key(), Job: pod.Job, Reason: reason}
}

// Pipelined is the call that tells pod was placed, for this cycle, on node.
func Pipelined(pod *model.PodInfo, node string) Call {
	return Call{Method: "Pipeline", Pod: pod.Key(), Job: pod.Job, Node: node}
}

// Nominated is the call that promises pod the resources released on node.
func Nominated(pod *model.PodInfo, node string) Call {
	return Call{Method: "Nominate", Pod: pod.Key(), Job: pod.Job, Node: node}
}

// Cancelled is the call that withdraws pod's promise.
func Cancelled(pod *model.PodInfo) Call {
	return Call{Method: "CancelPipeline", Pod: pod.Key(), Job: pod.Job}
}

// Stamped is the call that records job's start at at.
func Stamped(job *model.JobInfo, at time.Time) Call {
	return Call{Method: "RecordJobStart", Job: job.ID, At: at}
}

// Discard is a framework.Effects that accepts everything and keeps nothing, for benchmarks
// that measure decisions and not their recording.
type Discard struct{}

var _ framework.Effects = Discard{}

func (Discard) Bind(context.Context, *model.PodInfo, string) error { return nil }
func (Discard) Evict(context.Context, *model.PodInfo, framework.EvictionReason) error {
	return nil
}
func (Discard) Pipeline(context.Context, *model.PodInfo, string) error          { return nil }
func (Discard) Nominate(context.Context, *model.PodInfo, string) error          { return nil }
func (Discard) CancelPipeline(context.Context, *model.PodInfo) error            { return nil }
func (Discard) RecordJobStart(context.Context, *model.JobInfo, time.Time) error { return nil }
