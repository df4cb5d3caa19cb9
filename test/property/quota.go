package property

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// What a quota guarantees, as docs/scheduling.md says it (section "What a quota
// guarantees"), judged on GPUs, the resource every generated pod asks for and quotas are
// drawn for; a share of a GPU counts as its part of a device times its devices (0.5 GPU),
// measured on its node (charge), or, not bound, the least or the most it may take
// (chargeRange), whichever keeps a bound a bound. A queue deserves its quota (-1: all its parent has), capped by what its jobs ask
// for and by its limit, and nothing is taken from it for another queue; quotas may add up to
// more than there is (over-subscribed):
//
//	Q1 no reclaim from a queue within its quota: reclaim takes from a queue (the branch
//	   beside the reclaimer's, under their lowest common ancestor) only while it holds more
//	   than its deserved quota
//	Q2 a reclaim stops at the quota: it leaves a queue below its deserved quota only by the
//	   last job it took, one whose return would take the queue above its quota again
//	Q3 an owed job gets it: a pending job that keeps its queue and every queue above it
//	   within their deserved quotas is served as soon as free GPUs and what queues beside its
//	   own hold above their deserved quotas, unprotected, can hold it: in the first cycle
//	   that sees it so (judged on the quota family, GenerateQuota, whose GPUs are all alike)
//
// Deserved quotas depend on what queues ask for, which the oracle reads off the timeline
// with a lower bound (see requested), and are never computed by the scheduler's division:
// each rule is judged only where the bound alone proves it broken, so a model simpler than
// the scheduler's cannot raise a false failure, only let one pass.
const (
	PropQuotaKept  = "Q1 no reclaim from a queue within its quota"
	PropQuotaStop  = "Q2 a reclaim stops at the quota"
	PropOwedServed = "Q3 an owed job gets it"
)

// queueHeld is what the jobs of the queue's subtree hold at the moment of the replay: GPUs
// of their bound pods, and the rest of the gang of a job evicted for and not started yet
// (what was freed for it is promised to it, and the scheduler counts it held), charged the
// most it may be: an upper bound.
func (j *judge) queueHeld(queue string) float64 {
	var held int64
	for _, job := range j.s.Jobs {
		if !j.under(job.Queue, queue) {
			continue
		}
		key := "default/" + job.Name
		held += j.activeCharge(key, job)
		if j.promises[key] != nil {
			_, high := j.s.chargeRange(job)
			held += high * int64(max(0, job.GangPods()-len(j.active[key])))
		}
	}
	return gpusOf(held)
}

// activeCharge is what the job's bound pods are charged, each on its node, in thousandths.
func (j *judge) activeCharge(key string, job *Job) int64 {
	var sum int64
	for pod := range j.active[key] {
		sum += j.s.charge(job, j.podNode[pod])
	}
	return sum
}

// under reports whether leaf is queue or lies below it.
func (j *judge) under(leaf, queue string) bool {
	for _, q := range j.s.Ancestry(leaf) {
		if q.Name == queue {
			return true
		}
	}
	return false
}

// requested is a lower bound of the GPUs the jobs of the queue's subtree ask for at t, as
// the scheduler counts a request: every pod of a submitted job not completed, but those
// still terminating after an eviction (releasing) and those that failed (a failed pod comes
// back only when its workload restarts, which the oracle does not follow: leaving it out
// keeps the bound low).
func (j *judge) requested(queue string, t float64) float64 {
	var requested int64
	for _, job := range j.s.Jobs {
		key := "default/" + job.Name
		if !j.under(job.Queue, queue) || job.SubmitAt.Seconds() > t || j.completed[key] {
			continue
		}
		low, _ := j.s.chargeRange(job)
		for _, p := range job.Pods {
			switch {
			case j.failed[p.Name] || j.terminatingAt(p.Name, t):
			case j.active[key][p.Name]:
				requested += j.s.charge(job, j.podNode[p.Name])
			default:
				requested += low
			}
		}
	}
	return gpusOf(requested)
}

// terminatingAt reports whether the pod was evicted and is still terminating at t.
func (j *judge) terminatingAt(pod string, t float64) bool {
	for _, list := range j.holders {
		for _, h := range list {
			if h.pod == pod && !math.IsInf(h.gone, 1) && !h.goneBy(t) {
				return true
			}
		}
	}
	return false
}

