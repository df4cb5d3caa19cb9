package proportion

import (
	"cmp"
	"fmt"
	"math"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// queueState is one queue's numbers for the cycle.
type queueState struct {
	info *model.QueueInfo
	// fair is the fair share, request what its jobs want, both per resource; deserved is the
	// part of fair its quota earns (see Shares); divided is what its parent had to divide
	// (the cluster's capacity, for a top-level queue).
	fair, request, deserved, divided Vector
	// allocated is what its jobs hold or were promised (pipelined); nonPreemptible the part
	// held by non-preemptible jobs; transient the part pipelined for this cycle only, onto
	// resources being released for other reasons: no promise, so not held when another queue
	// asks whether this one is above its share. Kept current as the session decides.
	allocated, nonPreemptible, transient Vector
	// moving is what its pods consolidation moved hold while they terminate: they come back,
	// so a limit keeps their place (another job of the queue may not take it), though no
	// share counts them.
	moving Vector
	// standingCache, on a leaf, remembers standingFor answers for the leaf's next job at each
	// level of its chain: choosing the next queue compares every leaf's turn with the best
	// one, turn after turn, asking the same questions while nothing changes.
	standingCache struct {
		generation uint64
		job        *model.JobInfo
		standings  []standing // by depth
	}
	// ratio caches shareRatio until allocated changes (ratioOK false); comparing queues asks
	// for it on every comparison.
	ratio   float64
	ratioOK bool
}

// shareState holds every valid queue's numbers and the chain of queues above each leaf.
type shareState struct {
	snapshot *model.Snapshot
	queues   map[string]*queueState
	chains   map[string][]*queueState // leaf name -> states from top level down to the leaf
	// byInfo holds the same chains by queue, for comparisons, which have the queue at hand
	// and would otherwise hash its name twice per comparison.
	byInfo map[*model.QueueInfo][]*queueState
	// next memoises nextRequest per job; taskOrder picks a gang's pods as allocate does.
	next      map[*model.JobInfo]Vector // by pointer: looked up on every queue comparison
	taskOrder func(l, r *model.PodInfo) int
	// generation counts pod status changes (from 1), which invalidate cached answers.
	generation uint64
}

// holdsShare reports whether a pod in this status counts against its queue's share. Releasing
// pods do not: they are leaving, and counting them would reclaim twice for the same GPUs.
func holdsShare(s model.PodStatus) bool {
	return s.IsActive() || s == model.Pipelined
}

// moving reports whether a pod is one consolidation moved, terminating to come back.
func moving(p *model.PodInfo) bool { return p.Status == model.Releasing && p.Moved }

// wantsShare reports whether a pod in this status is part of its queue's request. A
// releasing pod is not: its replacement, pending, is already counted, and counting both
// would inflate the queue's share while victims terminate.
func wantsShare(s model.PodStatus) bool {
	return s != model.Succeeded && s != model.Failed && s != model.Releasing
}

func newShareState(snapshot *model.Snapshot, taskOrder func(l, r *model.PodInfo) int) *shareState {
	st := &shareState{snapshot: snapshot, queues: map[string]*queueState{}, chains: map[string][]*queueState{},
		byInfo: map[*model.QueueInfo][]*queueState{},
		next:   map[*model.JobInfo]Vector{}, taskOrder: taskOrder, generation: 1}
	tree := snapshot.Queues
	for _, name := range tree.Names() {
		if q := tree.Get(name); q.IsValid() {
			st.queues[name] = &queueState{info: q}
		}
	}
	var capacity Vector
	for _, n := range snapshot.Nodes {
		if !n.Unschedulable {
			capacity = capacity.add(fromResources(n.Allocatable))
		}
	}
	leafRequest := map[string]Vector{}
	for _, job := range snapshot.Jobs {
		chain := st.chain(job.Queue)
		if chain == nil {
			continue
		}
		for _, p := range job.Pods {
			if wantsShare(p.Status) {
				leafRequest[job.Queue] = leafRequest[job.Queue].add(fromResources(p.Request))
			}
			if holdsShare(p.Status) {
				st.charge(chain, job, p.Request, 1)
			}
			if moving(p) {
				st.chargeMoving(chain, p.Request, 1)
			}
		}
	}
	fair, deserved := Shares(tree, leafRequest, capacity)
	for name, q := range st.queues {
		q.fair, q.deserved, q.divided = fair[name], deserved[name], capacity
		if q.info.Parent != "" {
			q.divided = fair[q.info.Parent]
		}
	}
	for leaf, request := range leafRequest {
		for _, q := range st.chain(leaf) {
			q.request = q.request.add(request)
		}
	}
	return st
}

// queueShare is where the named queue stands: this session's division, and what it holds as
// the session's decisions left it; false for a queue that is not valid.
func (st *shareState) queueShare(name string) (model.QueueShare, bool) {
	q := st.queues[name]
	if q == nil {
		return model.QueueShare{}, false
	}
	return model.QueueShare{Deserved: q.deserved, FairShare: q.fair, Requested: q.request, Allocated: q.allocated, Divided: q.divided}, true
}

// chain returns the states from the top-level queue down to a valid leaf; nil otherwise.
func (st *shareState) chain(leaf string) []*queueState {
	if c, ok := st.chains[leaf]; ok {
		return c
	}
	var c []*queueState
	if q := st.snapshot.Queues.Get(leaf); q != nil && q.IsLeaf() {
		for _, name := range st.snapshot.Queues.Ancestry(leaf) {
			c = append(c, st.queues[name])
		}
	}
	st.chains[leaf] = c
	return c
}

// chainOf is chain(q.Name), kept by queue.
func (st *shareState) chainOf(q *model.QueueInfo) []*queueState {
	if c, ok := st.byInfo[q]; ok {
		return c
	}
	c := st.chain(q.Name)
	st.byInfo[q] = c
	return c
}

// charge adds (sign 1) or removes (sign -1) a request from every queue of a chain.
func (st *shareState) charge(chain []*queueState, job *model.JobInfo, request model.Resources, sign float64) {
	delta := fromResources(request).scale(sign)
	for _, q := range chain {
		q.allocated, q.ratioOK = q.allocated.add(delta), false
		if !job.Preemptible {
			q.nonPreemptible = q.nonPreemptible.add(delta)
		}
	}
}

// chargeMoving adds (sign 1) or removes (sign -1) a moved pod's request from every queue of a
// chain.
func (st *shareState) chargeMoving(chain []*queueState, request model.Resources, sign float64) {
	delta := fromResources(request).scale(sign)
	for _, q := range chain {
		q.moving = q.moving.add(delta)
	}
}

// podStatusChanged keeps allocated current as the session allocates, evicts and rolls back.
func (st *shareState) podStatusChanged(pod *model.PodInfo, from model.PodStatus) {
	job := st.snapshot.Job(pod.Job)
	delete(st.next, job)
	st.generation++
	chain := st.chain(job.Queue)
	if pod.PromisedAt == 0 && (from == model.Pipelined) != (pod.Status == model.Pipelined) {
		sign := 1.0
		if from == model.Pipelined {
			sign = -1
		}
		delta := fromResources(pod.Request).scale(sign)
		for _, q := range chain {
			q.transient = q.transient.add(delta)
		}
	}
	// As it was, the pod differs only in status: Moved is set with an eviction's status, and
	// undone after the listeners (framework.Statement).
	if wasMoving, isMoving := from == model.Releasing && pod.Moved, moving(pod); wasMoving != isMoving {
		sign := 1.0
		if wasMoving {
			sign = -1
		}
		st.chargeMoving(chain, pod.Request, sign)
	}
	before, after := holdsShare(from), holdsShare(pod.Status)
	if before == after {
		return
	}
	sign := 1.0
	if before {
		sign = -1
	}
	st.charge(chain, job, pod.Request, sign)
}

// allocatable refuses a request that would take any queue above the job past its limit
// (which evictions under that queue lift), or a non-preemptible job past deserved quota
// (which none does).
func (st *shareState) allocatable(job *model.JobInfo, request model.Resources) framework.Status {
	want := fromResources(request)
	for _, q := range st.chain(job.Queue) {
		for _, r := range model.QuotaResources {
			if want[r] == 0 {
				continue
			}
			share := q.info.Resources[r]
			if share.Limit != model.Unlimited && exceeds(q.allocated[r]+q.moving[r]+want[r], share.Limit) {
				return framework.AsStatus(framework.Unschedulable, &framework.LimitExceeded{Queue: q.info.Name, Resource: r,
					Limit: share.Limit, Excess: q.allocated[r] + q.moving[r] + want[r] - share.Limit})
			}
			if !job.Preemptible && share.Quota != model.Unlimited && exceeds(q.nonPreemptible[r]+want[r], share.Quota) {
				return framework.AsStatus(framework.UnschedulableAndUnresolvable,
					&quotaExceeded{queue: q.info.Name, resource: r, quota: share.Quota})
			}
		}
	}
	return framework.Status{}
}

// quotaExceeded is the objection that a non-preemptible job would take its queue past
// deserved quota; formatted only when read (framework.AsStatus): allocate asks for every
// job and turn, and reads few of the answers.
type quotaExceeded struct {
	queue    string
	resource model.ResourceName
	quota    float64
}

func (e *quotaExceeded) Error() string {
	return fmt.Sprintf("non-preemptible jobs may only use deserved quota: queue %q would exceed its %s quota of %g",
		e.queue, e.resource, e.quota)
}

// compareQueues orders two leaf queues for allocation by comparing the sibling branches under
// their lowest common ancestor: a branch owed quota first — its next job stays within its
// deserved quota, the rule that also lets a reclaimer evict — then one whose next job stays
// within its fair share, then the higher priority, then the lower share ratio. A job that
// would take its branch beyond its fair share goes after one that would not: given first,
// what it took beyond its share would be reclaimed for the other once its protection ended,
// an eviction the order alone can spare.
func (st *shareState) compareQueues(l, r framework.QueueTurn) int {
	lc, rc := st.chainOf(l.Queue), st.chainOf(r.Queue)
	switch { // an invalid queue, which holds no share, is served last
	case len(lc) == 0 && len(rc) == 0:
		return 0
	case len(lc) == 0:
		return 1
	case len(rc) == 0:
		return -1
	}
	d := 0
	for d < len(lc) && d < len(rc) && lc[d] == rc[d] {
		d++
	}
	if d == len(lc) || d == len(rc) {
		return 0
	}
	a, b := lc[d], rc[d]
	if c := cmp.Compare(st.standingFor(lc, d, l.Job), st.standingFor(rc, d, r.Job)); c != 0 {
		return c
	}
	if c := cmp.Compare(b.info.Priority, a.info.Priority); c != 0 {
		return c
	}
	return cmp.Compare(a.shareRatio(), b.shareRatio())
}

// standingFor is chain[depth].standing for job's next request, remembered on the chain's
// leaf until a pod changes status or the leaf serves another job.
func (st *shareState) standingFor(chain []*queueState, depth int, job *model.JobInfo) standing {
	c := &chain[len(chain)-1].standingCache
	if c.generation != st.generation || c.job != job {
		c.generation, c.job = st.generation, job
		if c.standings == nil {
			c.standings = make([]standing, len(chain))
		}
		clear(c.standings)
	}
	if c.standings[depth] == standingUnknown {
		c.standings[depth] = chain[depth].standing(st.nextRequest(job))
	}
	return c.standings[depth]
}

// standing is how a branch stands for the job it would serve next, best first.
type standing uint8

const (
	standingUnknown standing = iota // not asked yet (never compared)
	// standingOwed: the job keeps it within its deserved quota.
	standingOwed
	// standingWithinShare: the job keeps it within its fair share, above its deserved quota.
	standingWithinShare
	// standingBeyond: the job would take it beyond its fair share, or there is no job and it
	// is not owed quota.
	standingBeyond
)

// standing is where the queue stands for request (see the constants). Without a request (a
// queue ranked for what it holds) it is owed or beyond, as owed says.
func (q *queueState) standing(request Vector) standing {
	switch {
	case q.owed(request):
		return standingOwed
	case request != (Vector{}) && within(q.allocated.add(request), q.fair, request):
		return standingWithinShare
	}
	return standingBeyond
}

// nextRequest is what a job would take in its next turn: the rest of its gang, or one more
// pod once the gang is placed. It is computed once per job and forgotten when one of the
// job's pods changes status.
func (st *shareState) nextRequest(job *model.JobInfo) Vector {
	if job == nil {
		return Vector{}
	}
	if v, ok := st.next[job]; ok {
		return v
	}
	var v Vector
	if !job.IsGangSatisfied() {
		if gang, err := job.GangPods(st.taskOrder); err == nil {
			v = fromResources(model.Request(gang))
		}
	} else {
		for _, p := range job.Pods {
			if p.Status == model.Pending {
				v = fromResources(p.Request)
				break
			}
		}
	}
	st.next[job] = v
	return v
}

// owed reports whether the queue is owed quota for request: with it added, the queue stays
// within its deserved quota of every resource the request asks for. Without a request (a
// queue ranked for what it holds) it is owed when below its deserved quota somewhere while
// over it nowhere: a queue over the quota of one resource is not owed because another
// resource, such as CPU with an unlimited quota, is not yet fully used.
func (q *queueState) owed(request Vector) bool {
	if request != (Vector{}) {
		return within(q.allocated.add(request), q.deserved, request)
	}
	below := false
	for _, r := range model.QuotaResources {
		if q.info.Resources[r].Quota != model.Unlimited && exceeds(q.allocated[r], q.deserved[r]) {
			return false
		}
		below = below || exceeds(q.deserved[r], q.allocated[r])
	}
	return below
}

// shareRatio is the dominant ratio of allocated to fair share; +Inf when the queue holds or
// wants something it has no share of, so that a queue owed its share goes before one that
// would only borrow.
func (q *queueState) shareRatio() float64 {
	if !q.ratioOK {
		q.ratio, q.ratioOK = q.computeShareRatio(), true
	}
	return q.ratio
}

func (q *queueState) computeShareRatio() float64 {
	ratio := 0.0
	for _, r := range model.QuotaResources {
		switch {
		case q.fair[r] > 0:
			ratio = math.Max(ratio, q.allocated[r]/q.fair[r])
		case q.allocated[r] > 0 || q.request[r] > 0:
			return math.Inf(1)
		}
	}
	return ratio
}

// exceeds reports a > b beyond floating-point noise.
func exceeds(a, b float64) bool {
	return a > b+1e-9*math.Max(1, math.Abs(b))
}
