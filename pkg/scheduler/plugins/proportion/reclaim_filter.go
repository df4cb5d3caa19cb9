package proportion

import (
	"fmt"
	"strconv"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// reclaimFilter vets a reclaim scenario against fair share. For each victim job, in the order
// the solver chose them, it finds the two sibling branches under the lowest common ancestor of
// the reclaimer's and the victim's leaf queues. The reclaim is fair if the reclaimer's branch,
// with the gang added, stays within its fair share while the victim's branch (less what the
// scenario already takes from it) is above its own; or if the reclaimer's branch stays within
// deserved quota while the victim's is above its deserved quota.
//
// The search asks after each unit it adds, so the filter remembers its verdicts on the
// units it judged and judges only those that joined since (see Allows): a plan of V units
// costs V unit checks, not V squared.
type reclaimFilter struct {
	growthFilter
	// judged are the scenario's units judged so far, in joining order; taken sums, per
	// victim branch, what they take from it; perJob counts them by job. generation is the
	// share state's generation they were judged at.
	judged     []judgedUnit
	taken      map[*queueState]Vector
	perJob     map[model.JobID]int
	generation uint64
}

// judgedUnit is the verdict on one unit: what it took from which branch, or why it was refused.
type judgedUnit struct {
	seq      uint64
	job      model.JobID
	branch   *queueState
	evicting Vector
	refusal  error // nil: allowed
}

var (
	_ framework.PlanFilter = &reclaimFilter{}
	_ framework.UnitFilter = &reclaimFilter{}
)

func newReclaimFilter(st *shareState, job *model.JobInfo, taskOrder func(l, r *model.PodInfo) int) *reclaimFilter {
	return &reclaimFilter{growthFilter: *newGrowthFilter(st, job, taskOrder, framework.Reclaim),
		taken: map[*queueState]Vector{}, perJob: map[model.JobID]int{}}
}

func (f *reclaimFilter) Name() string { return Name }

// Allows checks every victim job of the scenario, job by job in joining order and each
// job's units in joining order. An empty scenario is allowed only if the reclaimer is within
// share or quota at some level, without which no victim can qualify.
//
// Units are judged in joining order, each against what the units before it took, which is
// the same as job by job while every unit joins after the latest job's units (the search
// adds one job's units together, and new jobs after old ones). The verdicts on a prefix of
// units that still stands are kept; a scenario that does not fit this pattern is judged
// from scratch.
func (f *reclaimFilter) Allows(sc framework.Scenario) framework.Status {
	units := sc.Units()
	if len(units) == 0 {
		chain := f.st.chain(f.preemptor.Queue)
		for _, q := range chain {
			if f.fitsShare(q) || f.fitsQuota(q) {
				return framework.Status{}
			}
		}
		if len(chain) == 0 {
			return refused(&overShare{queue: f.preemptor.Queue})
		}
		return refused(f.overShare(chain[len(chain)-1]))
	}
	if f.generation != f.st.generation {
		f.forget(0) // shares moved: nothing judged before holds
		f.generation = f.st.generation
	}
	k := framework.StandingPrefix(units, len(f.judged), func(i int) uint64 { return f.judged[i].seq })
	f.forget(k)
	// Nothing is judged past a refusal, so a refusal that still stands is the latest verdict.
	if n := len(f.judged); n > 0 && f.judged[n-1].refusal != nil {
		return refused(f.judged[n-1].refusal)
	}
	for _, u := range units[k:] {
		if latest := f.latestJob(); f.perJob[u.Job.ID] > 0 && u.Job.ID != latest {
			f.forget(0)
			return f.judgeAll(sc)
		}
		j := f.judge(u, f.taken, f.judged)
		f.judged = append(f.judged, j)
		f.perJob[j.job]++
		if j.refusal != nil {
			return refused(j.refusal)
		}
		if j.branch != nil {
			f.taken[j.branch] = f.taken[j.branch].add(j.evicting)
		}
	}
	return framework.Status{}
}

// AllowsUnit judges the unit as the first victim of a plan: one refused so is refused after
// any others, which only take more from its branch.
func (f *reclaimFilter) AllowsUnit(u framework.ScenarioUnit) framework.Status {
	if j := f.judge(u, nil, nil); j.refusal != nil {
		return refused(j.refusal)
	}
	return framework.Status{}
}

// refused is the filter's verdict on a scenario it refuses for reason: unfair as things
// stand, which other victims or other shares may change. The reason is worded only when read
// (framework.AsStatus): the search asks about many scenarios and reads few refusals.
func refused(reason error) framework.Status {
	return framework.AsStatus(framework.Unschedulable, reason)
}

// latestJob is the job of the latest judged unit, or "".
func (f *reclaimFilter) latestJob() model.JobID {
	if len(f.judged) == 0 {
		return ""
	}
	return f.judged[len(f.judged)-1].job
}

// forget drops the verdicts from the k-th judged unit on, and what they took.
func (f *reclaimFilter) forget(k int) {
	for i := len(f.judged) - 1; i >= k; i-- {
		j := f.judged[i]
		if j.refusal == nil && j.branch != nil {
			f.taken[j.branch] = f.taken[j.branch].sub(j.evicting)
		}
		f.perJob[j.job]--
	}
	f.judged = f.judged[:k]
}

// judge decides one unit against what the units judged before it (earlier) took from each
// branch.
func (f *reclaimFilter) judge(u framework.ScenarioUnit, taken map[*queueState]Vector, earlier []judgedUnit) judgedUnit {
	j := judgedUnit{seq: u.Seq, job: u.Job.ID}
	reclaimerChain, victimChain := f.st.chain(f.preemptor.Queue), f.st.chain(u.Job.Queue)
	if len(victimChain) == 0 {
		// The victim's queue is missing or invalid: it has no share to protect.
		switch {
		case len(reclaimerChain) == 0:
			j.refusal = &overShare{queue: f.preemptor.Queue}
		case !f.fitsShare(reclaimerChain[0]) && !f.fitsQuota(reclaimerChain[0]):
			j.refusal = f.overShare(reclaimerChain[0])
		}
		return j
	}
	d := 0
	for d < len(reclaimerChain) && d < len(victimChain) && reclaimerChain[d] == victimChain[d] {
		d++
	}
	if d == len(reclaimerChain) || d == len(victimChain) {
		j.refusal = &sharesQueue{job: u.Job.ID, queue: u.Job.Queue}
		return j
	}
	mine, theirs := reclaimerChain[d], victimChain[d]
	// Each unit (a surplus pod, or a whole gang) must find the victim's branch above its
	// share before it goes; otherwise one elastic job could be drained below its quota.
	for _, p := range u.Pods {
		j.evicting = j.evicting.add(fromResources(p.Request))
	}
	// What a placement pipelined for this cycle only would hold is no promise: the victim's
	// branch holds what runs and what is promised to it.
	remaining := theirs.allocated.sub(theirs.transient).sub(taken[theirs])
	fair := f.fitsShare(mine) && above(remaining, theirs.fair, j.evicting) &&
		keepsQuota(theirs, remaining.sub(j.evicting), j.evicting, earlier)
	quota := f.fitsQuota(mine) && above(remaining, theirs.deserved, j.evicting)
	if !fair && !quota {
		j.refusal = f.unfair(mine, theirs, remaining, j.evicting)
	}
	j.branch = theirs
	return j
}

// judgeAll judges the scenario job by job from scratch, remembering nothing.
func (f *reclaimFilter) judgeAll(sc framework.Scenario) framework.Status {
	taken := map[*queueState]Vector{}
	var judged []judgedUnit
	for _, victim := range sc.VictimJobs() {
		for _, pods := range sc.VictimUnits(victim.ID) {
			j := f.judge(framework.ScenarioUnit{Job: victim, Pods: pods}, taken, judged)
			if j.refusal != nil {
				return refused(j.refusal)
			}
			judged = append(judged, j)
			if j.branch != nil {
				taken[j.branch] = taken[j.branch].add(j.evicting)
			}
		}
	}
	return framework.Status{}
}

// fitsShare reports whether the branch stays within its fair share with the gang added.
func (f *reclaimFilter) fitsShare(q *queueState) bool {
	return within(q.allocated.add(f.gang), q.fair, f.gang)
}

// fitsQuota reports whether the branch stays within its deserved quota with the gang added.
func (f *reclaimFilter) fitsQuota(q *queueState) bool {
	return within(q.allocated.add(f.gang), q.deserved, f.gang)
}

// shownFirst is the order in which a refusal looks for the resource to give numbers for:
// GPUs, what fair sharing is about, before CPU and memory.
var shownFirst = [model.NumQuotaResources]model.ResourceName{model.GPU, model.CPU, model.Memory}

// overShare says why queue q, with the gang added, is within neither its fair share nor its
// deserved quota, with the numbers of the first resource (GPUs first) that takes it above its
// fair share. (Within its fair share it could not be above its deserved quota, which is never
// more.)
func (f *reclaimFilter) overShare(q *queueState) *overShare {
	for _, r := range shownFirst {
		if f.gang[r] > 0 && exceeds(q.allocated[r]+f.gang[r], q.fair[r]) {
			return &overShare{queue: q.info.Name, resource: r, known: true,
				held: q.allocated[r], asked: f.gang[r], fair: q.fair[r], deserved: q.deserved[r]}
		}
	}
	return &overShare{queue: q.info.Name}
}

// overShare is the refusal of a reclaimer whose queue is at or above its fair share, with
// the numbers it was judged on (when known). It is worded once, when first read.
type overShare struct {
	queue                       string
	resource                    model.ResourceName
	known                       bool
	held, asked, fair, deserved float64
	text                        string
}

func (e *overShare) Error() string {
	if e.text != "" {
		return e.text
	}
	b := append(strconv.AppendQuote(append(make([]byte, 0, 192), "queue "...), e.queue), " is at or above its fair share"...)
	if e.known {
		r := e.resource
		b = model.AppendQueueAmount(append(b, ": it holds "...), r, e.held)
		b = model.AppendQueueNumber(append(b, " and this job asks for "...), r, e.asked)
		b = model.AppendQueueAmount(append(b, " more; its fair share is "...), r, e.fair)
		b = append(model.AppendQueueNumber(append(b, ", "...), r, e.deserved), " of them its deserved quota"...)
	}
	e.text = string(b)
	return e.text
}

// sharesQueue is the refusal of a victim in the reclaimer's own queue.
type sharesQueue struct {
	job   model.JobID
	queue string
}

func (e *sharesQueue) Error() string {
	return fmt.Sprintf("job %s shares queue %q with the reclaimer", e.job, e.queue)
}

// unfair says why taking evicting from the victim's branch theirs, which holds remaining of
// it, is fair by neither rule for the reclaimer's branch mine, with the numbers of the first
// resource the victims hold (GPUs first).
func (f *reclaimFilter) unfair(mine, theirs *queueState, remaining, evicting Vector) *unfair {
	e := &unfair{mine: mine.info.Name, theirs: theirs.info.Name}
	for _, r := range shownFirst {
		if evicting[r] > 0 {
			e.resource, e.known = r, true
			e.mineWith, e.mineFair, e.mineDeserved = mine.allocated[r]+f.gang[r], mine.fair[r], mine.deserved[r]
			e.theirsHeld, e.theirsFair, e.theirsDeserved = remaining[r], theirs.fair[r], theirs.deserved[r]
			break
		}
	}
	return e
}

// unfair is the refusal of a victim whose branch, beside the reclaimer's, may not give it up
// by either rule, with the numbers it was judged on (when known). It is worded once, when
// first read.
type unfair struct {
	mine, theirs                           string
	resource                               model.ResourceName
	known                                  bool
	mineWith, mineFair, mineDeserved       float64
	theirsHeld, theirsFair, theirsDeserved float64
	text                                   string
}

func (e *unfair) Error() string {
	if e.text != "" {
		return e.text
	}
	b := strconv.AppendQuote(append(make([]byte, 0, 256), "reclaiming from queue "...), e.theirs)
	b = append(strconv.AppendQuote(append(b, " for queue "...), e.mine), " would not be fair"...)
	if e.known {
		r := e.resource
		b = model.AppendQueueAmount(append(append(append(b, ": "...), e.mine...), " would hold "...), r, e.mineWith)
		b = model.AppendQueueNumber(append(b, " with this job (fair share "...), r, e.mineFair)
		b = model.AppendQueueNumber(append(b, ", deserved quota "...), r, e.mineDeserved)
		b = model.AppendQueueAmount(append(append(append(b, ") while "...), e.theirs...), " holds "...), r, e.theirsHeld)
		b = model.AppendQueueNumber(append(b, " (fair share "...), r, e.theirsFair)
		b = append(model.AppendQueueNumber(append(b, ", deserved quota "...), r, e.theirsDeserved), ')')
	}
	e.text = string(b)
	return e.text
}

// within reports whether have <= limit in every resource the request asks for.
func within(have, limit, request Vector) bool {
	for _, r := range model.QuotaResources {
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
// getting back its quota, the quota rule, may leave the victim below its own.) The pods that
// could fit back are this unit's or those of any unit the scenario took from the branch
// before it (earlier): a small job taken while the branch was still above its quota fits
// back once a large one takes it below (the property suite's seed 5889: round and round).
func keepsQuota(q *queueState, left, victims Vector, earlier []judgedUnit) bool {
	for _, r := range model.QuotaResources {
		if victims[r] == 0 || q.info.Resources[r].Quota == model.Unlimited || !exceeds(q.deserved[r], left[r]) {
			continue
		}
		waiting := exceeds(q.request[r], q.allocated[r])
		fitsBack := !exceeds(left[r]+victims[r], q.deserved[r])
		for _, e := range earlier {
			if e.branch == q && e.refusal == nil && e.evicting[r] > 0 && !exceeds(left[r]+e.evicting[r], q.deserved[r]) {
				fitsBack = true
			}
		}
		if waiting || fitsBack {
			return false
		}
	}
	return true
}

// above reports whether have > limit in some resource the victim pods hold.
func above(have, limit, victims Vector) bool {
	for _, r := range model.QuotaResources {
		if victims[r] > 0 && exceeds(have[r], limit[r]) {
			return true
		}
	}
	return false
}
