package victims

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/placement"
)

// Rules are what distinguishes one eviction action from another.
type Rules interface {
	// Action names the action; plugins' hooks receive it.
	Action() framework.ActionType
	// MayEvict applies the action's own rules to a victim, before any plugin is asked.
	MayEvict(preemptor, victim *model.JobInfo) bool
	// CompareVictimQueues ranks the queues of two victims: negative if l's go first.
	CompareVictimQueues(ssn *framework.Session, l, r *model.JobInfo) int
	// OwnQueueOnly reports whether victims always share the preemptor's queue, which lets the
	// search look at that queue's units alone.
	OwnQueueOnly() bool
	// Prospects narrows the candidates before any search: the test it returns is true for
	// every job MayEvict allows to at least one of the preemptors (and may be true for more).
	// Leaving a job out must not change how the others rank; nil keeps every job.
	Prospects(preemptors []*model.JobInfo) func(victim *model.JobInfo) bool
}

// Mover is implemented by the rules of an action that moves its victims rather than ends
// them (consolidation): a plan holds only if every victim pod fits elsewhere at once once
// the plan is carried out, and only pending jobs the action serves are searched for.
type Mover interface {
	// MaxMovedJobs is how many jobs the action may move in a cycle; 0 turns it off.
	MaxMovedJobs() int
	// MovesFor reports whether the action searches for the pending job at all.
	MovesFor(preemptor *model.JobInfo) bool
}

// Placement is where a gang pod will run once its victims are gone.
type Placement struct {
	Pod  *model.PodInfo
	Node string
}

// Plan is the outcome of a successful search.
type Plan struct {
	// Victims to evict, grouped by job in the order they were chosen.
	Victims []*model.PodInfo
	// Placements of every gang pod.
	Placements []Placement
	// Moves are where each victim fits once the plan is carried out, for a Mover's plan: a
	// node each can go to at once, not a promise (the pods are recreated and placed anew).
	Moves []Placement
	// worst is the highest rank among its victims' units (-1 for none): how precious the
	// most precious victim is.
	worst int32
}

// MovedJobs counts the jobs the plan's victims belong to.
func (p *Plan) MovedJobs() int {
	n := 0
	for i, v := range p.Victims {
		if i == 0 || v.Job != p.Victims[i-1].Job {
			n++
		}
	}
	return n
}

// nodeUnit is a victim unit as seen from one node: the unit's pods on that node.
type nodeUnit struct {
	unit *unit
	pods []*model.PodInfo
}

// Solver searches victims for the pending jobs of one action run. Units are collected and
// ranked once; pods evicted by earlier plans stop counting as they stop running.
type Solver struct {
	ssn       *framework.Session
	rules     Rules
	nodes     []*model.NodeInfo
	nodeIndex map[string]int
	// byNode lists each node's units in rank order; byQueue the same per victim queue.
	byNode  [][]nodeUnit
	byQueue map[string][][]nodeUnit
	// ranked holds every candidate unit in rank order.
	ranked []*unit
	// jobs counts the candidate victim jobs; eligibility buffers have this length.
	jobs int
	// free is what each node has free, kept across searches while the node's version holds
	// (freeOK, freeVersion); during a search, what it would have free under the plan.
	free        []nodeFree
	freeOK      []bool
	freeVersion []uint64
	// eligible caches, per candidate job, what the action's rules and the plugins answered
	// for the preemptors of one shape in a row (ShapeKey), whose epoch eligibleEpoch holds:
	// jobs of one shape get the same answers, and a cycle with thousands of identical
	// reclaimers would otherwise ask the plugins about every protected victim once per
	// reclaimer (a cycle at 500 nodes with half the victims protected took 0.8 s).
	eligible      []bool
	eligibleEpoch []uint32
	epoch         uint32
	shape         string
	// askedBy is, per candidate job, the preemptor whose answer eligible holds; unaskedIn the
	// search (searches counts them) that last noted it as unasked, so that a search notes each
	// job once.
	askedBy   []*model.JobInfo
	unaskedIn []uint32
	searches  uint32
	// unasked is the buffer of search.unasked, kept between searches: most searches succeed
	// and never read it, and a list per search would cost refused victims x searches.
	unasked []*model.JobInfo
	// options are the nodes' options for the current class of pod (see nodeOptions);
	// estimates every node's, for the topology domains' estimates (see estimateDomains).
	options, estimates nodeOptions
	// booked are, per node, the pods a Mover's carried-out plans moved there (Book).
	booked map[int][]*model.PodInfo
	// moves is whether the rules are a Mover's. Then movable holds, per unit (by rank),
	// whether each of its pods fits on some node now (1), not (-1) or unknown (0), and
	// moveClasses the answers per class of pod: a unit whose pods cannot go anywhere is no
	// victim of a move, and in a full cluster most cannot.
	moves       bool
	movable     []int8
	moveClasses []moveClass
	// judgedIn holds, per candidate unit (by rank), the epoch in which the unit filters last
	// judged it alone (framework.UnitFilter), and unitRefused their answer. A unit refused
	// alone is refused in any plan of the epoch (preemptors of one shape in a row, whose
	// plans only take more), so the walks leave it out rather than build a plan with it on
	// every node: a reclaimer whose victims their queues' fair shares all protect was
	// otherwise refused once per unit per node, at 1,000 nodes seconds per cycle.
	judgedIn    []uint32
	unitVerdict []framework.Status
	// placed counts the gang's pods the latest search found room for.
	placed int
}

