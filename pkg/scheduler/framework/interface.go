package framework

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// ActionType names an action; eviction hooks receive it so that a plugin can treat reclaim
// (across queues) and preempt (within a queue) differently. The names are the model's
// (model.ActionType), which the status updater counts evictions by without depending on the
// framework; the plugin API keeps them here, where plugins look for them.
type ActionType = model.ActionType

// The actions of a cycle.
const (
	Allocate          = model.Allocate
	Reclaim           = model.Reclaim
	Preempt           = model.Preempt
	Consolidation     = model.Consolidation
	StaleGangEviction = model.StaleGangEviction
)

// Action is one step of a cycle, such as allocate or reclaim.
type Action interface {
	Name() ActionType
	Execute(ctx context.Context, ssn *Session)
}

// Plugin contributes policy to sessions. A plugin is built once at startup from its
// configuration (so bad arguments fail the start) and asked at every session open to register
// hooks. State for one cycle belongs in the closures it registers, never in plugin fields,
// so nothing leaks from one cycle into the next.
type Plugin interface {
	Name() string
	OnSessionOpen(ssn *Session)
	OnSessionClose(ssn *Session)
}

// Describer is a plugin that can say which settings it runs with, its defaults included, for
// an operator checking a configuration before using it (kai-scheduler check-config).
type Describer interface {
	// Settings are "name=value" pairs in a stable order.
	Settings() []string
}

// Hooks a plugin may register on a session, and how several plugins' answers combine.
//
// Every answer that can refuse is a Status (below), whatever it is about: PredicateFn (a
// node for a pod), AllocatableFn (more resources for a job), IsPreemptibleFn (a victim for a
// preemptor), MayEvictForFn (any victim at all for a preemptor) and the filters ScenarioFiltersFn returns (ScenarioFilter.Allows, a set of
// victims; PlanFilter.AllowsPlan, a finished plan). The session's combining functions
// (Session.Predicate, Session.Allocatable, Session.IsPreemptible, Session.MayEvictFor, ScenarioAllows,
// PlanAllows) return the first refusal and name the plugin that gave it. The other hooks
// refuse nothing, so they keep their own shapes: orders (CompareFn, for jobs, pods and
// queues), scores (NodeOrderFn), a listener (PodStatusChangeFn), notes for a victim's owner
// (EvictionNoteFn), the protection a job's status shows (ProtectionFn) and where a queue
// stands in the fair-share division (QueueShareFn).
type (
	// CompareFn orders two items: negative if l goes first, positive if r does, 0 if this
	// plugin has no preference. Plugins are asked in configuration order; the first non-zero
	// answer decides. Used for job and task order, and for queue order on QueueTurns.
	CompareFn[T any] func(l, r T) int

	// PredicateFn says whether a pod may run on a node. Every plugin's predicate must
	// succeed; the first refusal is the verdict.
	PredicateFn func(pod *model.PodInfo, node *model.NodeInfo) Status

	// NodeOrderFn scores a node for a pod; higher is better. Scores of all plugins are summed.
	NodeOrderFn func(pod *model.PodInfo, node *model.NodeInfo) float64

	// DeviceOrderFn ranks the devices of node a share pod's shares may go to (see
	// model.DeviceOrder). The first plugin to register one decides; without any, the
	// fullest device that fits goes first.
	DeviceOrderFn func(pod *model.PodInfo, node *model.NodeInfo) model.DeviceOrder

	// AllocatableFn says whether a job may be given request more resources (a whole gang or
	// one more pod), whatever the nodes hold: queue limits, deserved quota for non-preemptible
	// jobs. Every plugin must agree and the first refusal is the verdict. A refusal that
	// evictions can lift is Unschedulable with a *LimitExceeded (AsStatus), which reclaim and
	// preempt answer by choosing victims under the limited queue.
	AllocatableFn func(job *model.JobInfo, request model.Resources) Status

	// PodStatusChangeFn is told of every change of a pod's status inside the session (each
	// decision, each rollback, each failed bind) after it happened, so that a plugin can keep
	// running totals instead of recounting. All registered functions are called.
	PodStatusChangeFn func(pod *model.PodInfo, from model.PodStatus)

	// IsPreemptibleFn says whether preemptee's pods may be evicted for preemptor in the given
	// action. The answers of all plugins are ANDed: any plugin can protect a victim, and the
	// first refusal is the verdict. With no plugin registered every victim that passed the
	// action's own rules is preemptible.
	// The answer may depend on the preemptor only through its queue, priority and
	// preemptibility (and on the victim and the session's time): the victim search reuses
	// what it learned about a node for every preemptor alike in those. A plugin may still
	// note, for the preemptor at hand, why a victim was refused: refused victims are asked
	// again for each preemptor.
	IsPreemptibleFn func(action ActionType, preemptor, preemptee *model.JobInfo) Status

	// MayEvictForFn says whether preemptor, a job still lacking its gang, may have other jobs
	// evicted for it in the action (reclaim or preempt), whoever the victims would be: a rule
	// on the preemptor's side, such as its preemption delay, where IsPreemptibleFn is about
	// one victim. Every plugin must agree and the first refusal is the verdict; a refused job
	// is not searched for victims at all. Allocation into free capacity does not ask. A
	// plugin whose answer changes with time notes when (Session.NoteAnswerChangesAt) and
	// tells the job why it waits.
	MayEvictForFn func(action ActionType, preemptor *model.JobInfo) Status

	// ScenarioFiltersFn returns filters that the victim solver applies to every candidate set
	// of victims for pendingJob before simulating placement. The filters of all plugins are
	// concatenated; a candidate set must pass all of them (ScenarioAllows, PlanAllows).
	ScenarioFiltersFn func(action ActionType, pendingJob *model.JobInfo) []ScenarioFilter

	// EvictionNoteFn explains, for the victim's owner, what the plugin made of an eviction
	// being decided: for instance how long the victim ran and which protection it had.
	// The zero note says nothing. The notes of all plugins are joined.
	EvictionNoteFn func(action ActionType, preemptor, victim *model.JobInfo) EvictionNote

	// ProtectionFn tells how the plugin protects a running job from eviction, for the job's
	// status; false when it does not. The first plugin that answers is shown.
	ProtectionFn func(job *model.JobInfo) (model.Protection, bool)

	// QueueShareFn tells where the named queue stands in the plugin's fair-share division of
	// this session, for the Queue's status, metrics and explanations; false for a queue it
	// does not divide to. The first plugin that answers is shown.
	QueueShareFn func(queue string) (model.QueueShare, bool)
)

