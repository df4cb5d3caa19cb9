// Package preempt lets a pending job take resources from strictly lower-priority jobs of its
// own leaf queue. Jobs of equal priority never preempt each other, so two jobs cannot take
// turns evicting one another.
package preempt

import (
	"context"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions/victims"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
)

// Action is the preempt action.
type Action struct{}

var _ framework.Action = &Action{}

// New returns the preempt action.
func New() *Action { return &Action{} }

// Name is framework.Preempt.
func (*Action) Name() framework.ActionType { return framework.Preempt }

// Execute runs the shared victim search with preempt's rules.
func (*Action) Execute(ctx context.Context, ssn *framework.Session) {
	victims.Run(ctx, ssn, rules{})
}

type rules struct{}

func (rules) Action() framework.ActionType { return framework.Preempt }

// MayEvict: only strictly lower-priority jobs of the same leaf queue.
func (rules) MayEvict(preemptor, victim *api.JobInfo) bool {
	return victim.Queue == preemptor.Queue && victim.Priority < preemptor.Priority
}

// CompareVictimQueues has nothing to compare: all victims share the preemptor's queue.
func (rules) CompareVictimQueues(_, _ *api.JobInfo) int { return 0 }

// OwnQueueOnly: victims share the preemptor's leaf queue.
func (rules) OwnQueueOnly() bool { return true }