// moveClass is what decides where a pod may go — its request, its placement and its share —
// and whether such a pod fits on some node.
type moveClass struct {
	request   model.Resources
	placement string
	share     model.GPUShare
	fits      bool
}

// mayMove reports whether each live pod of the unit fits on some node as things stand: a
// heuristic, kept per class of pod for the action, that leaves out of moves the victims a
// full cluster has no room for. It can refuse a victim that would fit only in room the plan
// itself frees beside another victim's node — rare, and a missed move, never a wrong one:
// relocate alone decides where each victim goes. Nor are the answers asked again after a plan
// books room: a stale yes costs only a failed relocate.
func (s *Solver) mayMove(u *unit) bool {
	if m := s.movable[u.rank]; m != 0 {
		return m > 0
	}
	ok := true
	for _, p := range u.pods {
		if isEvictable(p) && !s.fitsSomewhere(p) {
			ok = false
			break
		}
	}
	s.movable[u.rank] = -1
	if ok {
		s.movable[u.rank] = 1
	}
	return ok
}

// fitsSomewhere reports whether a pod of p's class fits on some node now.
func (s *Solver) fitsSomewhere(p *model.PodInfo) bool {
	c := moveClass{request: p.Request}
	if p.Placement != nil {
		c.placement = p.Placement.Key()
	}
	if p.Share != nil {
		c.share = *p.Share
	}
	for _, known := range s.moveClasses {
		if known.request.Equal(c.request) && known.placement == c.placement && known.share == c.share {
			return known.fits
		}
	}
	for i, node := range s.nodes {
		// As the snapshot and the booked moves leave the node, not as a search's plan does:
		// the answer is kept for every later search.
		if s.baseFree(i).fits(p) && !s.portBooked(p, i) && s.ssn.Predicate(p, node).IsSuccess() {
			c.fits = true
			break
		}
	}
	s.moveClasses = append(s.moveClasses, c)
	return c.fits
}

// filterRefused reports whether the unit filters refuse the unit alone, asking them once per
// epoch; a refusal is the search's latest, for its reason (every search of the epoch that
// meets it is told).
func (s *Solver) filterRefused(st *search, u *unit) bool {
	if s.judgedIn[u.rank] != s.epoch {
		s.judgedIn[u.rank] = s.epoch
		s.unitVerdict[u.rank] = framework.UnitAllows(st.filters, framework.ScenarioUnit{Job: u.job, Pods: u.pods})
	}
	if verdict := s.unitVerdict[u.rank]; !verdict.IsSuccess() {
		st.rejection = verdict
		return true
	}
	return false
}

// NewSolver collects and ranks the candidate victims of the session for the preemptors.
func NewSolver(ssn *framework.Session, rules Rules, preemptors []*model.JobInfo) *Solver {
	s := &Solver{ssn: ssn, rules: rules, nodes: ssn.Snapshot().Nodes, nodeIndex: map[string]int{}, byQueue: map[string][][]nodeUnit{}}
	for i, n := range s.nodes {
		s.nodeIndex[n.Name] = i
	}
	s.byNode = make([][]nodeUnit, len(s.nodes))
	if _, s.moves = rules.(Mover); s.moves {
		defer s.bookMoved() // once the candidates are counted: the buffers need them
	}
	compareQueues := func(l, r *model.JobInfo) int { return rules.CompareVictimQueues(ssn, l, r) }
	s.ranked = candidates(ssn, rules.Prospects(preemptors), compareQueues)
	var groups []nodeUnit // one unit's pods per node, reused
	for _, u := range s.ranked {
		s.jobs = max(s.jobs, int(u.jobIndex)+1)
		groups = groupByNode(groups[:0], u)
		queue := s.byQueue[u.job.Queue]
		if queue == nil {
			queue = make([][]nodeUnit, len(s.nodes))
			s.byQueue[u.job.Queue] = queue
		}
		for _, g := range groups {
			i := s.nodeIndex[g.pods[0].NodeName]
			s.byNode[i] = append(s.byNode[i], g)
			queue[i] = append(queue[i], g)
		}
	}
	return s
}

// groupByNode appends to groups the unit's pods per node, nodes in the order the unit's pods
// first reach them. A unit on one node, as most are, keeps its own pod list.
func groupByNode(groups []nodeUnit, u *unit) []nodeUnit {
	first := u.pods[0].NodeName
	if !slices.ContainsFunc(u.pods, func(p *model.PodInfo) bool { return p.NodeName != first }) {
		return append(groups, nodeUnit{unit: u, pods: u.pods})
	}
	for _, p := range u.pods {
		k := slices.IndexFunc(groups, func(g nodeUnit) bool { return g.pods[0].NodeName == p.NodeName })
		if k < 0 {
			groups = append(groups, nodeUnit{unit: u})
			k = len(groups) - 1
		}
		groups[k].pods = append(groups[k].pods, p)
	}
	return groups
}

