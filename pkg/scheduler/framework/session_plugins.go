package framework

import (
	"cmp"
	"errors"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/placement"
)

// hook is a function registered by a named plugin.
type hook[F any] struct {
	plugin string
	fn     F
}

// hooks holds what plugins registered for one session, in registration (configuration) order.
type hooks struct {
	jobOrder        []hook[CompareFn[*model.JobInfo]]
	taskOrder       []hook[CompareFn[*model.PodInfo]]
	queueOrder      []hook[CompareFn[QueueTurn]]
	predicates      []hook[PredicateFn]
	nodeOrder       []hook[NodeOrderFn]
	deviceOrder     []hook[DeviceOrderFn]
	allocatable     []hook[AllocatableFn]
	statusChange    []hook[PodStatusChangeFn]
	isPreemptible   []hook[IsPreemptibleFn]
	mayEvictFor     []hook[MayEvictForFn]
	scenarioFilters []hook[ScenarioFiltersFn]
	evictionNotes   []hook[EvictionNoteFn]
	protections     []hook[ProtectionFn]
	queueShares     []hook[QueueShareFn]
}

// AddJobOrderFn registers a job comparison.
func (ssn *Session) AddJobOrderFn(plugin string, fn CompareFn[*model.JobInfo]) {
	ssn.hooks.jobOrder = append(ssn.hooks.jobOrder, hook[CompareFn[*model.JobInfo]]{plugin, fn})
}

// AddTaskOrderFn registers a comparison of pods of one job.
func (ssn *Session) AddTaskOrderFn(plugin string, fn CompareFn[*model.PodInfo]) {
	ssn.hooks.taskOrder = append(ssn.hooks.taskOrder, hook[CompareFn[*model.PodInfo]]{plugin, fn})
}

// AddQueueOrderFn registers a queue comparison.
func (ssn *Session) AddQueueOrderFn(plugin string, fn CompareFn[QueueTurn]) {
	ssn.hooks.queueOrder = append(ssn.hooks.queueOrder, hook[CompareFn[QueueTurn]]{plugin, fn})
}

// AddPredicateFn registers a node filter.
func (ssn *Session) AddPredicateFn(plugin string, fn PredicateFn) {
	ssn.hooks.predicates = append(ssn.hooks.predicates, hook[PredicateFn]{plugin, fn})
}

// AddNodeOrderFn registers a node score.
func (ssn *Session) AddNodeOrderFn(plugin string, fn NodeOrderFn) {
	ssn.hooks.nodeOrder = append(ssn.hooks.nodeOrder, hook[NodeOrderFn]{plugin, fn})
}

// AddDeviceOrderFn registers the order of a node's devices for a share pod.
func (ssn *Session) AddDeviceOrderFn(plugin string, fn DeviceOrderFn) {
	ssn.hooks.deviceOrder = append(ssn.hooks.deviceOrder, hook[DeviceOrderFn]{plugin, fn})
}

// AddAllocatableFn registers a job-level allocation check.
func (ssn *Session) AddAllocatableFn(plugin string, fn AllocatableFn) {
	ssn.hooks.allocatable = append(ssn.hooks.allocatable, hook[AllocatableFn]{plugin, fn})
}

// AddPodStatusChangeFn registers a listener for pod status changes.
func (ssn *Session) AddPodStatusChangeFn(plugin string, fn PodStatusChangeFn) {
	ssn.hooks.statusChange = append(ssn.hooks.statusChange, hook[PodStatusChangeFn]{plugin, fn})
}

// AddIsPreemptibleFn registers a victim veto.
func (ssn *Session) AddIsPreemptibleFn(plugin string, fn IsPreemptibleFn) {
	ssn.hooks.isPreemptible = append(ssn.hooks.isPreemptible, hook[IsPreemptibleFn]{plugin, fn})
}

// AddMayEvictForFn registers a preemptor-side veto on evictions.
func (ssn *Session) AddMayEvictForFn(plugin string, fn MayEvictForFn) {
	ssn.hooks.mayEvictFor = append(ssn.hooks.mayEvictFor, hook[MayEvictForFn]{plugin, fn})
}

// AddScenarioFiltersFn registers a source of victim-set filters.
func (ssn *Session) AddScenarioFiltersFn(plugin string, fn ScenarioFiltersFn) {
	ssn.hooks.scenarioFilters = append(ssn.hooks.scenarioFilters, hook[ScenarioFiltersFn]{plugin, fn})
}

// AddEvictionNoteFn registers an explanation of evictions.
func (ssn *Session) AddEvictionNoteFn(plugin string, fn EvictionNoteFn) {
	ssn.hooks.evictionNotes = append(ssn.hooks.evictionNotes, hook[EvictionNoteFn]{plugin, fn})
}

