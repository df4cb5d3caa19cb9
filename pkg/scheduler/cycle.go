package scheduler

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/utils/clock"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
)

// CycleResult is what a cycle leaves to report.
type CycleResult struct {
	// PendingReasons explain, per job, why it still waits.
	PendingReasons map[api.JobID][]api.PendingReason
	// QueueProblems are the queues that could not be scheduled.
	QueueProblems []api.QueueProblem
	// ProtectedRefusals counts, per action, victims refused because min-runtime protected them.
	ProtectedRefusals map[framework.ActionType]int
	// AnswersChangeAt is the earliest time an answer the cycle's plugins gave changes by the
	// passing of time alone (a protection that refused a victim ends), or zero. A later cycle
	// on the same cluster state before then decides nothing new.
	AnswersChangeAt time.Time
	// ProtectionChanges are the jobs whose status shows a protection other than the one the
	// plugins now give them.
	ProtectionChanges []api.ProtectionChange
}

// RunCycle runs one scheduling cycle, in its phases:
//  1. open a session on the snapshot, freezing now and letting plugins register hooks;
//  2. run the actions in configured order, each committing its decisions through effects;
//  3. collect what the cycle has to report;
//  4. close the session.
func RunCycle(ctx context.Context, snapshot *api.Snapshot, clk clock.PassiveClock, policy *Policy, effects framework.Effects) CycleResult {
	ssn := framework.OpenSession(ctx, framework.SessionOptions{
		Snapshot: snapshot,
		Clock:    clk,
		Plugins:  policy.Plugins,
		Effects:  effects,
	})
	defer ssn.Close()

	for _, action := range policy.Actions {
		action.Execute(ctx, ssn)
	}

	result := CycleResult{PendingReasons: map[api.JobID][]api.PendingReason{}, QueueProblems: snapshot.Queues.Problems(),
		ProtectedRefusals: ssn.ProtectedRefusals(), AnswersChangeAt: ssn.AnswersChangeAt()}
	for _, job := range snapshot.Jobs {
		if reasons := ssn.PendingReasons(job.ID); len(reasons) > 0 && len(job.PendingPods()) > 0 {
			result.PendingReasons[job.ID] = reasons
		} else if pipelined := job.PipelinedPods(); len(pipelined) > 0 {
			result.PendingReasons[job.ID] = []api.PendingReason{api.Unschedulable(waitingForPromise(pipelined))}
		}
	}
	result.ProtectionChanges = protectionChanges(ssn, snapshot.Jobs)
	return result
}

// protectionChanges compares the protection each job's status shows with the one the
// plugins give it now, so that the status is written only when what it says changes.
func protectionChanges(ssn *framework.Session, jobs []*api.JobInfo) []api.ProtectionChange {
	var changes []api.ProtectionChange
	for _, job := range jobs {
		p, ok := ssn.Protection(job)
		switch {
		case ok && (job.ShownProtection == nil || !p.Shown().Equal(*job.ShownProtection)):
			changes = append(changes, api.ProtectionChange{Job: job.ID, Protection: p})
		case !ok && job.ShownProtection != nil:
			changes = append(changes, api.ProtectionChange{Job: job.ID, None: true})
		}
	}
	return changes
}

// waitingForPromise tells a job whose gang is promised resources still being released where
// it will run, so that its owner sees it is not stuck.
func waitingForPromise(pipelined []*api.PodInfo) string {
	nodes := make([]string, 0, len(pipelined))
	for _, p := range pipelined {
		nodes = append(nodes, p.NodeName)
	}
	slices.Sort(nodes)
	return fmt.Sprintf("waiting for resources being released on %s: they are promised to this job (its pods' nominated node)",
		strings.Join(slices.Compact(nodes), ", "))
}