// freeAt is what node i has free: under the plan during a search, as the snapshot says
// otherwise (recomputed only when the node's version moved).
func (s *Solver) freeAt(i int) nodeFree {
	if v := s.nodes[i].Version(); !s.freeOK[i] || s.freeVersion[i] != v {
		s.free[i], s.freeOK[i], s.freeVersion[i] = s.baseFree(i), true, v
	}
	return s.free[i]
}

// baseFree is what node i has free before any plan: as the snapshot says, less what the
// moves booked there will take.
func (s *Solver) baseFree(i int) nodeFree {
	f := futureFree(s.nodes[i])
	for _, p := range s.booked[i] {
		f = f.occupy(p)
	}
	return f
}

// startSearch readies the caches for a search for a preemptor of shape: a new shape starts a
// new epoch, which forgets every eligibility.
func (s *Solver) startSearch(shape string) {
	s.makeBuffers()
	s.searches++
	if shape != s.shape || shape == "" {
		s.shape = shape
		s.epoch++
	}
}

// makeBuffers makes the caches of the searches, at the first.
func (s *Solver) makeBuffers() {
	if s.free == nil {
		s.free, s.freeOK, s.freeVersion = make([]nodeFree, len(s.nodes)), make([]bool, len(s.nodes)), make([]uint64, len(s.nodes))
		s.eligible, s.eligibleEpoch = make([]bool, s.jobs), make([]uint32, s.jobs)
		s.askedBy, s.unaskedIn = make([]*model.JobInfo, s.jobs), make([]uint32, s.jobs)
		s.judgedIn, s.unitVerdict = make([]uint32, len(s.ranked)), make([]framework.Status, len(s.ranked))
		if s.moves {
			s.movable = make([]int8, len(s.ranked))
		}
	}
}

// planned records what node i would have free under the plan; the node's option is stale.
func (s *Solver) planned(st *search, i int, free nodeFree) {
	s.free[i] = free
	s.options.invalidate(i)
	s.estimates.invalidate(i)
	st.touched = append(st.touched, i)
}

// portPlanned reports whether a host port of the pod is taken on node i by a gang pod the
// plan already placed there.
func (st *search) portPlanned(pod *model.PodInfo, i int) bool {
	return pod.Placement != nil && len(st.ports[i]) > 0 && placement.PortsConflict(pod.Placement.HostPorts, st.ports[i])
}

// forgetPlan drops what the search's plan did to the nodes it touched: the next search
// reads them from the snapshot again, which shows the plan once it is committed.
func (s *Solver) forgetPlan(st *search) {
	for _, i := range st.touched {
		s.freeOK[i] = false
		s.options.invalidate(i)
		s.estimates.invalidate(i)
	}
}

// search is the state of one Solve.
type search struct {
	preemptor *model.JobInfo
	sc        *scenario
	filters   []framework.ScenarioFilter
	rejection framework.Status // the latest refusal of a filter, for the pending reason
	units     [][]nodeUnit     // per node, the units this search may consider
	// touched are the nodes whose free resources the plan changed.
	touched []int
	// ports are the host ports of the gang pods the plan placed, per node: the snapshot does
	// not show them, and two pods of a gang cannot bind one port on one node.
	ports map[int][]model.HostPort
	// unasked are the victim jobs this search found refused from an earlier preemptor's
	// answers, without asking the plugins for this one: if the search fails, they are asked,
	// so that the job is told what refused it.
	unasked []*model.JobInfo
	// excluded is, for a Mover, the victim job the search's plan could not move (it fits
	// nowhere else, or not under its queues' limits): a search without it may find a plan.
	excluded model.JobID
	// without are the victim jobs left out of this search (see Solve).
	without []model.JobID
	// regions confine gang pods to topology domains (a pod without one: anywhere).
	regions map[*model.PodInfo]actions.Region
	// worst is the highest rank among the plan's units; placed counts the gang's pods the
	// search found room for.
	worst  int32
	placed int
}

// Solve plans evictions that let gang (the job's pending pods) fit. When limit is set, a
// queue limit refuses the gang as things stand, and the plan must also take enough from
// under that queue (see coverLimits). It returns nil and a reason when no allowed set of
// victims makes room. shape is the job's ShapeKey: the plugins' answers about victims are
// reused for the next preemptor of the same shape.
//
// A Mover's plan may fail on a victim that cannot be moved (it fits nowhere else, or not
// under its queues' limits); the search is then made again without that job, up to maxMoveAttempts in all, since the victims are
// chosen before they are moved.
func (s *Solver) Solve(preemptor *model.JobInfo, gang []*model.PodInfo, limit *framework.LimitExceeded, shape string) (*Plan, string) {
	return s.SolveIn(preemptor, gang, limit, shape, nil)
}