// Code says what kind of answer a plugin's verdict is, as kube-scheduler's framework codes
// do.
type Code uint8

// The codes of a verdict.
const (
	// Success: yes. It is the zero Code, so that the zero Status is a success.
	Success Code = iota
	// Unschedulable: no, as things stand; evictions, or time (a protection ending), may
	// change the answer: a queue limit that victims under the queue would lift, a victim
	// still protected, a set of victims a policy refuses.
	Unschedulable
	// UnschedulableAndUnresolvable: no, and no eviction changes it: a node whose taint the
	// pod does not tolerate, deserved quota a non-preemptible job would pass.
	UnschedulableAndUnresolvable
)

var codeNames = [...]string{Success: "Success", Unschedulable: "Unschedulable",
	UnschedulableAndUnresolvable: "UnschedulableAndUnresolvable"}

func (c Code) String() string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "Code(" + strconv.Itoa(int(c)) + ")"
}

// Status is a plugin's verdict, the one answer every hook that can say no gives (a node for
// a pod, more resources for a job, a victim for a preemptor, a set of victims, a finished
// plan): a code, the plugin that said it and why, so that whatever reads a refusal — a
// pending job's reasons and the condition and events made of them, kubectl kai explain, a
// metric by plugin or code — reads it from one type. Plugins return the code and the reason;
// the session's combining functions fill in the plugin's name.
//
// Unlike kube-scheduler's *Status, it is a small value: the victim search asks for verdicts
// thousands of times a cycle and most answers in a protected cluster are refusals, so a
// refusal must cost no allocation either. The zero Status is Success. A reason given as an
// error is formatted only when read, and the error stays reachable (Err) for a caller that
// acts on what it says (a LimitExceeded).
type Status struct {
	code   Code
	plugin string
	reason string
	err    error
}

// NewStatus is a verdict of the code for the reason (a refusal's code is not Success).
func NewStatus(code Code, reason string) Status { return Status{code: code, reason: reason} }

// AsStatus is a verdict of the code whose reason is err's message; a nil err is Success.
func AsStatus(code Code, err error) Status {
	if err == nil {
		return Status{}
	}
	return Status{code: code, err: err}
}

// Code is the verdict's code.
func (s Status) Code() Code { return s.code }

// IsSuccess reports whether the verdict is yes.
func (s Status) IsSuccess() bool { return s.code == Success }

// Plugin names the plugin that gave the verdict; empty for success and for the placement
// rules no configuration can turn off (package placement).
func (s Status) Plugin() string { return s.plugin }

// Reason is why, in the plugin's words; empty for success.
func (s Status) Reason() string {
	if s.err != nil {
		return s.err.Error()
	}
	return s.reason
}

// Err is the error the verdict was made of (AsStatus), or nil.
func (s Status) Err() error { return s.err }

