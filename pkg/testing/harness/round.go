package harness

import (
	"context"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// Placement is a pod put on a node.
type Placement struct {
	Pod  string // namespace/name
	Job  model.JobID
	Node string
	// GPUGroups are the devices a share pod's shares were given, and Request what it is
	// charged there (both zero for other pods).
	GPUGroups []string
	Request   model.Resources
}

// Eviction is a pod evicted by an action for a preemptor.
type Eviction struct {
	Pod    string
	Job    model.JobID
	Node   string
	Reason framework.EvictionReason
}

// Start is a job stamped as started.
type Start struct {
	Job model.JobID
	At  time.Time
}

// Round is what one cycle did, in the order it did it.
type Round struct {
	Time  time.Time
	Binds []Placement
	// Pipelined are the pods placed onto resources being released, whether for this cycle
	// only or promised (Nominated lists those again: they are kept across cycles).
	Pipelined []Placement
	Nominated []Placement
	// Withdrawn are the pods whose promise was taken back (namespace/name).
	Withdrawn      []string
	Evictions      []Eviction
	Started        []Start
	PendingReasons map[model.JobID][]model.PendingReason
	QueueProblems  []model.QueueProblem
	// ProtectedRefusals counts, per action, victims refused because min-runtime protected them.
	ProtectedRefusals map[framework.ActionType]int
	// AnswersChangeAt is when an answer the cycle's plugins gave changes by time alone.
	AnswersChangeAt time.Time
	// ProtectionChanges are the protections the jobs' statuses are to show from now on.
	ProtectionChanges []model.ProtectionChange
}

// IsQuiet reports whether the cycle changed nothing in the cluster.
func (r Round) IsQuiet() bool {
	return len(r.Binds) == 0 && len(r.Evictions) == 0 && len(r.Pipelined) == 0 && len(r.Withdrawn) == 0
}

// BoundPods counts the pods bound per job name.
func (r Round) BoundPods() map[string]int {
	return countByJob(r.Binds)
}

// PipelinedPods counts the pods pipelined per job name.
func (r Round) PipelinedPods() map[string]int {
	return countByJob(r.Pipelined)
}

// EvictedPods counts the pods evicted per job name.
func (r Round) EvictedPods() map[string]int {
	counts := map[string]int{}
	for _, e := range r.Evictions {
		counts[jobName(e.Job)]++
	}
	return counts
}

// Reasons returns the messages of a job's pending reasons, by job name.
func (r Round) Reasons(name string) []string {
	return model.Messages(r.PendingReasons[model.NewJobID(Namespace, name)])
}

// ReasonCodes returns the reasons (for tools) a job waits for, by job name.
func (r Round) ReasonCodes(name string) []string {
	var codes []string
	for _, reason := range r.PendingReasons[model.NewJobID(Namespace, name)] {
		codes = append(codes, reason.Reason)
	}
	return codes
}

func countByJob(placements []Placement) map[string]int {
	counts := map[string]int{}
	for _, p := range placements {
		counts[jobName(p.Job)]++
	}
	return counts
}

func jobName(id model.JobID) string {
	return string(id)[len(Namespace)+1:]
}

// recorder is the harness's framework.Effects: it records what a cycle commits.
type recorder struct{ round *Round }

var _ framework.Effects = &recorder{}

// placementOf is a pod's placement on node as the cycle decided it.
func placementOf(pod *model.PodInfo, node string) Placement {
	p := Placement{Pod: pod.Key(), Job: pod.Job, Node: node}
	if pod.IsShare() {
		p.GPUGroups, p.Request = pod.GPUGroups, pod.Request
	}
	return p
}

func (r *recorder) Bind(_ context.Context, pod *model.PodInfo, node string) error {
	r.round.Binds = append(r.round.Binds, placementOf(pod, node))
	return nil
}

func (r *recorder) Evict(_ context.Context, pod *model.PodInfo, reason framework.EvictionReason) error {
	r.round.Evictions = append(r.round.Evictions, Eviction{Pod: pod.Key(), Job: pod.Job, Node: pod.NodeName, Reason: reason})
	return nil
}

func (r *recorder) Pipeline(_ context.Context, pod *model.PodInfo, node string) error {
	r.round.Pipelined = append(r.round.Pipelined, placementOf(pod, node))
	return nil
}

func (r *recorder) Nominate(_ context.Context, pod *model.PodInfo, node string) error {
	placement := placementOf(pod, node)
	r.round.Pipelined = append(r.round.Pipelined, placement)
	r.round.Nominated = append(r.round.Nominated, placement)
	return nil
}

func (r *recorder) CancelPipeline(_ context.Context, pod *model.PodInfo) error {
	r.round.Withdrawn = append(r.round.Withdrawn, pod.Key())
	return nil
}

func (r *recorder) RecordJobStart(_ context.Context, job *model.JobInfo, at time.Time) error {
	r.round.Started = append(r.round.Started, Start{Job: job.ID, At: at})
	return nil
}