// SolveIn is Solve with gang pods confined to regions (topology domains; a pod not in
// regions goes anywhere); victims are then taken only on their nodes, besides those a queue
// limit asks for.
func (s *Solver) SolveIn(preemptor *model.JobInfo, gang []*model.PodInfo, limit *framework.LimitExceeded, shape string,
	regions map[*model.PodInfo]actions.Region) (*Plan, string) {
	var without []model.JobID
	var unmovable []string // why each job left out could not move
	for {
		plan, reason, excluded := s.solveWithout(preemptor, gang, limit, shape, without, regions)
		if plan != nil || excluded == "" || len(without)+1 >= maxMoveAttempts {
			if len(without) > 0 {
				s.options.set = false // computed without some victims: not for the next search
			}
			if plan == nil && len(unmovable) > 0 {
				reason += "; left out, as they cannot move: " + strings.Join(unmovable, "; ")
			}
			return plan, reason
		}
		without, unmovable = append(without, excluded), append(unmovable, reason)
		s.options.set = false
	}
}

// maxMoveAttempts bounds the searches of a Mover's plan for one job: each leaves out one
// more victim that could not be moved.
const maxMoveAttempts = 3

// solveWithout is one search, the jobs in without left out as victims; it returns the plan,
// or why there is none and the victim job that could not be moved, if that is why.
func (s *Solver) solveWithout(preemptor *model.JobInfo, gang []*model.PodInfo, limit *framework.LimitExceeded, shape string,
	without []model.JobID, regions map[*model.PodInfo]actions.Region) (*Plan, string, model.JobID) {
	st := &search{
		preemptor: preemptor,
		sc:        newScenario(preemptor),
		filters:   s.ssn.GetAccumulatedScenarioFilters(s.rules.Action(), preemptor),
		units:     s.byNode,
		unasked:   s.unasked[:0],
		without:   without,
		regions:   regions,
		worst:     -1,
	}
	s.startSearch(shape)
	defer s.forgetPlan(st)
	plan, reason := s.solve(st, gang, limit)
	s.placed = st.placed
	if plan != nil {
		plan.worst = st.worst
	}
	if plan == nil {
		for _, victim := range st.unasked {
			s.ssn.IsPreemptible(s.rules.Action(), preemptor, victim) // told, not decided: the answer is known
		}
	}
	s.unasked = st.unasked
	return plan, reason, st.excluded
}

// solve is Solve's search.
func (s *Solver) solve(st *search, gang []*model.PodInfo, limit *framework.LimitExceeded) (*Plan, string) {
	if s.rules.OwnQueueOnly() {
		if st.units = s.byQueue[st.preemptor.Queue]; st.units == nil {
			// No victims, but resources being released may still take the gang.
			st.units = make([][]nodeUnit, len(s.nodes))
		}
	}
	if verdict := framework.ScenarioAllows(st.filters, st.sc); !verdict.IsSuccess() {
		return nil, verdict.Message()
	}
	plan := &Plan{}
	for k, pod := range gang {
		node, ok := s.place(st, pod)
		st.placed = k
		if !ok {
			reason := fmt.Sprintf("no allowed victims make room for pod %d of %d", k+1, len(gang))
			if !st.rejection.IsSuccess() {
				reason += "; " + st.rejection.Message()
			}
			return nil, reason
		}
		plan.Placements = append(plan.Placements, Placement{Pod: pod, Node: node})
	}
	st.placed = len(gang)
	if limit != nil {
		if reason := s.coverLimits(st, model.Request(gang), limit); reason != "" {
			return nil, reason
		}
	}
	if verdict := framework.PlanAllows(st.filters, st.sc); !verdict.IsSuccess() {
		return nil, verdict.Message()
	}
	plan.Victims = st.sc.victims()
	if s.moves && len(plan.Victims) > 0 {
		var reason string
		// Relocated first: the limits are asked on the session, whose statements move the
		// nodes' versions, and the plan's view of the nodes with them.
		if plan.Moves, reason = s.relocate(st, plan.Victims); reason != "" {
			return nil, reason
		}
		if reason = s.movedWithinLimits(st, plan.Victims); reason != "" {
			return nil, reason
		}
	}
	return plan, ""
}

// relocate finds, for every victim, a node it fits on once the plan is carried out — beside
// the gang, the victims placed before it and those of the action's earlier plans, where
// kube-scheduler would allow it (host ports included) — or says which victim fits nowhere,
// and leaves that job out of the next search (excluded). Victims take the first node they
// fit, largest first (first fit decreasing packs well enough to tell whether they all fit
// at once). What they occupy is planned on the nodes, and so forgotten with the search
// unless the plan is carried out (Book).
func (s *Solver) relocate(st *search, victims []*model.PodInfo) ([]Placement, string) {
	order := slices.Clone(victims)
	slices.SortStableFunc(order, func(a, b *model.PodInfo) int {
		return cmp.Compare(b.Request.Get(model.GPU), a.Request.Get(model.GPU))
	})
	moves := make([]Placement, 0, len(order))
	for _, v := range order {
		to := s.firstFit(st, v)
		if to < 0 {
			st.excluded = v.Job
			return nil, fmt.Sprintf("pod %s of job %s, to be moved, fits on no node once the job is placed", v.Name, v.Job)
		}
		s.planned(st, to, s.freeAt(to).occupy(v))
		st.placePorts(v, to)
		moves = append(moves, Placement{Pod: v, Node: s.nodes[to].Name})
	}
	return moves, ""
}

