package victims

import (
	"fmt"
	"slices"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
)

// Rules are what distinguishes one eviction action from another.
type Rules interface {
	// Action names the action; plugins' hooks receive it.
	Action() framework.ActionType
	// MayEvict applies the action's own rules to a victim, before any plugin is asked.
	MayEvict(preemptor, victim *api.JobInfo) bool
	// CompareVictimQueues ranks the queues of two victims: negative if l's go first.
	CompareVictimQueues(ssn *framework.Session, l, r *api.JobInfo) int
	// OwnQueueOnly reports whether victims always share the preemptor's queue, which lets the
	// search look at that queue's units alone.
	OwnQueueOnly() bool
}

// Placement is where a gang pod will run once its victims are gone.
type Placement struct {
	Pod  *api.PodInfo
	Node string
}

// Plan is the outcome of a successful search.
type Plan struct {
	// Victims to evict, grouped by job in the order they were chosen.
	Victims []*api.PodInfo
	// Placements of every gang pod.
	Placements []Placement
}

// nodeUnit is a victim unit as seen from one node: the unit's pods on that node.
type nodeUnit struct {
	unit *unit
	pods []*api.PodInfo
}

// Solver searches victims for the pending jobs of one action run. Units are collected and
// ranked once; pods evicted by earlier plans stop counting as they stop running.
type Solver struct {
	ssn       *framework.Session
	rules     Rules
	nodes     []*api.NodeInfo
	nodeIndex map[string]int
	// byNode lists each node's units in rank order; byQueue the same per victim queue.
	byNode  [][]nodeUnit
	byQueue map[string][][]nodeUnit
	// jobs counts the candidate victim jobs; eligibility buffers have this length.
	jobs int
}

// NewSolver collects and ranks the candidate victims of the session.
func NewSolver(ssn *framework.Session, rules Rules) *Solver {
	s := &Solver{ssn: ssn, rules: rules, nodes: ssn.Snapshot().Nodes, nodeIndex: map[string]int{}, byQueue: map[string][][]nodeUnit{}}
	for i, n := range s.nodes {
		s.nodeIndex[n.Name] = i
	}
	s.byNode = make([][]nodeUnit, len(s.nodes))
	compareQueues := func(l, r *api.JobInfo) int { return rules.CompareVictimQueues(ssn, l, r) }
	for _, u := range candidates(ssn, compareQueues) {
		s.jobs = max(s.jobs, u.jobIndex+1)
		perNode := map[int][]*api.PodInfo{}
		var order []int
		for _, p := range u.pods {
			i := s.nodeIndex[p.NodeName]
			if _, seen := perNode[i]; !seen {
				order = append(order, i)
			}
			perNode[i] = append(perNode[i], p)
		}
		queue := s.byQueue[u.job.Queue]
		if queue == nil {
			queue = make([][]nodeUnit, len(s.nodes))
			s.byQueue[u.job.Queue] = queue
		}
		for _, i := range order {
			s.byNode[i] = append(s.byNode[i], nodeUnit{unit: u, pods: perNode[i]})
			queue[i] = append(queue[i], nodeUnit{unit: u, pods: perNode[i]})
		}
	}
	return s
}

// search is the state of one Solve.
type search struct {
	preemptor *api.JobInfo
	sc        *scenario
	free      []api.Resources // what each node would have free under the plan so far
	eligible  []eligibility   // per candidate job index
	filters   []framework.ScenarioFilter
	rejection string       // the latest objection of a filter, for the pending reason
	units     [][]nodeUnit // per node, the units this search may consider
}