// deservedLow is a lower bound of what the queue deserves at t: its quota (-1: what its
// parent's fair share is at least, the cluster for a top-level queue), capped by what it asks
// for (its requested bound) and its limit. A parent's fair share is at least what it
// deserves, so the bound recurses up the tree.
func (j *judge) deservedLow(queue string, t float64) float64 {
	q := j.s.Queue(queue)
	owed := q.Quota
	if owed < 0 {
		owed = float64(j.s.totalGPUs())
		if q.Parent != "" {
			owed = j.deservedLow(q.Parent, t)
		}
	}
	owed = math.Min(owed, j.requested(queue, t))
	if q.Limit >= 0 {
		owed = math.Min(owed, q.Limit)
	}
	return owed
}

// branches are, for a reclaim by a job of leaf reclaimer from a job of leaf victim, the two
// sibling queues under their lowest common ancestor: the reclaimer's and the victim's. ok is
// false for two jobs of one leaf (S3 judges that).
func (s *Scenario) branches(reclaimer, victim string) (mine, theirs *Queue, ok bool) {
	rc, vc := s.Ancestry(reclaimer), s.Ancestry(victim)
	d := 0
	for d < len(rc) && d < len(vc) && rc[d] == vc[d] {
		d++
	}
	if d == len(rc) || d == len(vc) {
		return nil, nil, false
	}
	return rc[d], vc[d], true
}

// reclaimDecision is the evictions one cycle made for one reclaimer, by the victim branch
// they were taken from: per branch, the GPUs each victim job lost.
type reclaimDecision struct {
	time      float64
	preemptor string
	taken     map[string]map[string]float64 // branch -> victim job -> GPUs
}

// decisionAt gathers the reclaim decision whose first eviction is events[i]: the evictions
// for the same preemptor at the same time that follow it without another event between (an
// action commits one reclaimer's plan at once).
func (j *judge) decisionAt(events []report.Event, i int) reclaimDecision {
	first := events[i]
	preemptor := j.jobs[first.Preemptor]
	d := reclaimDecision{time: first.Time, preemptor: first.Preemptor, taken: map[string]map[string]float64{}}
	for _, e := range events[i:] {
		if e.Type != report.EventEvict || e.Time != first.Time || e.Action != "reclaim" || e.Preemptor != first.Preemptor {
			break
		}
		victim := j.jobs[e.PodGroup]
		if victim == nil || preemptor == nil {
			continue // S0 reports it
		}
		_, theirs, ok := j.s.branches(preemptor.Queue, victim.Queue)
		if !ok {
			continue // S3 reports it
		}
		if d.taken[theirs.Name] == nil {
			d.taken[theirs.Name] = map[string]float64{}
		}
		d.taken[theirs.Name][e.PodGroup] += gpusOf(j.s.charge(victim, j.podNode[e.Pod]))
	}
	return d
}

// checkReclaimDecision is Q1 and Q2 for the decision that starts at events[i], judged on the
// cluster as the events before it left it.
func (j *judge) checkReclaimDecision(events []report.Event, i int) {
	d := j.decisionAt(events, i)
	for _, branch := range slices.Sorted(maps.Keys(d.taken)) {
		lost := d.taken[branch]
		held, deserved := j.queueHeld(branch), j.deservedLow(branch, d.time)
		j.figures.QuotaReclaims++
		if j.overSubscribed(branch, d.time) {
			j.figures.OverSubscribedReclaims++
		}
		if mine, _, _ := j.s.branches(j.jobs[d.preemptor].Queue, j.s.Queue(branch).Name); j.s.Queue(branch).Quota < 0 || (mine != nil && mine.Quota < 0) {
			j.figures.UnlimitedQuotaReclaims++
		}
		victims := slices.Sorted(maps.Keys(lost))
		fractional := held != math.Trunc(held)
		for _, v := range victims {
			fractional = fractional || j.jobs[v].Share != nil
		}
		if fractional {
			j.figures.FractionalReclaims++
		}
		if held <= deserved+1e-9 {
			j.fail(PropQuotaKept, events[i], "reclaim for %s took %v from queue %s, which held %g GPUs, within the %g it deserves at least",
				d.preemptor, victims, branch, held, deserved)
			continue
		}
		after, largest := held, 0.0
		for _, gpus := range lost {
			after -= gpus
			largest = math.Max(largest, gpus)
		}
		if after+largest <= deserved+1e-9 {
			j.fail(PropQuotaStop, events[i], "reclaim for %s took %v (%g GPUs) from queue %s, which held %g: it is left with %g, below the %g it deserves at least, by more than any one job it lost (%g)",
				d.preemptor, victims, held-after, branch, held, after, deserved, largest)
		}
	}
}

