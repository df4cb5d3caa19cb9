// Package reclaim lets a pending job take resources from jobs of other queues, when the
// fair-share plugin allows it (the reclaimer's queue is below its share, the victim's above).
// Priorities are not compared: reclaim restores fairness between queues.
package reclaim

import (
	"context"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions/victims"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
)

// Action is the reclaim action.
type Action struct{}

var _ framework.Action = &Action{}

// New returns the reclaim action.
func New() *Action { return &Action{} }

// Name is framework.Reclaim.
func (*Action) Name() framework.ActionType { return framework.Reclaim }

// Execute runs the shared victim search with reclaim's rules.
func (*Action) Execute(ctx context.Context, ssn *framework.Session) {
	victims.Run(ctx, ssn, rules{ssn: ssn})
}

type rules struct{ ssn *framework.Session }

func (rules) Action() framework.ActionType { return framework.Reclaim }

// MayEvict: only jobs of other queues.
func (rules) MayEvict(preemptor, victim *api.JobInfo) bool {
	return victim.Queue != preemptor.Queue
}

// CompareVictimQueues takes victims first from the queue that allocation would serve last,
// which under fair share is the queue furthest above its share.
func (r rules) CompareVictimQueues(l, k *api.JobInfo) int {
	queues := r.ssn.Snapshot().Queues
	return r.ssn.QueueOrder(queues.Get(k.Queue), queues.Get(l.Queue))
}

// OwnQueueOnly: victims are in other queues.
func (rules) OwnQueueOnly() bool { return false }
