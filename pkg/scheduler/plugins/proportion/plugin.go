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