// overSubscribed reports whether the deserved quotas of the queue and its siblings add up,
// by their lower bounds, to more than their parent's share can hold (its deserved quota's
// upper bound: the parent's quota, limit or what its subtree asks for; the cluster for the
// top level).
func (j *judge) overSubscribed(queue string, t float64) bool {
	q := j.s.Queue(queue)
	room := float64(j.s.totalGPUs())
	if q.Parent != "" {
		p := j.s.Queue(q.Parent)
		room = math.Min(room, j.requestedAll(q.Parent, t))
		if p.Quota >= 0 {
			room = math.Min(room, math.Max(p.Quota, 0))
		}
	}
	owed := 0.0
	for _, sibling := range j.s.Queues {
		if sibling.Parent == q.Parent {
			owed += j.deservedLow(sibling.Name, t)
		}
	}
	return owed > room+1e-9
}

// requestedAll is an upper bound of what the queue's subtree asks for at t: every pod of its
// submitted jobs not completed, charged the most it may be.
func (j *judge) requestedAll(queue string, t float64) float64 {
	var n int64
	for _, job := range j.s.Jobs {
		if j.under(job.Queue, queue) && job.SubmitAt.Seconds() <= t && !j.completed["default/"+job.Name] {
			_, high := j.s.chargeRange(job)
			n += high * int64(len(job.Pods))
		}
	}
	return gpusOf(n)
}

// quiet reports whether nothing is terminating at t and no reclaimer waits for what its
// victims free: no resource is being released, and none is promised.
func (j *judge) quiet(t float64) bool {
	if len(j.promises) > 0 {
		return false
	}
	for _, list := range j.holders {
		for _, h := range list {
			if !math.IsInf(h.gone, 1) && !h.goneBy(t) {
				return false
			}
		}
	}
	return true
}

// owed lists the jobs that Q3 says a cycle at t must serve, on the cluster as the replay has
// it: a quiet cluster (quiet), a job submitted and not started, whose gang keeps every queue
// of its path within the lower bound of its deserved quota, and for which the free GPUs and
// what the queues beside its own hold above their quotas (as whole jobs, preemptible and no
// longer protected against it, never counting a job bound at or after notBefore) add up to
// its gang. A job with a required level fits only inside one domain of that level, so for it
// they are counted on the nodes of one domain, and some domain must hold its gang: what is
// free across the cluster, or held above quotas outside the domain, would not make it fit
// (nor can the scheduler free it there: T2). Each entry says why.
func (j *judge) owed(t, notBefore float64) map[string]string {
	if !j.quiet(t) {
		return nil
	}
	free := float64(j.s.totalGPUs())
	for key := range j.active {
		free -= gpusOf(j.activeCharge(key, j.jobs[key]))
	}
	owed := map[string]string{}
	for _, job := range j.s.Jobs {
		key := "default/" + job.Name
		if job.SubmitAt.Seconds() > t || j.completed[key] || len(j.active[key]) > 0 {
			continue
		}
		_, high := j.s.chargeRange(job)
		gang := gpusOf(high * int64(job.GangPods()))
		within := true
		for _, q := range j.s.Ancestry(job.Queue) {
			within = within && j.queueHeld(q.Name)+gang <= j.deservedLow(q.Name, t)+1e-9
		}
		if !within {
			continue
		}
		level := j.s.RequiredLevel(job)
		if level < 0 {
			if why, ok := j.room(job, gang, nil, free, t, notBefore); ok {
				owed[key] = fmt.Sprintf("its gang of %s keeps %s within its quota, and %s can hold it", gpus(gang), job.Queue, why)
			}
			continue
		}
		// A job with a required level fits only inside one domain: what is free there and
		// what the queues beside its own hold there above their quotas.
		names, nodes := j.domains(level)
		for _, d := range names {
			in := map[string]bool{}
			inFree := 0.0
			for _, n := range nodes[d] {
				in[n.Name] = true
				inFree += float64(n.GPUs)
			}
			for other, active := range j.active {
				for pod := range active {
					if in[j.podNode[pod]] {
						inFree -= gpusOf(j.s.charge(j.jobs[other], j.podNode[pod]))
					}
				}
			}
			if why, ok := j.room(job, gang, in, inFree, t, notBefore); ok {
				owed[key] = fmt.Sprintf("its gang of %s keeps %s within its quota, and in %s %s, %s can hold it",
					gpus(gang), job.Queue, j.s.Topology.levelName(level), d, why)
				break
			}
		}
	}
	return owed
}

// room reports whether free GPUs and what the queues beside the job's own hold above their
// quotas, as whole jobs preemptible and no longer protected against it (never counting a job
// bound at or after notBefore), on the nodes in (nil: every node), can hold its gang at t, and
// says where they are.
func (j *judge) room(job *Job, gang float64, in map[string]bool, free, t, notBefore float64) (string, bool) {
	available, from := free, []string{fmt.Sprintf("%s free", gpus(free))}
	for _, other := range j.s.Queues {
		if other.Parent != "" || other.Name == j.s.Ancestry(job.Queue)[0].Name || other.Quota < 0 {
			continue
		}
		above := j.queueHeld(other.Name) - other.Quota
		if above <= 0 {
			continue
		}
		taken := math.Min(above, j.unprotected(other.Name, job, in, t, notBefore))
		if taken > 0 {
			available += taken
			from = append(from, fmt.Sprintf("%s from %s (%g above its quota)", gpus(taken), other.Name, above))
		}
	}
	return strings.Join(from, ", "), available >= gang
}