// EvictionNotes joins, in plugin order, what the plugins have to say about evicting victim
// for preemptor in this action; the runtime is the first plugin's that knows it.
func (ssn *Session) EvictionNotes(action ActionType, preemptor, victim *model.JobInfo) EvictionNote {
	var joined EvictionNote
	for _, h := range ssn.hooks.evictionNotes {
		note := h.fn(action, preemptor, victim)
		if note.Text != "" {
			if joined.Text != "" {
				joined.Text += "; "
			}
			joined.Text += note.Text
		}
		if note.RanKnown && !joined.RanKnown {
			joined.Ran, joined.RanKnown = note.Ran, true
		}
	}
	return joined
}

// AddProtectionFn registers a source of the protection a job's status shows.
func (ssn *Session) AddProtectionFn(plugin string, fn ProtectionFn) {
	ssn.hooks.protections = append(ssn.hooks.protections, hook[ProtectionFn]{plugin, fn})
}

// Protection is the first registered plugin's account of how job is protected; false when
// none protects it.
func (ssn *Session) Protection(job *model.JobInfo) (model.Protection, bool) {
	for _, h := range ssn.hooks.protections {
		if p, ok := h.fn(job); ok {
			return p, true
		}
	}
	return model.Protection{}, false
}

// AddQueueShareFn registers a source of where queues stand in the fair-share division.
func (ssn *Session) AddQueueShareFn(plugin string, fn QueueShareFn) {
	ssn.hooks.queueShares = append(ssn.hooks.queueShares, hook[QueueShareFn]{plugin, fn})
}

// QueueShare is the first registered plugin's account of where the named queue stands in the
// fair-share division; false when no plugin divides (none registered, or the queue is not a
// valid one).
func (ssn *Session) QueueShare(queue string) (model.QueueShare, bool) {
	for _, h := range ssn.hooks.queueShares {
		if s, ok := h.fn(queue); ok {
			return s, true
		}
	}
	return model.QueueShare{}, false
}

// firstOpinion returns the first non-zero answer of the registered comparisons.
func firstOpinion[T any](fns []hook[CompareFn[T]], l, r T) int {
	for _, h := range fns {
		if c := h.fn(l, r); c != 0 {
			return c
		}
	}
	return 0
}

// JobOrder compares two jobs: the plugins' first opinion; then jobs still lacking their gang
// before elastic growth, and among growing jobs the one with fewer surplus pods, so that
// elastic jobs take turns; then older first, then by ID, so that the order is total and the
// same on every run.
func (ssn *Session) JobOrder(l, r *model.JobInfo) int {
	if c := firstOpinion(ssn.hooks.jobOrder, l, r); c != 0 {
		return c
	}
	lGang, rGang := l.IsGangSatisfied(), r.IsGangSatisfied()
	if lGang != rGang {
		if rGang {
			return -1
		}
		return 1
	}
	if c := cmp.Compare(l.Surplus(), r.Surplus()); c != 0 {
		return c
	}
	if c := l.CreationTime.Compare(r.CreationTime); c != 0 {
		return c
	}
	return cmp.Compare(l.ID, r.ID)
}

// TaskOrder compares two pods: the plugins' first opinion, then by name.
func (ssn *Session) TaskOrder(l, r *model.PodInfo) int {
	if c := firstOpinion(ssn.hooks.taskOrder, l, r); c != 0 {
		return c
	}
	return cmp.Compare(l.Key(), r.Key())
}

// QueueOrder compares two queues, each with the job it would serve next (or none): the
// plugins' first opinion; then, between two queues' next jobs, the one that waited longer
// (created first), so that no queue's name decides which of two equally entitled jobs gets
// what they both wait for; then by name. Both queues must be non-nil. Names only break ties
// between queues no plugin and no age tells apart; between a reclaimer and its victim they
// never decide, because what was evicted for a job is promised to it (see Statement.Nominate).
func (ssn *Session) QueueOrder(l, r QueueTurn) int {
	if c := firstOpinion(ssn.hooks.queueOrder, l, r); c != 0 {
		return c
	}
	if l.Job != nil && r.Job != nil {
		if c := l.Job.CreationTime.Compare(r.Job.CreationTime); c != 0 {
			return c
		}
	}
	return cmp.Compare(l.Queue.Name, r.Queue.Name)
}

// Predicate is the verdict on placing pod on node: kube-scheduler's filters
// (placement.Refusal), which no configuration can turn off and which name no plugin, then
// the plugins', naming the plugin. Resources are not checked here: what counts as free
// depends on the action.
func (ssn *Session) Predicate(pod *model.PodInfo, node *model.NodeInfo) Status {
	if err := placement.Refusal(pod, node); err != nil {
		// As kube-scheduler codes them: only a taken host port may be freed.
		code := UnschedulableAndUnresolvable
		if errors.Is(err, placement.ErrHostPorts) {
			code = Unschedulable
		}
		return AsStatus(code, err)
	}
	for _, h := range ssn.hooks.predicates {
		if s := h.fn(pod, node); !s.IsSuccess() {
			return s.WithPlugin(h.plugin)
		}
	}
	return Status{}
}