// firstFit is the first node a moved pod fits on as the search's plan and the booked moves
// leave it, where kube-scheduler would allow it (host ports included); -1 for none.
func (s *Solver) firstFit(st *search, pod *model.PodInfo) int {
	for i, node := range s.nodes {
		if s.freeAt(i).fits(pod) && !st.portPlanned(pod, i) && !s.portBooked(pod, i) && s.ssn.Predicate(pod, node).IsSuccess() {
			return i
		}
	}
	return -1
}

// movedWithinLimits says why a moved job could not be placed again under its queues' limits,
// or "". The gang was allowed as things stand, so its queues hold no more than their limits
// with it and every moved job back; a queue already above a limit lowered under what it
// holds could not take a moved job back, which would be a preemption.
func (s *Solver) movedWithinLimits(st *search, victims []*model.PodInfo) string {
	for i := 0; i < len(victims); {
		end := i + 1
		for end < len(victims) && victims[end].Job == victims[i].Job {
			end++
		}
		job := s.ssn.Snapshot().Job(victims[i].Job)
		if job != nil {
			stmt := s.ssn.NewStatement()
			for _, p := range victims[i:end] {
				_ = stmt.Evict(p, framework.EvictionReason{}) // victims are running: cannot fail
			}
			verdict := s.ssn.Allocatable(job, model.Request(victims[i:end]))
			stmt.Discard()
			if !verdict.IsSuccess() {
				st.excluded = job.ID
				return fmt.Sprintf("job %s, to be moved, could not be placed again: %s", job.ID, verdict.Message())
			}
		}
		i = end
	}
	return ""
}

// bookMoved books, for a Mover, the pods earlier cycles moved that are still terminating:
// each on the first node it fits, as relocate would place it. Once gone they are recreated
// and placed anew, and a move made meanwhile must not count on the room they need.
func (s *Solver) bookMoved() {
	s.makeBuffers()
	none := &search{} // no plan: the nodes as the snapshot and the bookings leave them
	for _, job := range s.ssn.Snapshot().Jobs {
		for _, p := range job.Pods {
			if p.Status != model.Releasing || !p.Moved {
				continue
			}
			if i := s.firstFit(none, p); i >= 0 {
				s.Book([]Placement{{Pod: p, Node: s.nodes[i].Name}})
			}
		}
	}
}

// Book keeps, for the rest of the action, what a carried-out plan's moved pods will take
// where they fit: a later plan counts on none of it (the pods are recreated and placed anew,
// and room promised to them must still be there).
func (s *Solver) Book(moves []Placement) {
	if s.booked == nil {
		s.booked = map[int][]*model.PodInfo{}
	}
	for _, m := range moves {
		i := s.nodeIndex[m.Node]
		s.booked[i] = append(s.booked[i], m.Pod)
		s.freeOK[i] = false
		s.options.invalidate(i)
		s.estimates.invalidate(i)
	}
}

// portBooked reports whether a host port of pod is taken on node i by a booked move.
func (s *Solver) portBooked(pod *model.PodInfo, i int) bool {
	if pod.Placement == nil || len(pod.Placement.HostPorts) == 0 {
		return false
	}
	for _, b := range s.booked[i] {
		if b.Placement != nil && placement.PortsConflict(pod.Placement.HostPorts, b.Placement.HostPorts) {
			return true
		}
	}
	return false
}

// maxLimitRounds bounds coverLimits: each round lifts one limit of one queue of the
// preemptor's chain, so a few rounds cover every level of a deep tree.
const maxLimitRounds = 16

// coverLimits makes the plan respect queue limits once its victims are gone. The plugins'
// own Allocatable answers, asked on the session with the plan's victims evicted (and then
// rolled back); while it names a limit, the next allowed units from under that queue join
// the plan, best ranked first. It returns why the limits cannot be met, or "".
func (s *Solver) coverLimits(st *search, request model.Resources, limit *framework.LimitExceeded) string {
	for range maxLimitRounds {
		stmt := s.ssn.NewStatement()
		for _, p := range st.sc.victims() {
			_ = stmt.Evict(p, framework.EvictionReason{}) // victims are running: cannot fail
		}
		verdict := s.ssn.Allocatable(st.preemptor, request)
		stmt.Discard()
		if verdict.IsSuccess() {
			return ""
		}
		if !errors.As(verdict.Err(), &limit) || !s.addUnder(st, limit) {
			reason := verdict.Message()
			if !st.rejection.IsSuccess() {
				reason += "; " + st.rejection.Message()
			}
			return reason
		}
	}
	return fmt.Sprintf("queue limits of %s still exceeded after %d rounds of victims", st.preemptor.Queue, maxLimitRounds)
}

