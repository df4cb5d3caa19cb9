package victims

import (
	"cmp"
	"slices"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// unit is a set of pods evicted together: one surplus pod of an elastic job, or a job's whole
// gang (all its running pods).
//
// Its fields are laid out to keep it at 64 bytes: every cycle lists a unit or more per
// running preemptible job.
type unit struct {
	job *model.JobInfo
	// jobIndex numbers the unit's job densely among the candidates, for per-search lookups
	// that must not allocate; queueIndex numbers its queue the same way.
	jobIndex, queueIndex int32
	pods                 []*model.PodInfo
	// saved is the job's saved point (model.JobInfo.SavedPoint), worked out once per search:
	// the comparator asks for it over and over.
	saved model.SavedOrder
	whole bool
	// rank is the unit's place in the preference order: lower is evicted first.
	rank int32
}

// isEvictable reports whether a pod can be a victim: it runs (or is bound) on a node.
func isEvictable(p *model.PodInfo) bool {
	return p.Status == model.Running || p.Status == model.Bound
}

// unitsOf splits a running preemptible job into its surplus pods (last pods first, each one
// the job can lose while keeping its gang and every sub-group minimum) and its whole gang.
func unitsOf(job *model.JobInfo) []*unit {
	var running []*model.PodInfo
	for _, p := range job.Pods {
		if isEvictable(p) {
			running = append(running, p)
		}
	}
	if len(running) == 0 {
		return nil
	}
	// Units come from one array, and a surplus pod's list is its place in running (capped,
	// so that no append can spill into its neighbour): victims are listed every cycle.
	all := make([]unit, 0, len(running)+1)
	guard := job.NewMinimumGuard()
	for i := len(running) - 1; i >= 0; i-- {
		p := running[i]
		if guard.Shortfall(p).Breaks() {
			continue
		}
		all = append(all, unit{job: job, pods: running[i : i+1 : i+1]})
		guard.Lose(p)
	}
	if !grewThisCycle(job) {
		all = append(all, unit{job: job, pods: running, whole: true})
	}
	units := make([]*unit, len(all))
	for i := range all {
		units[i] = &all[i]
	}
	return units
}

// grewThisCycle reports whether pods of the job were allocated in this session: they are not
// bound yet, so a whole-gang eviction, which lists the running pods, would leave them
// running below the job's minimum. Such a job is not offered whole until they are bound, a
// cycle later (the property suite's G1 checks that no gang is ever left so).
func grewThisCycle(job *model.JobInfo) bool {
	for _, p := range job.Pods {
		if p.Status == model.Allocated {
			return true
		}
	}
	return false
}

// rankUnits sorts units into the stable preference order of victims: lower priority first;
// then the action's queue preference (reclaim: the queue furthest above its fair share);
// then surplus pods before whole gangs; then the job with the latest saved point, its last
// checkpoint within its run or else its start stamp (least work lost; a job with neither
// counts as the oldest); then by job and pod name.
//
// queues is how many distinct queueIndex values the units carry: a sort compares the same
// few queues over and over, so each pair's answer is asked once and remembered.
func rankUnits(units []*unit, queues int, compareQueues func(l, r *model.JobInfo) int) {
	// known[l*queues+r] is compareQueues' answer plus 2, or 0 while not asked; beyond
	// maxRememberedQueues the table would outgrow what it saves, and every pair is asked.
	var known []int8
	if queues <= maxRememberedQueues {
		known = make([]int8, queues*queues)
	}
	slices.SortStableFunc(units, func(l, r *unit) int {
		if c := cmp.Compare(l.job.Priority, r.job.Priority); c != 0 {
			return c
		}
		if l.queueIndex != r.queueIndex {
			if known == nil {
				if c := compareQueues(l.job, r.job); c != 0 {
					return c
				}
			} else {
				k := int(l.queueIndex)*queues + int(r.queueIndex)
				if known[k] == 0 {
					known[k] = int8(cmp.Compare(compareQueues(l.job, r.job), 0) + 2)
				}
				if c := int(known[k]) - 2; c != 0 {
					return c
				}
			}
		}
		if l.whole != r.whole {
			if r.whole {
				return -1
			}
			return 1
		}
		if c := model.CompareSavedOrders(l.saved, r.saved); c != 0 {
			return c
		}
		if c := cmp.Compare(l.job.ID, r.job.ID); c != 0 {
			return c
		}
		return cmp.Compare(r.pods[0].Name, l.pods[0].Name) // later replicas first
	})
	for i, u := range units {
		u.rank = int32(i)
	}
}

// maxRememberedQueues bounds the table of queue comparisons rankUnits keeps (1 MiB).
const maxRememberedQueues = 1024

// candidates lists, ranked, the units of every job that may lose pods in this action: running,
// preemptible, not given resources by eviction this cycle, and a prospect (when prospect is
// set). Rules and plugins are asked per preemptor later.
func candidates(ssn *framework.Session, prospect func(*model.JobInfo) bool, compareQueues func(l, r *model.JobInfo) int) []*unit {
	var units []*unit
	jobs := 0
	now := ssn.Now()
	queueIndex := map[string]int{}
	for _, job := range ssn.Snapshot().Jobs {
		if !job.Preemptible || ssn.GainedByEviction(job.ID) || (prospect != nil && !prospect(job)) {
			continue
		}
		jobUnits := unitsOf(job)
		if len(jobUnits) == 0 {
			continue
		}
		q, ok := queueIndex[job.Queue]
		if !ok {
			q = len(queueIndex)
			queueIndex[job.Queue] = q
		}
		saved := job.SavedPoint(now).Order()
		for _, u := range jobUnits {
			u.jobIndex, u.queueIndex, u.saved = int32(jobs), int32(q), saved
		}
		jobs++
		units = append(units, jobUnits...)
	}
	rankUnits(units, len(queueIndex), compareQueues)
	return units
}