// NodeScore sums the plugins' scores of node for pod.
func (ssn *Session) NodeScore(pod *model.PodInfo, node *model.NodeInfo) float64 {
	var score float64
	for _, h := range ssn.hooks.nodeOrder {
		score += h.fn(pod, node)
	}
	return score
}

// DeviceOrder is the order of node's devices for a share pod: the first registered plugin's,
// else the fullest first (model.PackDevices).
func (ssn *Session) DeviceOrder(pod *model.PodInfo, node *model.NodeInfo) model.DeviceOrder {
	if len(ssn.hooks.deviceOrder) == 0 {
		return model.PackDevices
	}
	return ssn.hooks.deviceOrder[0].fn(pod, node)
}

// Allocatable is the verdict on giving job request more: the first plugin's refusal, naming
// the plugin; Success when every plugin agrees.
func (ssn *Session) Allocatable(job *model.JobInfo, request model.Resources) Status {
	for _, h := range ssn.hooks.allocatable {
		if s := h.fn(job, request); !s.IsSuccess() {
			return s.WithPlugin(h.plugin)
		}
	}
	return Status{}
}

// podStatusChanged tells every listener that pod left status from.
func (ssn *Session) podStatusChanged(pod *model.PodInfo, from model.PodStatus) {
	for _, h := range ssn.hooks.statusChange {
		h.fn(pod, from)
	}
}

// IsPreemptible ANDs the plugins' answers: Success unless some plugin protects preemptee
// from preemptor in this action, and then the first plugin's refusal, naming it. Success
// when no plugin registered the hook.
func (ssn *Session) IsPreemptible(action ActionType, preemptor, preemptee *model.JobInfo) Status {
	// The loop is written out in each of these hot questions rather than shared through a
	// generic helper taking a closure: the second indirect call per hook cost the victim
	// search 6% (BenchmarkLargeJobReclaim, docs/performance.md).
	for _, h := range ssn.hooks.isPreemptible {
		if s := h.fn(action, preemptor, preemptee); !s.IsSuccess() {
			return s.WithPlugin(h.plugin)
		}
	}
	return Status{}
}

// MayEvictFor is the verdict on evicting anyone for preemptor in this action: the first
// plugin's refusal, naming the plugin; Success when every plugin agrees or none asked.
func (ssn *Session) MayEvictFor(action ActionType, preemptor *model.JobInfo) Status {
	for _, h := range ssn.hooks.mayEvictFor {
		if s := h.fn(action, preemptor); !s.IsSuccess() {
			return s.WithPlugin(h.plugin)
		}
	}
	return Status{}
}

// GetAccumulatedScenarioFilters concatenates, in plugin order, the filters every plugin
// wants applied to candidate victim sets for pendingJob in this action.
func (ssn *Session) GetAccumulatedScenarioFilters(action ActionType, pendingJob *model.JobInfo) []ScenarioFilter {
	var filters []ScenarioFilter
	for _, h := range ssn.hooks.scenarioFilters {
		filters = append(filters, h.fn(action, pendingJob)...)
	}
	return filters
}

// ScenarioAllows asks the filters, in order, about the scenario: the first refusal, naming
// the filter (its plugin), or Success.
func ScenarioAllows(filters []ScenarioFilter, scenario Scenario) Status {
	for _, f := range filters {
		if s := f.Allows(scenario); !s.IsSuccess() {
			return s.WithPlugin(f.Name())
		}
	}
	return Status{}
}

// UnitAllows asks the UnitFilters among filters, in order, about a plan of the unit alone: the
// first refusal, naming the filter (its plugin), or Success.
func UnitAllows(filters []ScenarioFilter, unit ScenarioUnit) Status {
	for _, f := range filters {
		if uf, ok := f.(UnitFilter); ok {
			if s := uf.AllowsUnit(unit); !s.IsSuccess() {
				return s.WithPlugin(f.Name())
			}
		}
	}
	return Status{}
}

// PlanAllows asks the PlanFilters among filters, in order, about the finished plan: the first
// refusal, naming the filter (its plugin), or Success.
func PlanAllows(filters []ScenarioFilter, scenario Scenario) Status {
	for _, f := range filters {
		if pf, ok := f.(PlanFilter); ok {
			if s := pf.AllowsPlan(scenario); !s.IsSuccess() {
				return s.WithPlugin(f.Name())
			}
		}
	}
	return Status{}
}
