package victims

import (
	"context"
	"errors"
	"fmt"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// Action is an eviction action defined by its rules: reclaim and preempt are both this.
type Action struct{ rules Rules }

var _ framework.Action = &Action{}

// NewAction returns the eviction action with the given rules.
func NewAction(rules Rules) *Action { return &Action{rules: rules} }

// Name is the rules' action type.
func (a *Action) Name() framework.ActionType { return a.rules.Action() }

// Execute runs the victim search for every pending job.
func (a *Action) Execute(ctx context.Context, ssn *framework.Session) { Run(ctx, ssn, a.rules) }

// Run is the body of an eviction action: every job still lacking its gang, in queue and job
// order, gets one search; a plan found is committed at once (victims evicted, the gang
// pipelined onto what they release) so that later jobs see it.
func Run(ctx context.Context, ssn *framework.Session, rules Rules) {
	mover, moves := rules.(Mover)
	movable := 0 // jobs a Mover may still move this cycle
	if moves {
		if movable = mover.MaxMovedJobs(); movable <= 0 {
			return
		}
	}
	var room model.Resources // what a Mover's moves can rearrange, recounted after each plan
	if moves {
		room = roomLeft(ssn)
	}
	var preemptors []*model.JobInfo
	for _, job := range actions.SchedulableJobs(ssn) {
		if moves && (!mover.MovesFor(job) || !anyPendingFits(job, room)) {
			continue
		}
		// A job refused on its own side (its preemption delay) is not searched for at all;
		// the plugin that refused told it why and until when.
		if !job.IsGangSatisfied() && ssn.MayEvictFor(rules.Action(), job).IsSuccess() {
			preemptors = append(preemptors, job)
		}
	}
	if len(preemptors) == 0 {
		return
	}
	// The solver ranks every candidate victim: most cycles never need it (every waiting job
	// is refused by a plugin first), so it is built at the first search.
	var solver *Solver
	queues := actions.NewJobQueues(ssn, preemptors)
	// failed remembers shapes no victims could be found for, for the rest of the action. A
	// plan that succeeds only takes: its victims release for its own job, so what another
	// job could free or use only shrinks, and a shape that found no plan finds none after
	// it. (The search is greedy, so in rare gangs a later one might have; that job is
	// searched again next cycle. Forgetting the shapes after each plan made every refused
	// job search all protected victims again: a cycle at 500 nodes with half the victims
	// protected took 0.8 s instead of 0.03 s.)
	failed := map[string]failure{}
	for job := queues.Next(); job != nil; job = queues.Next() {
		if moves && movable <= 0 {
			break // the cycle's moves are spent
		}
		gang, err := actions.GangPods(ssn, job)
		if err != nil {
			continue // allocate already told the job why
		}
		if moves && !leastRequest(gang).FitsIn(room) {
			continue // no moving makes room the cluster does not have; allocate told why it waits
		}
		// A queue limit is judged once the victims are gone: evictions under the limited
		// queue lift it. Any other objection no eviction can lift, nor any objection a move:
		// moved jobs come back, under the same limits (moving one out of the way of a job
		// its limit refuses would never let it back, and it would move that job in turn).
		var limit *framework.LimitExceeded
		if st := ssn.Allocatable(job, model.Request(gang)); !st.IsSuccess() && (moves || !errors.As(st.Err(), &limit)) {
			continue
		}
		shape := actions.ShapeKey(job, gang)
		if f, ok := failed[actions.FailureKey(job, shape)]; ok {
			ssn.CopyPendingReasons(f.job, job.ID) // told what the first was: the protections that refused it too
			continue
		}
		topo, err := actions.ResolveTopology(ssn.Snapshot(), job)
		if err != nil {
			continue // allocate already told the job why
		}
		if solver == nil {
			solver = NewSolver(ssn, rules, preemptors)
		}
		var plan *Plan
		var reason string
		if topo != nil && topo.HasRequired() {
			plan, reason = solveInDomains(ssn, solver, job, gang, limit, shape, topo)
		} else {
			plan, reason = solver.Solve(job, gang, limit, shape)
		}
		if plan == nil {
			failed[actions.FailureKey(job, shape)] = failure{job: job.ID}
			ssn.RecordPendingReason(job.ID, fmt.Sprintf("%s: %s", rules.Action(), reason))
			continue
		}
		movedJobs := plan.MovedJobs()
		if moves && movedJobs > movable {
			// Not remembered as failed: a plan moving fewer jobs may fit what is left.
			ssn.RecordPendingReason(job.ID, fmt.Sprintf("%s: it would move %d jobs, and %d more may move in this cycle",
				rules.Action(), movedJobs, movable))
			continue
		}
		if applied := apply(ctx, ssn, rules.Action(), job, plan); applied && moves {
			movable -= movedJobs
			solver.Book(plan.Moves)
			// The victims' room is the moved pods' again, the gang's is taken: the cluster
			// has the gang's less to rearrange.
			room = room.Sub(leastRequest(gang))
		}
	}
}

// anyPendingFits reports whether one of the job's pending pods fits in room: the cheap test,
// with nothing built, that leaves out most jobs waiting on a full cluster before their gang is.
func anyPendingFits(job *model.JobInfo, room model.Resources) bool {
	for _, p := range job.Pods {
		if p.Status == model.Pending && leastRequest([]*model.PodInfo{p}).FitsIn(room) {
			return true
		}
	}
	return false
}

// leastRequest is the least the pods take wherever they go: their requests, but a share asked
// in memory, charged as pending the most any device would take, counted as a sliver of a GPU
// (on the largest devices it takes less).
func leastRequest(pods []*model.PodInfo) model.Resources {
	var total model.Resources
	for _, p := range pods {
		r := p.Request
		if p.IsShare() && p.Share.MemoryMiB > 0 {
			r = r.With(model.GPU, min(r.Get(model.GPU), 1))
		}
		total = total.Add(r)
	}
	return total
}

// roomLeft is what the cluster's nodes will have free once their releasing pods are gone,
// the room on devices holding shares included, less what moved pods will take again. Moving
// pods only rearranges it: a gang that asks for more, in any resource, is not searched for
// (most jobs waiting on a full cluster).
func roomLeft(ssn *framework.Session) model.Resources {
	var total, moved model.Resources
	for _, job := range ssn.Snapshot().Jobs {
		for _, p := range job.Pods {
			if p.Status == model.Releasing && p.Moved {
				moved = moved.Add(p.Request)
			}
		}
	}
	for _, n := range ssn.Snapshot().Nodes {
		free := futureFree(n)
		total = total.Add(free.res.AtLeastZero()) // an overcommitted node frees nothing elsewhere
		for _, d := range free.devs {
			total = total.With(model.GPU, total.Get(model.GPU)+max(d.room, 0))
		}
	}
	return total.Sub(moved)
}

// failure is a shape no victims were found for: the first job of it searched, whose reasons
// the others are told.
type failure struct{ job model.JobID }

// apply evicts the plan's victims and pipelines the gang onto the resources they release; it
// reports whether the plan was carried out.
func apply(ctx context.Context, ssn *framework.Session, action framework.ActionType, job *model.JobInfo, plan *Plan) bool {
	st := ssn.NewStatement()
	reason := framework.NewEvictionReason(action, job.ID)
	victimReason := reason
	var note framework.EvictionNote // the plugins', for the victim job at hand
	for i, victim := range plan.Victims {
		// Victims come grouped by job: the plugins' notes are asked once per victim job, as
		// the search judged it, before any of its pods is evicted.
		if i == 0 || victim.Job != plan.Victims[i-1].Job {
			note, victimReason.EndsRun = framework.EvictionNote{}, false
			if v := ssn.Snapshot().Job(victim.Job); v != nil {
				note = ssn.EvictionNotes(action, job, v)
				victimReason.EndsRun, victimReason.DecidedAt = endsRun(v, plan.Victims[i:]), ssn.Now()
			}
		}
		victimReason.Note = note
		if len(plan.Moves) > 0 {
			victimReason.Note.Text = moveNote(note.Text, victim, plan.Moves)
		}
		if err := st.Evict(victim, victimReason); err != nil {
			st.Discard()
			ssn.Logger().Error(err, "Plan no longer applies", "action", action, "job", job.ID)
			return false
		}
	}
	if len(plan.Victims) == 0 && allocateAll(st, plan) {
		commit(ctx, ssn, st, action, job) // nothing to wait for: the gang fits on idle resources
		return true
	}
	// What the victims release is promised to the job (nominated), so that it still holds in
	// later cycles; a plan without victims only uses what others release, for this cycle.
	pipeline := st.Nominate
	if len(plan.Victims) == 0 {
		pipeline = st.Pipeline
	}
	for _, p := range plan.Placements {
		if err := pipeline(p.Pod, p.Node); err != nil {
			st.Discard()
			ssn.Logger().Error(err, "Plan no longer applies", "action", action, "job", job.ID)
			return false
		}
	}
	commit(ctx, ssn, st, action, job)
	return true
}

// moveNote tells a moved pod's owner that it was moved, not taken, and where it fits now;
// note is what the plugins said (how long it ran, which protection it had).
func moveNote(note string, pod *model.PodInfo, moves []Placement) string {
	to := ""
	for _, m := range moves {
		if m.Pod == pod {
			to = m.Node
		}
	}
	moved := "moved to make room; it fits on node " + to + " once recreated"
	if note == "" {
		return moved
	}
	return moved + "; " + note
}

// endsRun reports whether victims, which start with the victim job's, take every pod of the
// job that runs (or is bound): the eviction then ends the job's run, and is counted on it.
func endsRun(job *model.JobInfo, victims []*model.PodInfo) bool {
	taken := 0
	for _, v := range victims {
		if v.Job != job.ID {
			break
		}
		taken++
	}
	running := 0
	for _, p := range job.Pods {
		if isEvictable(p) {
			running++
		}
	}
	return taken == running
}

// allocateAll binds the whole gang on idle resources if it fits there, else changes nothing.
func allocateAll(st *framework.Statement, plan *Plan) bool {
	cp := st.Checkpoint()
	for _, p := range plan.Placements {
		if st.Allocate(p.Pod, p.Node) != nil {
			st.Rollback(cp)
			return false
		}
	}
	return true
}

func commit(ctx context.Context, ssn *framework.Session, st *framework.Statement, action framework.ActionType, job *model.JobInfo) {
	if err := st.Commit(ctx); err != nil {
		ssn.Logger().Error(err, "Committing evictions failed", "action", action, "job", job.ID)
	}
	ssn.MarkGainedByEviction(job.ID)
}
