package framework

import (
	"context"
	"fmt"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
)

// ActionType names an action; eviction hooks receive it so that a plugin can treat reclaim
// (across queues) and preempt (within a queue) differently.
type ActionType string

// The actions of a cycle.
const (
	Allocate ActionType = "allocate"
	Reclaim  ActionType = "reclaim"
	Preempt  ActionType = "preempt"
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
type (
	// CompareFn orders two items: negative if l goes first, positive if r does, 0 if this
	// plugin has no preference. Plugins are asked in configuration order; the first non-zero
	// answer decides. Used for job and task order, and for queue order on QueueTurns.
	CompareFn[T any] func(l, r T) int

	// PredicateFn says whether a pod may run on a node; nil means yes. Every plugin's
	// predicate must pass.
	PredicateFn func(pod *api.PodInfo, node *api.NodeInfo) error

	// NodeOrderFn scores a node for a pod; higher is better. Scores of all plugins are summed.
	NodeOrderFn func(pod *api.PodInfo, node *api.NodeInfo) float64

	// AllocatableFn says whether a job may be given request more resources (a whole gang or
	// one more pod), whatever the nodes hold: queue limits, deserved quota for non-preemptible
	// jobs. nil means yes; every plugin must agree and the first objection is the reason. An
	// objection that evictions can lift is a *LimitExceeded, which reclaim and preempt
	// answer by choosing victims under the limited queue.
	AllocatableFn func(job *api.JobInfo, request api.Resources) error

	// PodStatusChangeFn is told of every change of a pod's status inside the session (each
	// decision, each rollback, each failed bind) after it happened, so that a plugin can keep
	// running totals instead of recounting. All registered functions are called.
	PodStatusChangeFn func(pod *api.PodInfo, from api.PodStatus)

	// IsPreemptibleFn says whether preemptee's pods may be evicted for preemptor in the given
	// action. The answers of all plugins are ANDed: any plugin can protect a victim. With no
	// plugin registered every victim that passed the action's own rules is preemptible.
	// The answer may depend on the preemptor only through its queue, priority and
	// preemptibility (and on the victim and the session's time): the victim search reuses
	// what it learned about a node for every preemptor alike in those. A plugin may still
	// note, for the preemptor at hand, why a victim was refused: refused victims are asked
	// again for each preemptor.
	IsPreemptibleFn func(action ActionType, preemptor, preemptee *api.JobInfo) bool

	// ScenarioFiltersFn returns filters that the victim solver applies to every candidate set
	// of victims for pendingJob before simulating placement. The filters of all plugins are
	// concatenated; a candidate set must pass all of them.
	ScenarioFiltersFn func(action ActionType, pendingJob *api.JobInfo) []ScenarioFilter

	// EvictionNoteFn explains, for the victim's owner, what the plugin made of an eviction
	// being decided: for instance how long the victim ran and which protection it had.
	// The zero note says nothing. The notes of all plugins are joined.
	EvictionNoteFn func(action ActionType, preemptor, victim *api.JobInfo) EvictionNote

	// ProtectionFn tells how the plugin protects a running job from eviction, for the job's
	// status; false when it does not. The first plugin that answers is shown.
	ProtectionFn func(job *api.JobInfo) (api.Protection, bool)
)

// EvictionNote is what a plugin says about one victim job of an eviction.
type EvictionNote struct {
	// Text is for the victim's owner (EvictionReason.Note goes into the victim's event).
	Text string
	// Ran is how long the victim had run, when RanKnown: the plugin that counts runtime
	// (min-runtime) knows which start to trust.
	Ran      time.Duration
	RanKnown bool
}

// PlanFilter is a ScenarioFilter that also judges the finished plan, once every victim is
// chosen and the gang placed. A rule about what a plan adds up to — a queue's allocation once
// the victims are gone and the gang runs — cannot be judged unit by unit: more victims can
// only help it, so vetting partial plans would throw away the victims it needs.
type PlanFilter interface {
	ScenarioFilter
	// AllowsPlan reports whether the complete plan is acceptable; when not, reason says why.
	AllowsPlan(scenario Scenario) (ok bool, reason string)
}

// PluginObjection is a plugin's refusal, naming the plugin. The victim search asks for
// objections thousands of times a cycle and reads few of them, so the message is only
// formatted when it is read.
type PluginObjection struct {
	Plugin string
	Err    error
}

func (e *PluginObjection) Error() string { return e.Plugin + ": " + e.Err.Error() }

func (e *PluginObjection) Unwrap() error { return e.Err }

// LimitExceeded is the objection that a queue would pass its hard limit of a resource. It is
// judged on what the queue holds now; evicting at least Excess of Resource from jobs in the
// queue's subtree lifts it, so reclaim and preempt judge it once their victims are gone.
type LimitExceeded struct {
	Queue    string
	Resource api.ResourceName
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
	Queue *api.QueueInfo
	Job   *api.JobInfo
}

// Scenario is a candidate set of victims the solver considers for one pending job.
type Scenario interface {
	// Preemptor is the pending job that would get the freed resources.
	Preemptor() *api.JobInfo
	// VictimJobs are the jobs that would lose pods, in a deterministic order.
	VictimJobs() []*api.JobInfo
	// VictimPods are the pods of victimJob that would be evicted.
	VictimPods(victimJob api.JobID) []*api.PodInfo
	// VictimUnits are the same pods grouped as they joined the scenario, in order: one
	// surplus pod at a time, or a whole gang at once. A policy that asks "was the victim
	// still above its share before this eviction" needs the boundaries.
	VictimUnits(victimJob api.JobID) [][]*api.PodInfo
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
	Job  *api.JobInfo
	Pods []*api.PodInfo
	Seq  uint64
}

// ScenarioFilter rejects candidate victim sets that a policy forbids, before any placement
// is simulated.
type ScenarioFilter interface {
	// Name identifies the filter in logs and explanations.
	Name() string
	// Allows reports whether the scenario is acceptable; when not, reason says why.
	Allows(scenario Scenario) (ok bool, reason string)
}
