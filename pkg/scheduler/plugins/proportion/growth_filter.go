package proportion

import (
	"fmt"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// growthFilter judges a finished eviction plan by what it does to the preemptor's queues: a
// queue whose allocation the plan increases — the gang placed, less what the victims under
// it release — must stay within its fair share of every resource that grows. A plan that
// pushes a queue above its share (a large preemptor taking idle GPUs beside its small
// victim, or a reclaimer's department growing past its share against a cousin) would make
// that queue a victim at once: the next reclaim takes the resources away again, and jobs
// evict one another in a ring. Partial plans are not judged: more victims only help.
type growthFilter struct {
	st        *shareState
	preemptor *model.JobInfo
	gang      Vector
	action    framework.ActionType
}

var _ framework.PlanFilter = &growthFilter{}

func newGrowthFilter(st *shareState, job *model.JobInfo, taskOrder func(l, r *model.PodInfo) int, action framework.ActionType) *growthFilter {
	f := &growthFilter{st: st, preemptor: job, action: action}
	if gang, err := job.GangPods(taskOrder); err == nil {
		f.gang = fromResources(model.Request(gang))
	}
	return f
}

func (f *growthFilter) Name() string { return Name }

// Allows accepts every partial plan; the rule is about the finished one.
func (f *growthFilter) Allows(framework.Scenario) framework.Status { return framework.Status{} }

// AllowsPlan checks every queue from the preemptor's leaf up to the top.
func (f *growthFilter) AllowsPlan(sc framework.Scenario) framework.Status {
	chain := f.st.chain(f.preemptor.Queue)
	for k, q := range chain {
		released := f.releasedUnder(sc, chain[:k+1])
		for _, r := range model.QuotaResources {
			grows := f.gang[r] - released[r]
			if f.gang[r] > 0 && grows > 0 && exceeds(q.allocated[r]+grows, q.fair[r]) {
				return framework.NewStatus(framework.Unschedulable, fmt.Sprintf("%s would take queue %q above its fair share of %s: %s with the gang, fair share %s",
					f.action, q.info.Name, r, model.FormatQueueAmount(r, q.allocated[r]+grows), model.FormatQueueNumber(r, q.fair[r])))
			}
		}
	}
	return framework.Status{}
}

// releasedUnder sums the requests of the plan's victims whose leaf queue lies under the last
// queue of path (a prefix of the preemptor's chain, from the top).
func (f *growthFilter) releasedUnder(sc framework.Scenario, path []*queueState) Vector {
	var released Vector
	for _, victim := range sc.VictimJobs() {
		victimChain := f.st.chain(victim.Queue)
		if len(victimChain) < len(path) || victimChain[len(path)-1] != path[len(path)-1] {
			continue
		}
		for _, p := range sc.VictimPods(victim.ID) {
			released = released.add(fromResources(p.Request))
		}
	}
	return released
}
