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

// solveInDomains plans evictions for a gang whose job, or one of its sub-groups, must run
// inside one domain of a level. The domain freed is the one that costs least — the fewest
// victim jobs, then the least precious victims (priority, queue, least lost work: the
// victims' rank), then the fewest victim pods. Searching every domain for every such gang
// would cost a search per domain, so the domains are first ranked by an estimate read from
// their nodes' options (what it takes to fit one of the gang's pods on each node, summed over
// the cheapest nodes the gang needs), and searched in that order: the first that can be
// freed, then those whose estimate still beats its plan, up to maxExtraDomainSearches. Inside
// the job's domain, each constrained sub-group is given the domain of its level estimated
// cheapest (see confine). A plan never makes room in a second domain (a victim gang that also
// runs elsewhere is still evicted whole): when no single domain can be freed, nothing is, and
// the reason names the level and the domain that came closest.
func solveInDomains(ssn *framework.Session, solver *Solver, job *model.JobInfo, gang []*model.PodInfo,
	limit *framework.LimitExceeded, shape string, topo *actions.GangTopology) (*Plan, string) {
	tg := topo.Root()
	snap := ssn.Snapshot()
	// Any domain whose nodes could hold the gang with every pod on them gone is a candidate.
	allocatable := func(i int) model.Resources { return snap.Nodes[i].Allocatable }
	levels := [][]actions.Region{{{}}} // the whole cluster, for a job whose sub-groups alone are constrained
	if tg.Required >= 0 {
		levels = tg.Candidates(snap, actions.Region{}, model.Request(gang), allocatable)
	}
	var best *Plan
	var closest struct {
		placed      int
		region, why string
		tried       int
	}
	closest.placed = -1
	for _, regions := range levels {
		estimates := []domainEstimate{{region: actions.Region{}}}
		if tg.Required >= 0 {
			estimates = solver.estimateDomains(job, gang, shape, regions)
		}
		extra := 0
		for _, e := range estimates {
			if best != nil && (extra == maxExtraDomainSearches || !e.beats(best)) {
				break
			}
			closest.tried++
			confined, why := solver.confine(job, gang, shape, topo, e.region, allocatable)
			var plan *Plan
			if why == "" {
				plan, why = solver.SolveIn(job, gang, limit, shape, confined)
			} else {
				solver.placed = 0
			}
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
	gangOf := "gang of " + plural.Count(len(gang), "pod", "pods")
	if tg.Required < 0 {
		return nil, gangOf + " does not fit its sub-groups' domains even with every allowed victim gone: " + closest.why
	}
	where := "in " + tg.Describe()
	if closest.tried == 0 {
		return nil, fmt.Sprintf("%s does not fit %s: no %s is large enough for it", gangOf, where, tg.Topology.LevelName(tg.Required))
	}
	region := closest.region
	if region != "" {
		region += ": "
	}
	return nil, fmt.Sprintf("%s does not fit %s even with every allowed victim gone: %s tried; closest, %s%s",
		gangOf, where, plural.Count(closest.tried, "domain", "domains"), region, closest.why)
}

// confine gives each gang pod the region it must run in: the job's region r (none for the
// whole cluster), and for the pods of a sub-group with a required level, the domain of that
// level inside its parent's estimated cheapest to free among those with room for it beside
// the sub-groups given the same domain before it. It returns why a sub-group has no such
// domain.
func (s *Solver) confine(job *model.JobInfo, gang []*model.PodInfo, shape string, topo *actions.GangTopology,
	r actions.Region, allocatable func(int) model.Resources) (map[*model.PodInfo]actions.Region, string) {
	confined := map[*model.PodInfo]actions.Region{}
	claimed := map[*model.Domain]model.Resources{} // what sub-groups were given in each domain
	snap := s.ssn.Snapshot()
	var assign func(tg *actions.TopologyGroup, r actions.Region) string
	assign = func(tg *actions.TopologyGroup, r actions.Region) string {
		if r.Nodes != nil {
			for _, p := range gang {
				if topo.GroupOf(p) == tg {
					confined[p] = r
				}
			}
		}
		for _, child := range topo.Children(tg) {
			var pods []*model.PodInfo
			for _, p := range gang {
				if topo.Under(p, child) {
					pods = append(pods, p)
				}
			}
			if len(pods) == 0 {
				continue
			}
			if child.Required < 0 {
				if why := assign(child, r); why != "" { // a preference only: its parent's region
					return why
				}
				continue
			}
			request := model.Request(pods)
			levels := child.Candidates(snap, r, request, allocatable)
			var regions []actions.Region // its required level's, with room beside its siblings'
			if len(levels) > 0 {
				for _, d := range levels[len(levels)-1] {
					if request.Add(claimed[d.Domain]).FitsIn(total(d, allocatable)) {
						regions = append(regions, d)
					}
				}
			}
			if len(regions) == 0 {
				return fmt.Sprintf("sub-group %s: no %s is large enough for it", child.Name, child.Topology.LevelName(child.Required))
			}
			chosen := s.estimateDomains(job, pods, shape, regions)[0].region
			claimed[chosen.Domain] = claimed[chosen.Domain].Add(request)
			if why := assign(child, chosen); why != "" {
				return why
			}
		}
		return ""
	}
	return confined, assign(topo.Root(), r)
}

// total is what a region's nodes have in all.
func total(r actions.Region, of func(int) model.Resources) model.Resources {
	var sum model.Resources
	for _, i := range r.Nodes {
		sum = sum.Add(of(i))
	}
	return sum
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
