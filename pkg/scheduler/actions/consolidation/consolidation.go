package consolidation

import (
	"strconv"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions/victims"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// DefaultMaxMovedJobs is how many jobs a cycle may move unless told otherwise: upstream
// KAI-Scheduler's default of --max-consolidation-preemptees.
const DefaultMaxMovedJobs = 16

// Action is the consolidation action: the shared victim search with rules that move their
// victims rather than end them.
type Action struct {
	*victims.Action
	rules *rules
}

var (
	_ framework.Action    = &Action{}
	_ framework.Describer = &Action{}
)

// New returns the consolidation action, moving at most DefaultMaxMovedJobs jobs a cycle.
func New() *Action {
	r := &rules{maxMoved: DefaultMaxMovedJobs}
	return &Action{Action: victims.NewAction(r), rules: r}
}

// SetMaxMovedJobs sets how many jobs a cycle may move; 0 turns the action off.
func (a *Action) SetMaxMovedJobs(n int) { a.rules.maxMoved = n }

// MayMove reports whether the action, as configured, may move victim for job: it runs (a
// limit above 0), and its rules let job have room made and victim be moved. Protections are
// the plugins' to judge.
func (a *Action) MayMove(job, victim *model.JobInfo) bool {
	return a.rules.maxMoved > 0 && a.rules.MovesFor(job) && a.rules.MayEvict(job, victim)
}

// Settings names what the action runs with.
func (a *Action) Settings() []string {
	return []string{"maxConsolidationPreemptees=" + strconv.Itoa(a.rules.maxMoved)}
}

type rules struct{ maxMoved int }

var (
	_ victims.Rules = &rules{}
	_ victims.Mover = &rules{}
)

func (*rules) Action() framework.ActionType { return framework.Consolidation }

// MayEvict: a job of any queue whose priority is not above the preemptor's. A moved job
// keeps its queue's share (it is placed again), so queues are not compared; it only
// restarts, which a job of higher priority is not made to do for a lower one.
func (*rules) MayEvict(preemptor, victim *model.JobInfo) bool {
	return victim.Priority <= preemptor.Priority
}

// CompareVictimQueues has nothing to compare: a move takes nothing from a queue.
func (*rules) CompareVictimQueues(*framework.Session, *model.JobInfo, *model.JobInfo) int { return 0 }

// OwnQueueOnly: victims may be in any queue.
func (*rules) OwnQueueOnly() bool { return false }

// Prospects keeps every job.
func (*rules) Prospects([]*model.JobInfo) func(victim *model.JobInfo) bool { return nil }

func (r *rules) MaxMovedJobs() int { return r.maxMoved }

// MovesFor: only preemptible jobs are made room for, as upstream: a job that may not be
// preempted is not one whose placement others restart for (reclaim and preempt serve it).
func (*rules) MovesFor(preemptor *model.JobInfo) bool { return preemptor.Preemptible }
