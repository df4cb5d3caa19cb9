package victims

import (
	"cmp"
	"fmt"

	"github.com/kai-minruntime/kai-scheduler/pkg/plural"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// solveInDomains plans evictions for a gang whose job must run inside one domain of a level:
// a plan is searched in every candidate domain, and the one that costs least is kept — the
// fewest victim jobs, then the least precious victims (priority, queue, least lost work: the
// victims' rank), then the fewest victim pods, then the candidates' order. A plan never
// evicts in a second domain: when no single domain can be freed, nothing is, and the reason
// names the level and the domain that came closest.
func solveInDomains(ssn *framework.Session, solver *Solver, job *model.JobInfo, gang []*model.PodInfo,
	limit *framework.LimitExceeded, shape string, topo *actions.GangTopology) (*Plan, string) {
	tg := topo.Root()
	snap := ssn.Snapshot()
	// Any domain whose nodes could hold the gang with every pod on them gone is a candidate;
	// the searches tell which can really be freed.
	allocatable := func(i int) model.Resources { return snap.Nodes[i].Allocatable }
	var best *Plan
	var closest struct {
		placed      int
		region, why string
		tried       int
	}
	closest.placed = -1
	for _, regions := range tg.Candidates(snap, actions.Region{}, model.Request(gang), allocatable) {
		for _, r := range regions {
			closest.tried++
			plan, why := solver.SolveIn(job, gang, limit, shape, r)
			if plan == nil {
				if solver.placed > closest.placed {
					closest.placed, closest.region, closest.why = solver.placed, r.Name, why
				}
				continue
			}
			if best == nil || cheaper(plan, best) {
				best = plan
			}
		}
		if best != nil {
			break // a domain of the deepest level that can be freed: wider ones would spread the gang
		}
	}
	if best != nil {
		return best, ""
	}
	where := "in " + tg.Describe()
	if closest.tried == 0 {
		return nil, fmt.Sprintf("gang of %s does not fit %s: no %s is large enough for it", plural.Count(len(gang), "pod", "pods"),
			where, tg.Topology.LevelName(tg.Required))
	}
	return nil, fmt.Sprintf("gang of %s does not fit %s even with every allowed victim gone: %s tried; closest, %s: %s",
		plural.Count(len(gang), "pod", "pods"), where, plural.Count(closest.tried, "domain", "domains"), closest.region, closest.why)
}

// cheaper reports whether plan a costs less than plan b: fewer victim jobs, less precious
// victims, fewer victim pods.
func cheaper(a, b *Plan) bool {
	return cmp.Or(cmp.Compare(a.MovedJobs(), b.MovedJobs()), cmp.Compare(a.worst, b.worst),
		cmp.Compare(len(a.Victims), len(b.Victims))) < 0
}