// gpus writes a number of GPUs.
func gpus(n float64) string {
	if n == 1 {
		return "1 GPU"
	}
	return fmt.Sprintf("%g GPUs", n)
}

// unprotected sums the GPUs, on the nodes in (nil: every node), of the running preemptible
// jobs of the queue's subtree that reclaim may take for job at t: no min-runtime protects
// them against it any more, and they were bound before notBefore (a job bound in a cycle is
// no victim of that cycle).
func (j *judge) unprotected(queue string, job *Job, in map[string]bool, t, notBefore float64) float64 {
	sum := 0.0
	for _, victim := range j.s.Jobs {
		key := "default/" + victim.Name
		if !j.under(victim.Queue, queue) || len(j.active[key]) == 0 || !victim.Preemptible() {
			continue
		}
		if j.runStart[key] >= notBefore {
			continue
		}
		r := j.s.Resolve("reclaim", job.Queue, victim, j.evictionsBefore(key, j.runStart[key]))
		if t < j.runStart[key]+r.MinRuntime.Seconds() {
			continue
		}
		for pod := range j.active[key] {
			if in == nil || in[j.podNode[pod]] {
				sum += gpusOf(j.s.charge(victim, j.podNode[pod]))
			}
		}
	}
	return sum
}

// checkOwedBetween is Q3 at every cycle strictly between two times of the timeline, from
// and to: nothing happened in them, so a job owed at one of them was not served. Only the
// times at which a job is submitted or a protection or a termination ends, rounded up to the
// cycle grid, can make a job owed without an event.
func (j *judge) checkOwedBetween(from, to float64) {
	period := j.s.Period.Seconds()
	var times []float64
	note := func(x float64) {
		if c := math.Ceil(x/period-1e-9) * period; c > from && c < to {
			times = append(times, c)
		}
	}
	note(from + period) // the cycle after the events: what they freed (completions) is free there
	for _, list := range j.holders {
		for _, h := range list {
			if !math.IsInf(h.gone, 1) {
				note(h.gone)
			}
		}
	}
	for _, job := range j.s.Jobs {
		note(job.SubmitAt.Seconds())
	}
	for key, active := range j.active {
		if len(active) == 0 {
			continue
		}
		for _, other := range j.s.Jobs {
			r := j.s.Resolve("reclaim", other.Queue, j.jobs[key], j.evictionsBefore(key, j.runStart[key]))
			note(j.runStart[key] + r.MinRuntime.Seconds())
		}
	}
	slices.Sort(times)
	for _, t := range slices.Compact(times) {
		for _, key := range slices.Sorted(maps.Keys(j.owed(t, t))) {
			j.failures = append(j.failures, Failure{Property: PropOwedServed, Job: key, Time: t,
				Detail: fmt.Sprintf("no cycle served it, though %s", j.owed(t, t)[key])})
		}
	}
}

// checkOwedCycle is Q3 for the cycle at t, whose events (binds and evictions) are cycle:
// before is what owed said before them. A job owed then must be bound or have evictions made
// for it in the cycle, unless the cycle gave what it needed to others (it evicted for them,
// or its binds left too little). A cycle without events served no one.
func (j *judge) checkOwedCycle(before map[string]string, t float64, cycle []report.Event) {
	if len(before) == 0 {
		return
	}
	j.figures.OwedMoments += len(before)
	for key := range before {
		if j.s.RequiredLevel(j.jobs[key]) >= 0 {
			j.figures.TopologyOwedMoments++
		}
	}
	for _, e := range cycle {
		if e.Type == report.EventEvict {
			return // resources now promised to a reclaimer: judged again once released
		}
	}
	after := before
	if len(cycle) > 0 {
		after = j.owed(t, t)
	}
	for _, key := range slices.Sorted(maps.Keys(before)) {
		served := slices.ContainsFunc(cycle, func(e report.Event) bool { return e.PodGroup == key && e.Type == report.EventBind })
		if why, still := after[key]; !served && still {
			j.failures = append(j.failures, Failure{Property: PropOwedServed, Job: key, Time: t,
				Detail: fmt.Sprintf("the cycle bound nothing for it and evicted nothing, though %s", why)})
		}
	}
}