// addUnder adds units of jobs in limit.Queue's subtree, in rank order, each vetted by the
// filters, until together they free limit.Excess of the resource. It reports whether they do.
func (s *Solver) addUnder(st *search, limit *framework.LimitExceeded) bool {
	tree := s.ssn.Snapshot().Queues
	under := map[string]bool{}
	need := limit.Excess
	for _, u := range s.ranked {
		if need <= 0 {
			break
		}
		inside, seen := under[u.job.Queue]
		if !seen {
			inside = slices.Contains(tree.Ancestry(u.job.Queue), limit.Queue)
			under[u.job.Queue] = inside
		}
		if !inside || !s.mayEvict(st, u) {
			continue
		}
		// Listed before adding: most units free none of the resource, and are not tried.
		live := st.sc.filterLive(u.pods)
		freed := float64(model.Request(live).Get(limit.Resource))
		if freed <= 0 {
			continue
		}
		undo := st.sc.add(u.job, live)
		if verdict := framework.ScenarioAllows(st.filters, st.sc); !verdict.IsSuccess() {
			undo()
			st.rejection = verdict
			continue
		}
		need -= freed
	}
	return need <= 0
}

// option is a node a pod could go to and what it would cost.
type option struct {
	node     int
	worst    int // highest rank among the units needed; -1 when none
	count    int
	score    float64
	feasible bool
}

// place chooses the cheapest node for pod, commits its evictions to the plan and returns
// the node's name. The nodes are tried best first: fewest and least precious victims, then
// the plugins' score, then node order.
func (s *Solver) place(st *search, pod *model.PodInfo) (string, bool) {
	s.refreshOptions(st, pod)
	opts := &s.options
	var tried []int
	defer func() {
		for _, i := range tried {
			if e := &opts.entries[i]; e.valid {
				opts.heap.Update(i, e.feasible) // back in the heap for the next pod or search
			}
		}
	}()
	for i := opts.heap.Best(); i >= 0; i = opts.heap.Best() {
		opts.heap.Remove(i)
		tried = append(tried, i)
		if s.take(st, pod, i) {
			return s.nodes[i].Name, true
		}
	}
	return "", false
}

func better(a, b option) bool {
	switch {
	case a.worst != b.worst:
		return a.worst < b.worst
	case a.count != b.count:
		return a.count < b.count
	case a.score != b.score:
		return a.score > b.score
	}
	return a.node < b.node
}

// refreshOptions brings every node's option up to date for pod: a node whose version moved,
// or that the plan touched, is evaluated anew; on the others the preemptor is asked about
// the refused victims the option was computed past, as if it had walked them itself. Only
// nodes that moved, were touched or have refused victims are visited (in node order, as a
// walk over every node would meet them): the others' options stand as they are.
func (s *Solver) refreshOptions(st *search, pod *model.PodInfo) {
	s.refresh(&s.options, st, pod, false)
}

// refresh is refreshOptions on opts; with collect, each option keeps the units it counts
// (optionEntry.took).
func (s *Solver) refresh(opts *nodeOptions, st *search, pod *model.PodInfo, collect bool) {
	region := st.regions[pod]
	if class := classOf(st.preemptor, pod, region.Name); !opts.set || !opts.class.equal(class) {
		opts.reset(class, len(s.nodes), region.Nodes)
	}
	moved, mark := s.ssn.Snapshot().NodesMovedSince(opts.mark)
	opts.mark = mark
	for _, i := range opts.toVisit(moved) {
		node := s.nodes[i]
		e := &opts.entries[i]
		if e.valid && e.version == node.Version() {
			for _, u := range e.refused {
				s.mayEvict(st, u)
			}
			continue
		}
		e.valid, e.version, e.option, e.refused, e.took = true, node.Version(), option{node: i}, e.refused[:0], e.took[:0]
		var took *[]*unit
		if collect {
			took = &e.took
		}
		// Victims only where they help: never on a node the pod could not run on anyway.
		if s.ssn.Predicate(pod, node).IsSuccess() && !st.portPlanned(pod, i) && !s.portBooked(pod, i) {
			e.option = s.cost(st, pod, i, &e.refused, took)
			if e.feasible {
				e.score = s.ssn.NodeScore(pod, node)
			}
		}
		opts.heap.Update(i, e.feasible)
		opts.noteRefused(i)
	}
}

