package proportion

import (
	"fmt"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
)

// reclaimFilter vets a reclaim scenario against fair share. For each victim job, in the order
// the solver chose them, it finds the two sibling branches under the lowest common ancestor of
// the reclaimer's and the victim's leaf queues. The reclaim is fair if the reclaimer's branch,
// with the gang added, stays within its fair share while the victim's branch (less what the
// scenario already takes from it) is above its own; or if the reclaimer's branch stays within
// deserved quota while the victim's is above its deserved quota.
type reclaimFilter struct {
	growthFilter
}

var _ framework.PlanFilter = &reclaimFilter{}

func newReclaimFilter(st *shareState, job *api.JobInfo, taskOrder func(l, r *api.PodInfo) int) *reclaimFilter {
	return &reclaimFilter{*newGrowthFilter(st, job, taskOrder, framework.Reclaim)}
}

func (f *reclaimFilter) Name() string { return Name }

// Allows checks every victim job of the scenario. An empty scenario is allowed only if the
// reclaimer is within share or quota at some level, without which no victim can qualify.
func (f *reclaimFilter) Allows(sc framework.Scenario) (bool, string) {
	reclaimerChain := f.st.chain(f.preemptor.Queue)
	if len(sc.VictimJobs()) == 0 {
		for _, q := range reclaimerChain {
			if f.fitsShare(q) || f.fitsQuota(q) {
				return true, ""
			}
		}
		return false, fmt.Sprintf("queue %q is at or above its fair share", f.preemptor.Queue)
	}
	taken := map[*queueState]Vector{} // what the scenario takes from each victim branch
	for _, victim := range sc.VictimJobs() {
		victimChain := f.st.chain(victim.Queue)
		if len(victimChain) == 0 {
			// The victim's queue is missing or invalid: it has no share to protect.
			if len(reclaimerChain) == 0 || !(f.fitsShare(reclaimerChain[0]) || f.fitsQuota(reclaimerChain[0])) {
				return false, fmt.Sprintf("queue %q is at or above its fair share", f.preemptor.Queue)
			}
			continue
		}
		d := 0
		for d < len(reclaimerChain) && d < len(victimChain) && reclaimerChain[d] == victimChain[d] {
			d++
		}
		if d == len(reclaimerChain) || d == len(victimChain) {
			return false, fmt.Sprintf("job %s shares queue %q with the reclaimer", victim.ID, victim.Queue)
		}
		mine, theirs := reclaimerChain[d], victimChain[d]
		// Each unit (a surplus pod, or a whole gang) must find the victim's branch above its
		// share before it goes; otherwise one elastic job could be drained below its quota.
		for _, unit := range sc.VictimUnits(victim.ID) {
			var evicting Vector
			for _, p := range unit {
				evicting = evicting.add(fromResources(p.Request))
			}
			remaining := theirs.allocated.sub(taken[theirs])
			fair := f.fitsShare(mine) && above(remaining, theirs.fair, evicting) &&
				keepsQuota(theirs, remaining.sub(evicting), evicting)
			quota := f.fitsQuota(mine) && above(remaining, theirs.deserved, evicting)
			if !fair && !quota {
				return false, fmt.Sprintf("reclaiming from queue %q for queue %q would not be fair", theirs.info.Name, mine.info.Name)
			}
			taken[theirs] = taken[theirs].add(evicting)
		}
	}
	return true, ""
}

// fitsShare reports whether the branch stays within its fair share with the gang added.
func (f *reclaimFilter) fitsShare(q *queueState) bool {
	return within(q.allocated.add(f.gang), q.fair, f.gang)
}

// fitsQuota reports whether the branch stays within its deserved quota with the gang added.
func (f *reclaimFilter) fitsQuota(q *queueState) bool {
	return within(q.allocated.add(f.gang), q.deserved, f.gang)
}

// within reports whether have <= limit in every resource the request asks for.
func within(have, limit, request Vector) bool {
	for _, r := range api.QuotaResources {
		if request[r] > 0 && exceeds(have[r], limit[r]) {
			return false
		}
	}
	return true
}

// keepsQuota reports whether the victim's branch, left with what remains once the victim
// pods are gone, still holds its deserved quota of every resource they hold that it has a
// quota for — where it could win that quota back. Fair share alone must not take a branch
// below its deserved quota if the branch would then be owed it and reclaim it back by the
// quota rule: with jobs whose gangs are larger than the quotas between them, round and
// round. It could when it still wants more than it holds (other jobs wait in it), or when
// the evicted pods themselves fit back within its quota. A branch whose only job is a gang
// larger than its quota cannot, and keeping it would starve the reclaimer. (An owner
// getting back its quota, the quota rule, may leave the victim below its own.)
func keepsQuota(q *queueState, left, victims Vector) bool {
	for _, r := range api.QuotaResources {
		if victims[r] == 0 || q.info.Resources[r].Quota == api.Unlimited || !exceeds(q.deserved[r], left[r]) {
			continue
		}
		waiting := exceeds(q.request[r], q.allocated[r])
		fitsBack := !exceeds(left[r]+victims[r], q.deserved[r])
		if waiting || fitsBack {
			return false
		}
	}
	return true
}

// above reports whether have > limit in some resource the victim pods hold.
func above(have, limit, victims Vector) bool {
	for _, r := range api.QuotaResources {
		if victims[r] > 0 && exceeds(have[r], limit[r]) {
			return true
		}
	}
	return false
}
