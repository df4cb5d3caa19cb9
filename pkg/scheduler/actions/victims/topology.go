package victims

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/kai-minruntime/kai-scheduler/pkg/plural"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// solveInDomains plans evictions for a gang whose job must run inside one domain of a level.
// The domain freed is the one that costs least — the fewest victim jobs, then the least
// precious victims (priority, queue, least lost work: the victims' rank), then the fewest
// victim pods. Searching every domain for every such gang would cost a search per domain, so
// the domains are first ranked by an estimate read from their nodes' options (what it takes
// to fit one of the gang's pods on each node, summed over the cheapest nodes the gang needs),
// and searched in that order: the first that can be freed, then those whose estimate still
// beats its plan, up to maxExtraDomainSearches. A plan never evicts in a second domain:
// when no single domain can be freed, nothing is, and the reason names the level and the
// domain that came closest.
func solveInDomains(ssn *framework.Session, solver *Solver, job *model.JobInfo, gang []*model.PodInfo,
	limit *framework.LimitExceeded, shape string, topo *actions.GangTopology) (*Plan, string) {
	tg := topo.Root()
	snap := ssn.Snapshot()
	// Any domain whose nodes could hold the gang with every pod on them gone is a candidate.
	allocatable := func(i int) model.Resources { return snap.Nodes[i].Allocatable }
	var best *Plan
	var closest struct {
		placed      int
		region, why string
		tried       int
	}
	closest.placed = -1
	for _, regions := range tg.Candidates(snap, actions.Region{}, model.Request(gang), allocatable) {
		estimates := solver.estimateDomains(job, gang, shape, regions)
		extra := 0
		for _, e := range estimates {
			if best != nil && (extra == maxExtraDomainSearches || !e.beats(best)) {
				break
			}
			closest.tried++
			plan, why := solver.SolveIn(job, gang, limit, shape, e.region)
			if plan == nil {
				if solver.placed > closest.placed {
					closest.placed, closest.region, closest.why = solver.placed, e.region.Name, why
				}
			} else if best == nil || cheaper(plan, best) {
				best = plan
			}
			if best != nil {
				extra++
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

// maxExtraDomainSearches bounds the domains searched after the first that can be freed.
const maxExtraDomainSearches = 2

// domainEstimate is what freeing a domain for a gang would cost, read from its nodes'
// options for the gang's first pod: on the cheapest nodes the gang needs (one pod each), the
// victim jobs to evict and the rank of the most precious of their units. short is how many
// pods would find no such node.
type domainEstimate struct {
	region      actions.Region
	short, jobs int
	worst       int
}

// beats reports whether the estimate is below what plan costs: a domain worth searching once
// plan is found.
func (e domainEstimate) beats(plan *Plan) bool {
	return e.short == 0 && cmp.Or(cmp.Compare(e.jobs, plan.MovedJobs()), cmp.Compare(e.worst, int(plan.worst))) < 0
}

// estimateDomains ranks the regions for the gang, cheapest estimate first (ties in the
// candidates' order). Each node's option is computed as a search would (the pod's
// predicates, the units in rank order, those the rules and plugins allow), on the nodes as
// they stand, and kept (Solver.estimates) until the node moves: the gangs of a cycle read
// every node's, but only the nodes the plans before them changed are walked again.
func (s *Solver) estimateDomains(preemptor *model.JobInfo, gang []*model.PodInfo, shape string, regions []actions.Region) []domainEstimate {
	s.startSearch(shape)
	st := &search{preemptor: preemptor, sc: newScenario(preemptor), units: s.byNode}
	if s.rules.OwnQueueOnly() {
		if st.units = s.byQueue[preemptor.Queue]; st.units == nil {
			st.units = make([][]nodeUnit, len(s.nodes))
		}
	}
	pod := gang[0]
	s.refresh(&s.estimates, st, pod, true)
	var costs []*optionEntry
	estimates := make([]domainEstimate, 0, len(regions))
	for _, r := range regions {
		costs = costs[:0]
		for _, i := range r.Nodes {
			if e := &s.estimates.entries[i]; e.feasible {
				costs = append(costs, e)
			}
		}
		slices.SortFunc(costs, func(a, b *optionEntry) int {
			if better(a.option, b.option) {
				return -1
			}
			return 1
		})
		e := domainEstimate{region: r, worst: -1, short: max(len(gang)-len(costs), 0)}
		jobs := map[model.JobID]bool{} // a unit on several nodes, or a job's units, count once
		for _, c := range costs[:min(len(gang), len(costs))] {
			e.worst = max(e.worst, c.worst)
			for _, u := range c.took {
				jobs[u.job.ID] = true
			}
		}
		e.jobs = len(jobs)
		estimates = append(estimates, e)
	}
	slices.SortStableFunc(estimates, func(a, b domainEstimate) int {
		return cmp.Or(cmp.Compare(a.short, b.short), cmp.Compare(a.jobs, b.jobs), cmp.Compare(a.worst, b.worst))
	})
	return estimates
}

// cheaper reports whether plan a costs less than plan b: fewer victim jobs, less precious
// victims, fewer victim pods.
func cheaper(a, b *Plan) bool {
	return cmp.Or(cmp.Compare(a.MovedJobs(), b.MovedJobs()), cmp.Compare(a.worst, b.worst),
		cmp.Compare(len(a.Victims), len(b.Victims))) < 0
}