// Solve plans evictions that let gang (the job's pending pods) fit. It returns nil and a
// reason when no allowed set of victims makes room.
func (s *Solver) Solve(preemptor *api.JobInfo, gang []*api.PodInfo) (*Plan, string) {
	st := &search{
		preemptor: preemptor,
		sc:        newScenario(preemptor),
		free:      make([]api.Resources, len(s.nodes)),
		eligible:  make([]eligibility, s.jobs),
		filters:   s.ssn.GetAccumulatedScenarioFilters(s.rules.Action(), preemptor),
		units:     s.byNode,
	}
	if s.rules.OwnQueueOnly() {
		if st.units = s.byQueue[preemptor.Queue]; st.units == nil {
			// No victims, but resources being released may still take the gang.
			st.units = make([][]nodeUnit, len(s.nodes))
		}
	}
	if ok, reason := st.sc.allowedBy(st.filters); !ok {
		return nil, reason
	}
	for i, n := range s.nodes {
		st.free[i] = n.FutureIdle()
	}
	plan := &Plan{}
	for k, pod := range gang {
		node, ok := s.place(st, pod)
		if !ok {
			reason := fmt.Sprintf("no allowed victims make room for pod %d of %d (%s)", k+1, len(gang), pod.Name)
			if st.rejection != "" {
				reason += "; " + st.rejection
			}
			return nil, reason
		}
		plan.Placements = append(plan.Placements, Placement{Pod: pod, Node: node})
	}
	plan.Victims = st.sc.victims()
	return plan, ""
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
// the node's name.
func (s *Solver) place(st *search, pod *api.PodInfo) (string, bool) {
	var options []option
	for i, node := range s.nodes {
		if node.Unschedulable || s.ssn.Predicate(pod, node) != nil {
			continue
		}
		if o := s.cost(st, pod, i); o.feasible {
			o.score = s.ssn.NodeScore(pod, node)
			options = append(options, o)
		}
	}
	slices.SortFunc(options, func(a, b option) int {
		switch {
		case a.worst != b.worst:
			return a.worst - b.worst
		case a.count != b.count:
			return a.count - b.count
		case a.score != b.score:
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return a.node - b.node
	})
	for _, o := range options {
		if s.take(st, pod, o.node) {
			return s.nodes[o.node].Name, true
		}
	}
	return "", false
}

// cost walks the node's units in rank order, as if every one were allowed, until the pod fits.
func (s *Solver) cost(st *search, pod *api.PodInfo, i int) option {
	free := st.free[i]
	o := option{node: i, worst: -1, feasible: pod.Request.FitsIn(free)}
	for _, nu := range st.units[i] {
		if o.feasible {
			break
		}
		freed, ok := s.freedOnNode(st, nu)
		if !ok {
			continue
		}
		free = free.Add(freed)
		o.worst, o.count = nu.unit.rank, o.count+1
		o.feasible = pod.Request.FitsIn(free)
	}
	return o
}

// freedOnNode is what evicting a unit would free on the node of nu, if the unit may be
// evicted for this preemptor and still has running pods there.
func (s *Solver) freedOnNode(st *search, nu nodeUnit) (api.Resources, bool) {
	if !s.mayEvict(st, nu.unit) {
		return api.Resources{}, false
	}
	var freed api.Resources
	for _, p := range nu.pods {
		if isEvictable(p) && !st.sc.isEvicted(p) {
			freed = freed.Add(p.Request)
		}
	}
	return freed, !freed.IsZero()
}

// take evicts the node's units in rank order, skipping any a filter rejects, until the pod
// fits; then it commits them to the plan. On failure the plan is left as it was.
func (s *Solver) take(st *search, pod *api.PodInfo, i int) bool {
	free := st.free[i]
	var undos []func()
	var taken [][]*api.PodInfo
	for _, nu := range st.units[i] {
		if pod.Request.FitsIn(free) {
			break
		}
		freed, ok := s.freedOnNode(st, nu)
		if !ok {
			continue
		}
		live := st.sc.livePods(nu.unit)
		undo := st.sc.add(nu.unit.job, live)
		if ok, reason := st.sc.allowedBy(st.filters); !ok {
			undo()
			st.rejection = reason
			continue
		}
		undos, taken = append(undos, undo), append(taken, live)
		free = free.Add(freed)
	}
	if !pod.Request.FitsIn(free) {
		for k := len(undos) - 1; k >= 0; k-- {
			undos[k]()
		}
		return false
	}
	for _, pods := range taken {
		for _, p := range pods {
			n := s.nodeIndex[p.NodeName]
			st.free[n] = st.free[n].Add(p.Request)
		}
	}
	st.free[i] = st.free[i].Sub(pod.Request)
	return true
}

// eligibility caches whether a victim job may be evicted for the current preemptor.
type eligibility uint8

const (
	unknown eligibility = iota
	eligible
	ineligible
)

// mayEvict asks the action's rules and the plugins once per victim job and preemptor.
func (s *Solver) mayEvict(st *search, u *unit) bool {
	if e := st.eligible[u.jobIndex]; e != unknown {
		return e == eligible
	}
	victim := u.job
	// Cheapest test first: the action's rules reject most jobs (preempt: other queues).
	ok := victim.ID != st.preemptor.ID && s.rules.MayEvict(st.preemptor, victim) &&
		!s.ssn.GainedByEviction(victim.ID) &&
		s.ssn.IsPreemptible(s.rules.Action(), st.preemptor, victim)
	st.eligible[u.jobIndex] = ineligible
	if ok {
		st.eligible[u.jobIndex] = eligible
	}
	return ok
}