// cost walks the node's units in rank order, as if every one were allowed, until the pod
// fits. A unit is counted only if it frees something the pod still lacks (with the units
// sharing its devices, when only together they free one: see step). Units whose eviction is
// refused are added to refused; when took is not nil, the units counted are added to it.
func (s *Solver) cost(st *search, pod *model.PodInfo, i int, refused, took *[]*unit) option {
	free := s.freeAt(i)
	o := option{node: i, worst: -1, feasible: free.fits(pod)}
	var walked []*unit // units a step took beyond the walk's own, on nodes with shares
	for _, nu := range st.units[i] {
		if o.feasible {
			break
		}
		if slices.Contains(walked, nu.unit) {
			continue
		}
		if !s.mayEvict(st, nu.unit) {
			*refused = append(*refused, nu.unit)
			continue
		}
		companions, next, ok := s.step(st, pod, i, free, nu, walked)
		if !ok {
			continue
		}
		free = next
		o.worst, o.count = max(o.worst, int(nu.unit.rank)), o.count+1
		if took != nil {
			*took = append(*took, nu.unit)
		}
		for _, u := range companions {
			o.worst, o.count = max(o.worst, int(u.unit.rank)), o.count+1
			walked = append(walked, u.unit)
			if took != nil {
				*took = append(*took, u.unit)
			}
		}
		if len(companions) > 0 {
			walked = append(walked, nu.unit) // not a companion of a later unit either
		}
		o.feasible = free.fits(pod)
	}
	return o
}

// step is what evicting nu brings the pod on node i, from free: the units to evict beside it
// and what the node then has free, if that helps the pod. A unit whose pods free what the
// pod lacks, or whose shares leave a device the room it lacks, goes alone (no companions:
// the common case allocates nothing). One whose shares free nothing the pod can use alone —
// a whole-GPU pod needs the device empty — goes with every other unit holding shares on its
// devices, when each of them may be evicted: a device is freed whole only by evicting every
// share on it. skip lists units already taken.
func (s *Solver) step(st *search, pod *model.PodInfo, i int, free nodeFree, nu nodeUnit, skip []*unit) ([]nodeUnit, nodeFree, bool) {
	next, freed, evicting := free, model.Resources{}, false
	evict := func(p *model.PodInfo) {
		next, freed, evicting = next.evict(p), freed.Add(nonGPURequest(p)), true
	}
	for _, p := range nu.pods {
		if isEvictable(p) && !st.sc.isEvicted(p) {
			evict(p)
		}
	}
	if !evicting {
		return nil, free, false
	}
	if free.helps(next, freed, pod) {
		return nil, next, true
	}
	if !free.sharesOn(nu.pods) {
		return nil, free, false
	}
	var companions []nodeUnit
	for _, other := range st.units[i] {
		if other.unit == nu.unit || slices.Contains(skip, other.unit) || !sharesDevice(st, other.pods, nu.pods) {
			continue
		}
		if !s.mayEvict(st, other.unit) {
			return nil, free, false
		}
		for _, p := range other.pods {
			counted := slices.Contains(nu.pods, p) || slices.ContainsFunc(companions, func(u nodeUnit) bool { return slices.Contains(u.pods, p) })
			if !counted && isEvictable(p) && !st.sc.isEvicted(p) {
				evict(p)
			}
		}
		companions = append(companions, other)
	}
	if len(companions) == 0 || !free.helps(next, freed, pod) {
		return nil, free, false
	}
	return companions, next, true
}

// nonGPURequest is what a pod frees on its node beside GPUs: all it requests, but for a
// share's GPUs, which free a device only with the device's other shares (nodeFree.evict).
func nonGPURequest(p *model.PodInfo) model.Resources {
	return p.Request.With(model.GPU, 0)
}

// sharesDevice reports whether a live share among pods is on a device a share of others is on.
func sharesDevice(st *search, pods, others []*model.PodInfo) bool {
	for _, p := range pods {
		if !p.IsShare() || !isEvictable(p) || st.sc.isEvicted(p) {
			continue
		}
		for _, o := range others {
			if o.IsShare() && slices.ContainsFunc(p.GPUGroups, func(id string) bool { return slices.Contains(o.GPUGroups, id) }) {
				return true
			}
		}
	}
	return false
}

// taken is a unit chosen for a pod, and its live pods.
type taken struct {
	nu   nodeUnit
	live []*model.PodInfo
}

