package scheduler

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/metrics"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// CycleResult is what a cycle leaves to report.
type CycleResult struct {
	// PendingReasons explain, per job, why it still waits.
	PendingReasons map[model.JobID][]model.PendingReason
	// QueueProblems are the queues that could not be scheduled.
	QueueProblems []model.QueueProblem
	// ProtectedRefusals counts, per action, victims refused because min-runtime protected them.
	ProtectedRefusals map[framework.ActionType]int
	// AnswersChangeAt is the earliest time an answer the cycle's plugins gave changes by the
	// passing of time alone (a protection that refused a victim ends), or zero. A later cycle
	// on the same cluster state before then decides nothing new.
	AnswersChangeAt time.Time
	// ProtectionChanges are the jobs whose status shows a protection other than the one the
	// plugins now give them.
	ProtectionChanges []model.ProtectionChange
	// QueueShares is where every valid queue stood in the cycle's fair-share division, what
	// it held as the cycle left it; empty when no plugin divides (no proportion).
	QueueShares map[string]model.QueueShare
}

// Cycle is what a scheduling cycle runs with besides the snapshot it decides on.
type Cycle struct {
	// Clock is read once, when the session opens.
	Clock clock.PassiveClock
	// Policy is the actions and plugins the cycle runs.
	Policy *Policy
	// Effects receives the committed decisions.
	Effects framework.Effects
	// Metrics receives what the plugins measure; nil records nothing (kai-sim, tests).
	Metrics metrics.Recorder
}

// RunCycle runs one cycle that records no metric: Cycle.Run for benchmarks and tests.
func RunCycle(ctx context.Context, snapshot *model.Snapshot, clk clock.PassiveClock, policy *Policy, effects framework.Effects) CycleResult {
	return Cycle{Clock: clk, Policy: policy, Effects: effects}.Run(ctx, snapshot)
}

// Run runs one scheduling cycle, in its phases:
//  1. open a session on the snapshot, freezing now and letting plugins register hooks;
//  2. run the actions in configured order, each committing its decisions through effects
//     (a stop asked for through ctx skips the actions not started yet);
//  3. stamp the running jobs whose current run has no start stamp;
//  4. collect what the cycle has to report;
//  5. close the session.
func (c Cycle) Run(ctx context.Context, snapshot *model.Snapshot) CycleResult {
	policy, effects := c.Policy, c.Effects
	ssn := framework.OpenSession(ctx, framework.SessionOptions{
		Snapshot: snapshot,
		Clock:    c.Clock,
		Plugins:  policy.Plugins,
		Effects:  effects,
		Metrics:  c.Metrics,
	})
	defer ssn.Close()

	for _, action := range policy.Actions {
		if ctx.Err() != nil {
			break // the scheduler is stopping: what is decided is sent, nothing more
		}
		action.Execute(ctx, ssn)
	}
	stampUnstampedRuns(ctx, ssn, snapshot.Jobs, effects)

	result := CycleResult{PendingReasons: map[model.JobID][]model.PendingReason{}, QueueProblems: snapshot.Queues.Problems(),
		ProtectedRefusals: ssn.ProtectedRefusals(), AnswersChangeAt: ssn.AnswersChangeAt()}
	for _, job := range snapshot.Jobs {
		if reasons := ssn.PendingReasons(job.ID); len(reasons) > 0 && len(job.PendingPods()) > 0 {
			result.PendingReasons[job.ID] = reasons
		} else if pipelined := job.PipelinedPods(); len(pipelined) > 0 {
			result.PendingReasons[job.ID] = []model.PendingReason{{Reason: model.ReasonAwaitingReleasedResources, Message: waitingForPromise(pipelined)}}
		}
	}
	result.ProtectionChanges = protectionChanges(ssn, snapshot.Jobs)
	result.QueueShares = queueShares(ssn)
	metrics.OrDiscard(c.Metrics).TopologyWaiting(topologyWaiting(snapshot, result.PendingReasons))
	return result
}

// topologyWaiting counts the jobs left pending with a topology constraint, by topology and
// the level their constraint names (the required one, else the preferred one; a job whose
// own constraint is unset counts under its first constrained sub-group's).
func topologyWaiting(snapshot *model.Snapshot, pending map[model.JobID][]model.PendingReason) map[metrics.TopologySeries]int {
	waiting := map[metrics.TopologySeries]int{}
	for id := range pending {
		job := snapshot.Job(id)
		if job == nil || !job.HasTopology() {
			continue
		}
		c := job.Topology
		for i := 0; c == nil; i++ {
			c = job.SubGroups[i].Topology
		}
		level := c.Required
		if level == "" {
			level = c.Preferred
		}
		waiting[metrics.TopologySeries{Topology: c.Topology, Level: level}]++
	}
	return waiting
}

// queueShares collects where every queue stands in the session's fair-share division.
func queueShares(ssn *framework.Session) map[string]model.QueueShare {
	queues := ssn.Snapshot().Queues
	shares := make(map[string]model.QueueShare, len(queues.Names()))
	for _, name := range queues.Names() {
		if share, ok := ssn.QueueShare(name); ok {
			shares[name] = share
		}
	}
	return shares
}

// stampUnstampedRuns stamps the running jobs whose current run has no start stamp: a
// scheduler that died before its stamps were written leaves them so, as does a gang bound
// only in part. Protection does not need the stamp (the pods' own start counts without it),
// but the stamp is the record users and upstream tools read. What is written is the start
// protection already counts from: the earliest start the job's pods report, or now if none
// has started yet. A stamp in the future (an edit) is left alone: protection ignores it.
func stampUnstampedRuns(ctx context.Context, ssn *framework.Session, jobs []*model.JobInfo, effects framework.Effects) {
	log := klog.FromContext(ctx)
	for _, job := range jobs {
		if job.CountActive() == 0 || (job.LastStartTimestamp != nil && !job.StampOfEarlierRun()) {
			continue
		}
		start, known, _ := job.CurrentRun()
		if !known {
			start = ssn.Now()
		}
		if err := effects.RecordJobStart(ctx, job, start); err != nil {
			log.Error(err, "Stamping a running job without a start stamp failed", "job", job.ID)
			continue
		}
		job.LastStartTimestamp = &start
		log.V(2).Info("Stamped a running job that had no start stamp of its current run", "job", job.ID, "start", start)
	}
}

// protectionChanges compares the protection each job's status shows with the one the
// plugins give it now, so that the status is written only when what it says changes. A
// protection of nothing (every min-runtime zero) is shown as none.
func protectionChanges(ssn *framework.Session, jobs []*model.JobInfo) []model.ProtectionChange {
	var changes []model.ProtectionChange
	for _, job := range jobs {
		p, ok := ssn.Protection(job)
		ok = ok && p.Protects()
		switch {
		case ok && (job.ShownProtection == nil || !p.Shown().Equal(*job.ShownProtection)):
			changes = append(changes, model.ProtectionChange{Job: job.ID, Protection: p})
		case !ok && job.ShownProtection != nil:
			changes = append(changes, model.ProtectionChange{Job: job.ID, None: true})
		}
	}
	return changes
}

// waitingForPromise tells a job whose gang is promised resources still being released where
// it will run, so that its owner sees it is not stuck.
func waitingForPromise(pipelined []*model.PodInfo) string {
	nodes := make([]string, 0, len(pipelined))
	for _, p := range pipelined {
		nodes = append(nodes, p.NodeName)
	}
	slices.Sort(nodes)
	return fmt.Sprintf("waiting for resources being released on %s: they are promised to this job (its pods' nominated node)",
		strings.Join(slices.Compact(nodes), ", "))
}