// Message is the reason for people: "plugin: reason", or the reason alone when no plugin
// gave it; empty for success.
func (s Status) Message() string {
	if s.plugin == "" {
		return s.Reason()
	}
	return s.plugin + ": " + s.Reason()
}

// WithPlugin is the verdict as given by the named plugin: what a combining function returns.
func (s Status) WithPlugin(plugin string) Status {
	s.plugin = plugin
	return s
}

// EvictionNote is what a plugin says about one victim job of an eviction.
type EvictionNote struct {
	// Text is for the victim's owner (EvictionReason.Note goes into the victim's event).
	Text string
	// Ran is how long the victim had run, when RanKnown: the plugin that counts runtime
	// (min-runtime) knows which start to trust.
	Ran      time.Duration
	RanKnown bool
}

// UnitFilter is a ScenarioFilter that can judge one unit alone, before any plan: a unit it
// refuses alone it refuses in every plan (a plan only takes more from the unit's queue and
// job), so the search leaves such a unit out instead of building plans with it on every
// node it runs on.
type UnitFilter interface {
	ScenarioFilter
	// AllowsUnit judges a plan made of the unit alone.
	AllowsUnit(unit ScenarioUnit) Status
}

// PlanFilter is a ScenarioFilter that also judges the finished plan, once every victim is
// chosen and the gang placed. A rule about what a plan adds up to — a queue's allocation once
// the victims are gone and the gang runs — cannot be judged unit by unit: more victims can
// only help it, so vetting partial plans would throw away the victims it needs.
type PlanFilter interface {
	ScenarioFilter
	// AllowsPlan judges the complete plan.
	AllowsPlan(scenario Scenario) Status
}

// LimitExceeded is the objection that a queue would pass its hard limit of a resource. It is
// judged on what the queue holds now; evicting at least Excess of Resource from jobs in the
// queue's subtree lifts it, so reclaim and preempt judge it once their victims are gone.
type LimitExceeded struct {
	Queue    string
	Resource model.ResourceName
	Limit    float64
	// Excess is how much the queue would hold above Limit.
	Excess float64
}

func (e *LimitExceeded) Error() string {
	return fmt.Sprintf("queue %q would exceed its %s limit of %g", e.Queue, e.Resource, e.Limit)
}

// QueueTurn is a leaf queue as it is compared for order: with the job it would serve next, so
// that a queue whose next job stays within its quota is told apart from one that would go
// over it. Job is nil when queues are ranked for what they already hold (victim order).
type QueueTurn struct {
	Queue *model.QueueInfo
	Job   *model.JobInfo
}

// Scenario is a candidate set of victims the solver considers for one pending job.
type Scenario interface {
	// Preemptor is the pending job that would get the freed resources.
	Preemptor() *model.JobInfo
	// VictimJobs are the jobs that would lose pods, in a deterministic order.
	VictimJobs() []*model.JobInfo
	// VictimPods are the pods of victimJob that would be evicted.
	VictimPods(victimJob model.JobID) []*model.PodInfo
	// VictimUnits are the same pods grouped as they joined the scenario, in order: one
	// surplus pod at a time, or a whole gang at once. A policy that asks "was the victim
	// still above its share before this eviction" needs the boundaries.
	VictimUnits(victimJob model.JobID) [][]*model.PodInfo
	// Units are all the units in the order they joined. Each carries a sequence number no
	// other unit of the scenario's life gets, so a filter that judged a prefix of them can
	// tell from the last number it saw whether that prefix still stands, and judge only
	// what joined since: the search adds victims one unit at a time and asks after each.
	Units() []ScenarioUnit
}

// StandingPrefix returns how many of the first seen units a filter judged (whose sequence
// numbers seqAt gives) are still the scenario's first units: units are only ever added at
// the end and removed, and a number is never reused, so the prefix stands up to the last
// position whose number still matches.
func StandingPrefix(units []ScenarioUnit, seen int, seqAt func(int) uint64) int {
	k := min(seen, len(units))
	for k > 0 && units[k-1].Seq != seqAt(k-1) {
		k--
	}
	return k
}

// ScenarioUnit is one unit of a scenario: pods of one victim job that joined together.
type ScenarioUnit struct {
	Job  *model.JobInfo
	Pods []*model.PodInfo
	Seq  uint64
}

// ScenarioFilter rejects candidate victim sets that a policy forbids, before any placement
// is simulated. ScenarioAllows and PlanAllows combine the filters' verdicts.
type ScenarioFilter interface {
	// Name identifies the filter in logs and explanations, and names it in its verdicts:
	// the name of the plugin that registered it.
	Name() string
	// Allows judges the scenario.
	Allows(scenario Scenario) Status
}
