package allocate

import (
	"context"
	"fmt"
	"slices"

	"github.com/kai-minruntime/kai-scheduler/pkg/plural"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// Action is the allocate action.
type Action struct{}

var _ framework.Action = &Action{}

// New returns the allocate action.
func New() *Action { return &Action{} }

// Name is framework.Allocate.
func (*Action) Name() framework.ActionType { return framework.Allocate }

// Execute keeps the promises of earlier cycles, then serves queues in queue order; within a
// queue, jobs in job order. After each job gets resources its queue is ranked again, so an
// order that depends on what queues hold (fair share) sees every allocation.
func (a *Action) Execute(ctx context.Context, ssn *framework.Session) {
	jobs := actions.SchedulableJobs(ssn)
	search := actions.NewNodeSearch(ssn)
	// Promises made in earlier cycles come first: what their victims freed is theirs before
	// any other job may bind into idle resources. A job that cannot be scheduled any more
	// (its queue was deleted, became invalid or got children) keeps no promise.
	schedulable := make(map[model.JobID]bool, len(jobs))
	for _, job := range jobs {
		schedulable[job.ID] = true
	}
	for _, job := range ssn.Snapshot().Jobs {
		if promised := job.PipelinedPods(); len(promised) > 0 {
			a.keepPromise(ctx, ssn, search, job, promised, schedulable[job.ID])
		}
	}
	queues := actions.NewJobQueues(ssn, slices.DeleteFunc(jobs, func(j *model.JobInfo) bool { return !j.IsWaiting() }))
	// failed remembers the gang shapes that did not fit, with why: allocate only takes
	// resources, so a shape that failed almost always keeps failing until the action ends.
	// (Greedy placement of another job can, rarely, steer a later pod of the same shape to a
	// node where its gang would fit; that job then waits one cycle. Forgetting the memory on
	// every placement would instead retry every waiting job after each bind in a full
	// cluster.)
	failed := map[string]string{}
	for job := queues.Next(); job != nil; job = queues.Next() {
		allocated := a.allocateJob(ctx, ssn, search, job, failed)
		if allocated && len(job.PendingPods()) > 0 {
			queues.Push(job) // an elastic job grows one pod per turn, taking turns with others
		}
	}
}

// allocateJob places the job's gang if it is not yet satisfied, or else one more pod, and
// commits. It reports whether anything was placed.
func (a *Action) allocateJob(ctx context.Context, ssn *framework.Session, search *actions.NodeSearch, job *model.JobInfo, failed map[string]string) bool {
	topo, err := actions.ResolveTopology(ssn.Snapshot(), job)
	if err != nil {
		ssn.RecordPendingReason(job.ID, "topology: "+err.Error())
		return false
	}
	if topo != nil {
		return a.allocateInTopology(ctx, ssn, search, job, topo, failed)
	}
	st := ssn.NewStatement()
	if job.IsGangSatisfied() {
		pod := a.growth(ssn, job)
		if pod == nil {
			return false
		}
		if node := search.BestNode(pod, actions.IdleNow); node != nil && st.Allocate(pod, node.Name) == nil {
			return a.commit(ctx, ssn, st, job)
		}
		return false // elastic growth waits for idle resources; it never pipelines
	}
	gang, shape, ok := a.gang(ssn, job, failed)
	if !ok {
		return false
	}
	for _, capacity := range []actions.Capacity{actions.IdleNow, actions.IdleOrReleasing} {
		reason := placeAll(st, search, gang, capacity)
		if reason == "" {
			return a.commit(ctx, ssn, st, job)
		}
		st.Discard() // first, so that the gang's report counts only what the job really has
		if capacity == actions.IdleOrReleasing {
			ssn.RecordPendingReason(job.ID, withGang(job, reason))
			failed[shape] = reason
		}
	}
	return false
}

// allocateInTopology is allocateJob for a job with a topology constraint: its gang, or the
// pod it grows by, goes inside its domains. (A function of its own: its statement goes to
// the heap, which the one allocateJob makes for every other waiting job does not.)
func (a *Action) allocateInTopology(ctx context.Context, ssn *framework.Session, search *actions.NodeSearch,
	job *model.JobInfo, topo *actions.GangTopology, failed map[string]string) bool {
	st := ssn.NewStatement()
	if job.IsGangSatisfied() {
		pod := a.growth(ssn, job)
		if pod == nil {
			return false
		}
		if placeByTopology(ssn, st, search, topo, []*model.PodInfo{pod}, actions.IdleNow) == "" {
			return a.commit(ctx, ssn, st, job)
		}
		st.Discard()
		return false
	}
	gang, shape, ok := a.gang(ssn, job, failed)
	if !ok {
		return false
	}
	for _, capacity := range []actions.Capacity{actions.IdleNow, actions.IdleOrReleasing} {
		reason := placeByTopology(ssn, st, search, topo, gang, capacity)
		if reason == "" {
			return a.commit(ctx, ssn, st, job)
		}
		st.Discard()
		if capacity == actions.IdleOrReleasing {
			ssn.RecordPendingReason(job.ID, withGang(job, reason))
			failed[shape] = reason
		}
	}
	return false
}

// growth is the pod a job whose gang is placed grows by next, or nil when it should not grow
// now: its gang is still pipelined (growing would bind pods that cannot work yet), or its
// queue may not have more (growth beyond the gang is optional: no reason worth reporting).
func (a *Action) growth(ssn *framework.Session, job *model.JobInfo) *model.PodInfo {
	if job.CountActive() < job.CountPlaced() {
		return nil
	}
	pod := job.PendingPods()[0]
	if !ssn.Allocatable(job, pod.Request).IsSuccess() {
		return nil
	}
	return pod
}

// gang is the gang the job waits to place and what its failure is remembered by (see
// Execute's failed), or false when the job cannot be placed now, its pending reason recorded.
func (a *Action) gang(ssn *framework.Session, job *model.JobInfo, failed map[string]string) ([]*model.PodInfo, string, bool) {
	gang, err := actions.GangPods(ssn, job)
	if err != nil {
		ssn.RecordPendingReason(job.ID, err.Error())
		return nil, "", false
	}
	if st := ssn.Allocatable(job, model.Request(gang)); !st.IsSuccess() {
		ssn.RecordPendingReason(job.ID, st.Message())
		return nil, "", false
	}
	shape := actions.FailureKey(job, actions.ShapeKey(job, gang))
	if reason, ok := failed[shape]; ok {
		ssn.RecordPendingReason(job.ID, withGang(job, reason))
		return nil, "", false
	}
	return gang, shape, true
}

// keepPromise handles a job promised resources in an earlier cycle (pipelined pods, kept as
// their nominated node). Once the whole gang can be bound, preferably where it was
// promised, it is; until then the promise stands and the job waits, whoever else is pending
// — that is what makes an eviction for a job benefit that job. A promise that can no longer
// be met (its node is cordoned, refuses the pod, or was promised more than it will have) is
// withdrawn, and the job is placed like any other; so is the promise of a job that cannot be
// scheduled any more, or that a plugin no longer lets have its gang (a queue limit lowered
// since, say).
func (a *Action) keepPromise(ctx context.Context, ssn *framework.Session, search *actions.NodeSearch,
	job *model.JobInfo, promised []*model.PodInfo, schedulable bool) {
	st := ssn.NewStatement()
	nodes := make([]string, 0, len(promised))
	broken := ""
	if !schedulable {
		broken = "its queue cannot hold jobs"
	}
	for _, p := range promised {
		node := ssn.Snapshot().Node(p.NodeName)
		if broken == "" && (!ssn.Predicate(p, node).IsSuccess() || overPromised(node)) {
			broken = "node " + node.Name + " can no longer take it"
		}
		nodes = append(nodes, p.NodeName)
	}
	// Where the promise stands is fixed before it is withdrawn: a constrained gang's pods
	// that cannot be kept where promised may only go elsewhere in the promise's domain.
	topo, topoErr := actions.ResolveTopology(ssn.Snapshot(), job)
	if broken == "" && topoErr != nil {
		broken = topoErr.Error()
	}
	// The promise is taken back in the statement: what the job may have, and where it fits,
	// is judged without it. Discarding the statement restores it.
	for _, p := range promised {
		if err := st.Withdraw(p); err != nil {
			ssn.Logger().Error(err, "Withdrawing a promise failed", "job", job.ID)
			st.Discard()
			return
		}
	}
	gang, err := actions.GangPods(ssn, job)
	if broken == "" && err == nil {
		if st := ssn.Allocatable(job, model.Request(gang)); !st.IsSuccess() {
			broken = st.Message()
		}
	}
	switch {
	case broken != "":
		ssn.Logger().Info("Promise can no longer be kept; placing the job anew", "job", job.ID, "nodes", nodes, "reason", broken)
		if err := st.Commit(ctx); err != nil {
			ssn.Logger().Error(err, "Withdrawing a promise failed", "job", job.ID)
		}
	case err == nil && keepAll(ssn, st, search, topo, gang, promisedAt(promised), nodes):
		a.commit(ctx, ssn, st, job)
	default:
		st.Discard() // not free yet: the promise stands, and the cycle reports the job as waiting for it
	}
}

// promisedAt is when a job's promise was made: its pipelined pods' earliest PromisedAt.
func promisedAt(promised []*model.PodInfo) int64 {
	at := promised[0].PromisedAt
	for _, p := range promised[1:] {
		at = min(at, p.PromisedAt)
	}
	return at
}

// keepAll binds the gang of a promise made at since, now that it fits: each pod onto a node
// it was promised (preferred, each taken at most once) where the promise may bind
// (Statement.Keep), or else onto idle resources no promise counts on. It reports whether every
// pod was bound. A constrained gang's pods go elsewhere only inside the promise's domain.
func keepAll(ssn *framework.Session, st *framework.Statement, search *actions.NodeSearch, topo *actions.GangTopology,
	pods []*model.PodInfo, since int64, preferred []string) bool {
	preferred = slices.Clone(preferred)
	for _, pod := range pods {
		kept := slices.IndexFunc(preferred, func(name string) bool {
			node := ssn.Snapshot().Node(name)
			return node != nil && ssn.Predicate(pod, node).IsSuccess() && st.Keep(pod, name, since) == nil
		})
		if kept >= 0 {
			preferred = slices.Delete(preferred, kept, kept+1)
			continue
		}
		var node *model.NodeInfo
		if within := topo.FixedNodes(pod); within != nil {
			node = search.BestNodeIn(pod, actions.IdleNow, within, nil)
		} else {
			node = search.BestNode(pod, actions.IdleNow)
		}
		if node == nil || st.Allocate(pod, node.Name) != nil {
			return false
		}
	}
	return true
}

// overPromised reports whether the node's promises exceed what it will have once its
// releasing pods are gone, in a resource they were promised, which happens when something
// outside the scheduler's view took resources (another scheduler's pod, a smaller
// allocatable). A resource the promised pods do not ask for does not break their promise.
func overPromised(node *model.NodeInfo) bool {
	return !node.Pipelined.FitsIn(node.Allocatable.Sub(node.Used))
}

// placeAll places every pod or returns why one could not be placed. With IdleOrReleasing the
// whole gang is pipelined: binding part of a gang while the rest waits would hold GPUs that
// cannot do any work.
func placeAll(st *framework.Statement, search *actions.NodeSearch, pods []*model.PodInfo, capacity actions.Capacity) string {
	for i, pod := range pods {
		node := search.BestNode(pod, capacity)
		if node == nil {
			return fmt.Sprintf("gang of %s does not fit: pod %d of %d fits on no node (%s)",
				plural.Count(len(pods), "pod", "pods"), i+1, len(pods), search.Explain())
		}
		var err error
		if capacity == actions.IdleNow {
			err = st.Allocate(pod, node.Name)
		} else {
			err = st.Pipeline(pod, node.Name)
		}
		if err != nil {
			return err.Error()
		}
	}
	return ""
}

func (a *Action) commit(ctx context.Context, ssn *framework.Session, st *framework.Statement, job *model.JobInfo) bool {
	if err := st.Commit(ctx); err != nil {
		ssn.Logger().Error(err, "Committing allocation failed", "job", job.ID)
		ssn.RecordPendingReason(job.ID, "committing the allocation failed: "+err.Error())
		return false
	}
	return true
}

// withGang adds to why a gang counted in sub-groups did not fit what that gang is: the
// placement reason alone (so many nodes short of GPUs) does not say that the job needs only
// some of its replicas. Other jobs' reasons are left as they are.
func withGang(job *model.JobInfo, reason string) string {
	if !job.CountsSubGroups() {
		return reason
	}
	summary, _ := job.GangReport()
	return reason + " (its gang " + summary + ")"
}
