package reclaim

import (
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions/victims"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// New returns the reclaim action: the shared victim search with reclaim's rules.
func New() *victims.Action { return victims.NewAction(rules{}) }

type rules struct{}

var _ victims.Rules = rules{}

func (rules) Action() framework.ActionType { return framework.Reclaim }

// MayEvict: only jobs of other queues.
func (rules) MayEvict(preemptor, victim *model.JobInfo) bool {
	return victim.Queue != preemptor.Queue
}

// CompareVictimQueues takes victims first from the queue that allocation would serve last,
// which under fair share is the queue furthest above its share. A job whose queue is
// missing or invalid has no share at all and goes first.
func (rules) CompareVictimQueues(ssn *framework.Session, l, r *model.JobInfo) int {
	queues := ssn.Snapshot().Queues
	lq, rq := queues.Get(l.Queue), queues.Get(r.Queue)
	lValid, rValid := lq != nil && lq.IsValid(), rq != nil && rq.IsValid()
	switch {
	case !lValid && !rValid:
		return 0
	case !lValid:
		return -1
	case !rValid:
		return 1
	}
	return ssn.QueueOrder(framework.QueueTurn{Queue: rq}, framework.QueueTurn{Queue: lq})
}

// OwnQueueOnly: victims are in other queues.
func (rules) OwnQueueOnly() bool { return false }

// Prospects keeps every job: the queue order that ranks victims need not be transitive, so
// leaving jobs out could reorder the rest.
func (rules) Prospects([]*model.JobInfo) func(victim *model.JobInfo) bool { return nil }
