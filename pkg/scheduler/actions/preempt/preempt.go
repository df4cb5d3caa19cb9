package preempt

import (
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions/victims"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// New returns the preempt action: the shared victim search with preempt's rules.
func New() *victims.Action { return victims.NewAction(rules{}) }

type rules struct{}

var _ victims.Rules = rules{}

func (rules) Action() framework.ActionType { return framework.Preempt }

// MayEvict: only strictly lower-priority jobs of the same leaf queue.
func (rules) MayEvict(preemptor, victim *model.JobInfo) bool {
	return victim.Queue == preemptor.Queue && victim.Priority < preemptor.Priority
}

// CompareVictimQueues has nothing to compare: all victims share the preemptor's queue.
func (rules) CompareVictimQueues(*framework.Session, *model.JobInfo, *model.JobInfo) int { return 0 }

// OwnQueueOnly: victims share the preemptor's leaf queue.
func (rules) OwnQueueOnly() bool { return true }

// Prospects keeps the jobs below the highest priority waiting in their own queue: no other
// job is anyone's victim. Ranking by priority, then start and name, is a total order, so
// leaving jobs out keeps the others' order.
func (rules) Prospects(preemptors []*model.JobInfo) func(victim *model.JobInfo) bool {
	highest := map[string]int32{}
	for _, p := range preemptors {
		if h, ok := highest[p.Queue]; !ok || p.Priority > h {
			highest[p.Queue] = p.Priority
		}
	}
	return func(victim *model.JobInfo) bool {
		h, ok := highest[victim.Queue]
		return ok && victim.Priority < h
	}
}