// take evicts the node's units in rank order (a unit with those sharing its devices, where
// only together they free one: see step), skipping any a filter rejects or that frees
// nothing the pod lacks, until the pod fits; then drops the units it turned out not to need
// and commits the rest to the plan. On failure the plan is left as it was.
func (s *Solver) take(st *search, pod *model.PodInfo, i int) bool {
	free := s.freeAt(i)
	var undos []func()
	var chosen []taken
	for _, nu := range st.units[i] {
		if free.fits(pod) {
			break
		}
		if !s.mayEvict(st, nu.unit) || s.filterRefused(st, nu.unit) {
			continue
		}
		companions, next, ok := s.step(st, pod, i, free, nu, nil)
		if !ok {
			continue
		}
		mark := len(undos)
		live, undo := st.sc.addUnit(nu.unit)
		undos, chosen = append(undos, undo), append(chosen, taken{nu: nu, live: live})
		for _, u := range companions {
			live, undo := st.sc.addUnit(u.unit)
			undos, chosen = append(undos, undo), append(chosen, taken{nu: u, live: live})
		}
		if verdict := framework.ScenarioAllows(st.filters, st.sc); !verdict.IsSuccess() {
			for k := len(undos) - 1; k >= mark; k-- {
				undos[k]()
			}
			undos, chosen = undos[:mark], chosen[:mark]
			st.rejection = verdict
			continue
		}
		free = next
	}
	undoAll := func() {
		for k := len(undos) - 1; k >= 0; k-- {
			undos[k]()
		}
	}
	if !free.fits(pod) {
		undoAll()
		return false
	}
	if kept := prune(chosen, s.freeAt(i), s.nodes[i].Name, pod); len(kept) < len(chosen) {
		undoAll()
		if undos = s.addAll(st, kept); undos == nil {
			undos = s.addAll(st, chosen) // a filter objected to the smaller set: keep what passed
			kept = chosen
		}
		chosen = kept
	}
	for _, t := range chosen {
		st.worst = max(st.worst, t.nu.unit.rank)
		for _, p := range t.live {
			n := s.nodeIndex[p.NodeName]
			s.planned(st, n, s.freeAt(n).evict(p))
		}
	}
	s.planned(st, i, s.freeAt(i).occupy(pod))
	st.placePorts(pod, i)
	return true
}

// placePorts records the host ports of a pod the plan placed on node i.
func (st *search) placePorts(pod *model.PodInfo, i int) {
	if pod.Placement != nil && len(pod.Placement.HostPorts) > 0 {
		if st.ports == nil {
			st.ports = map[int][]model.HostPort{}
		}
		st.ports[i] = append(st.ports[i], pod.Placement.HostPorts...)
	}
}

// prune drops, latest (most precious) first, the units without which the pod still fits on
// the node (named node; base is what it has free without them).
func prune(chosen []taken, base nodeFree, node string, pod *model.PodInfo) []taken {
	keep := make([]bool, len(chosen))
	for k := range keep {
		keep[k] = true
	}
	for k := len(chosen) - 1; k >= 0; k-- {
		keep[k] = false
		total := base
		for j, t := range chosen {
			if !keep[j] {
				continue
			}
			for _, p := range t.live {
				if p.NodeName == node {
					total = total.evict(p)
				}
			}
		}
		if !total.fits(pod) {
			keep[k] = true
		}
	}
	var kept []taken
	for k, t := range chosen {
		if keep[k] {
			kept = append(kept, t)
		}
	}
	return kept
}

// addAll adds units to the plan in order, relisting each one's live pods (see addUnit): a
// whole gang listed without the surplus pods of its own chosen before it takes them back if
// prune dropped them, or they would stay running below its minimum (the property suite's
// G1). It returns nil if a filter refuses one (nothing is left added).
func (s *Solver) addAll(st *search, units []taken) []func() {
	var undos []func()
	for k := range units {
		live, undo := st.sc.addUnit(units[k].nu.unit)
		units[k].live = live
		undos = append(undos, undo)
		if !framework.ScenarioAllows(st.filters, st.sc).IsSuccess() {
			for k := len(undos) - 1; k >= 0; k-- {
				undos[k]()
			}
			return nil
		}
	}
	return undos
}

// mayEvict asks the action's rules and the plugins once per victim job and shape of
// preemptor; whether the victim is the preemptor itself, or gained by eviction in this cycle
// (which earlier plans change), is checked each time.
func (s *Solver) mayEvict(st *search, u *unit) bool {
	victim := u.job
	if victim.ID == st.preemptor.ID || (len(st.without) > 0 && slices.Contains(st.without, victim.ID)) {
		return false
	}
	// The answer known for the epoch first, then whether the job gained by eviction since (a
	// lookup by name, asked only where it changes the outcome: walks meet the same refused
	// victims on every node), then, for a move, whether the unit could go anywhere (a rule of
	// the action, as MayEvict's: nothing to tell the preemptor).
	if s.eligibleEpoch[u.jobIndex] == s.epoch {
		if s.eligible[u.jobIndex] {
			return !s.ssn.GainedByEviction(victim.ID) && (!s.moves || s.mayMove(u))
		}
		if s.unaskedIn[u.jobIndex] != s.searches && s.askedBy[u.jobIndex] != st.preemptor && !s.ssn.GainedByEviction(victim.ID) {
			s.unaskedIn[u.jobIndex] = s.searches
			st.unasked = append(st.unasked, victim)
		}
		return false
	}
	if s.ssn.GainedByEviction(victim.ID) {
		return false
	}
	s.eligibleEpoch[u.jobIndex], s.askedBy[u.jobIndex] = s.epoch, st.preemptor
	// Cheapest test first: the action's rules reject most jobs (preempt: other queues).
	ok := s.rules.MayEvict(st.preemptor, victim) && s.ssn.IsPreemptible(s.rules.Action(), st.preemptor, victim).IsSuccess()
	s.eligible[u.jobIndex] = ok
	return ok && (!s.moves || s.mayMove(u))
}
