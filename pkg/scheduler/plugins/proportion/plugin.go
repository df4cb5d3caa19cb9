// Package proportion shares the cluster fairly between queues. Each cycle it computes every
// queue's fair share (deserved quota first, the rest by priority and over-quota weight, see
// FairShares), then:
//   - orders queues for allocation, least served first, comparing sibling branches;
//   - refuses allocations beyond a queue's limit, and non-preemptible jobs beyond deserved
//     quota, at every level of the tree;
//   - vets reclaim scenarios: a reclaimer's branch must stay within its share (or quota)
//     while every victim's branch is above its own, between the two branches under their
//     lowest common ancestor;
//   - tells where each queue stands (QueueShare), for its status, metrics and explanations;
//   - vets finished reclaim and preempt plans: no queue may grow above its fair share
//     through an eviction plan (the gang, less the victims under it), or it would be
//     reclaimed from at once. So evictions can never bounce resources back and forth.
package proportion

import (
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// Name is the plugin's name in the scheduler configuration.
const Name = "proportion"

type plugin struct{}

var _ framework.Plugin = plugin{}

// New builds the plugin; it takes no arguments.
func New(args framework.Arguments) (framework.Plugin, error) {
	return plugin{}, framework.RejectArguments(args)
}

func (plugin) Name() string { return Name }

// OnSessionOpen computes this cycle's shares and registers the hooks. The state lives in the
// closures, so it ends with the session.
func (plugin) OnSessionOpen(ssn *framework.Session) {
	st := newShareState(ssn.Snapshot(), ssn.TaskOrder)
	ssn.AddQueueOrderFn(Name, st.compareQueues)
	ssn.AddAllocatableFn(Name, st.allocatable)
	ssn.AddPodStatusChangeFn(Name, st.podStatusChanged)
	ssn.AddQueueShareFn(Name, st.queueShare)
	ssn.AddScenarioFiltersFn(Name, func(action framework.ActionType, job *model.JobInfo) []framework.ScenarioFilter {
		switch action {
		case framework.Reclaim:
			return []framework.ScenarioFilter{newReclaimFilter(st, job, ssn.TaskOrder)}
		case framework.Preempt:
			return []framework.ScenarioFilter{newGrowthFilter(st, job, ssn.TaskOrder, action)}
		}
		return nil
	})
}

func (plugin) OnSessionClose(*framework.Session) {}
