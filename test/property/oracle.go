package property

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// The properties the oracle checks. Names appear in every failure so a report says which
// promise broke.
const (
	// S0: the timeline itself is coherent (a pod is bound once, evicted only while bound,
	// every eviction names its action and preemptor).
	PropConsistent = "S0 consistent timeline"
	// S1: no eviction before the victim's run start plus the resolved min-runtime, except
	// surplus pods of an elastic job that keeps its minimums. A consolidation move is held to
	// the longer of the victim's preempt min-runtime and, against another queue's preemptor,
	// its reclaim min-runtime against that queue.
	PropSafety = "S1 min-runtime safety"
	// S2: non-preemptible jobs are never victims.
	PropPreemptible = "S2 only preemptible victims"
	// S3: preempt stays in a leaf queue and goes down in priority; reclaim crosses queues;
	// consolidation moves, for a preemptible job, jobs of any queue whose priority is not
	// above its own.
	PropActionRules = "S3 action rules"
	// S5: stalegangeviction evicts, for no preemptor, only a job that runs with fewer pods
	// than its minimum (a pod of it failed); such an eviction is no early eviction (S1): a
	// stale gang makes no progress for min-runtime to protect.
	PropStale = "S5 stale eviction only of a short gang"
	// P1: a job is not evicted twice for the same preemptor before that preemptor starts
	// (moves count: a move is an eviction).
	PropNoThrash = "P1 no thrash"
	// P2: a preemptor starts soon after the pods it waits for are gone: its victims, and pods
	// already terminating where it binds when it was promised (resources being released cost
	// the victim search nothing, so it is placed onto them instead of evicting more).
	PropPromise = "P2 promise kept"
	// P3: every job completes before the horizon.
	PropLiveness = "P3 liveness"
	// K1: every bind is one kube-scheduler would allow: the pod tolerates the node's NoSchedule
	// and NoExecute taints and matches its node selector and required node affinity, and the
	// pods holding the node (bound, or evicted and still terminating) never ask for more of any
	// resource, nor are more pods, than it has allocatable.
	PropPlacement = "K1 placement"
	// S4: a job inside its preemption delay, counted from the later of its submission and
	// its last eviction, triggers no eviction.
	PropDelay = "S4 preemption delay"
	// G1: a job with pods on nodes always has its minimum (minMember pods, or minSubGroup
	// ready sub-groups), at every moment its pods are bound or evicted.
	PropGangKept = "G1 gang kept"
	// E1: an eviction that time alone allowed (the first decision of its cycle, after a
	// period in which nothing in the cluster changed; a consolidation move too) comes within
	// a period of the end of a protection it had been waiting for, as the oracle resolves it,
	// escalation capped at the ceiling, or of its preemptor's preemption delay: no victim is
	// held past its ceiling.
	PropCeiling = "E1 protection ends at its ceiling"
	// L1: among victims the scheduler must hold equal, the one that loses least goes first.
	// When reclaim or preempt evicts a job of one pod, and another job of one pod of the same
	// queue, priority and request runs on the same node, unprotected against that preemptor
	// and left running, the one left has saved its work no later (checkpoint clamped to its
	// run, else its start; name breaks a tie).
	PropLeastLostWork = "L1 least lost work first"
	// Determinism: the same seed gives byte-identical JSON.
	PropDeterminism = "determinism"
	// The run itself: kai-sim stops a run when a node could not honour a bind (its device
	// plugin found no free device, a device over one, or a share beside a whole pod), and
	// there is then no timeline to judge.
	PropRun = "run kai-sim ran to the horizon"
)

// promiseSlack is how many scheduling periods a preemptor may take, after its victims'
// longest grace period, to start: the documented guarantee's two cycles (the first cycle
// after the victims are gone, on the period grid, binds it).
const promiseSlack = 2

// Failure is one broken property, with the job, pod and time it concerns.
type Failure struct {
	Property string
	Job, Pod string
	Time     float64
	Detail   string
}

func (f Failure) String() string {
	if f.Job == "" && f.Pod == "" {
		return fmt.Sprintf("%s: %s", f.Property, f.Detail) // the run's, not a job's
	}
	where := f.Job
	if f.Pod != "" {
		where += " pod " + f.Pod
	}
	return fmt.Sprintf("%s: %s at %s: %s", f.Property, where, clock(f.Time), f.Detail)
}

// Figures count what was checked, so a green run shows it checked something.
type Figures struct {
	Scenarios int
	// Evictions is every eviction judged by S1.
	Evictions int
	// StaleEvictions is every eviction judged by S5 instead.
	StaleEvictions int
	// ProtectionExpired counts evictions whose resolved min-runtime was above zero: the
	// protection was checked and had run out.
	ProtectionExpired int
	// ShortenedExpired counts evictions that only the victim's own shorter min-runtime
	// allowed: its queues' (escalated) would still have protected it.
	ShortenedExpired int
	// EscalatedExpired counts evictions judged against a min-runtime escalation lengthened
	// (the victim's runs had been ended before), CappedExpired those of them at the ceiling,
	// QueueEscalatedExpired those whose factor or ceiling a queue's annotation set: without
	// them the per-queue rule would be generated but never judged.
	EscalatedExpired, CappedExpired, QueueEscalatedExpired int
	// TimeDriven counts the evictions E1 judged: the first decision of a cycle after a quiet
	// period, which time alone allowed; VictimEndedTimeDriven those of them that a protection
	// of one of their own victims, ending then, explains, and EscalatedTimeDriven those an
	// escalated protection's end explains.
	TimeDriven, VictimEndedTimeDriven, EscalatedTimeDriven int
	// ElasticAllowed counts pods of protected elastic jobs evicted within their minimums.
	ElasticAllowed int
	// DelayElapsed counts evictions for a preemptor with a preemption delay, after it ended.
	DelayElapsed int
	// ProtectedRefused counts victims the scheduler refused to a preemptor because min-runtime
	// still protected them (kai-sim's protectedRefusals).
	ProtectedRefused int
	// Binds is every bind judged by K1; TaintedBinds those onto a tainted node, AffinityBinds those of a pod that some node of its cluster does not match,
	// and FullBinds those that left the node with no room for a GPU, an FPGA or a pod.
	Binds, TaintedBinds, AffinityBinds, FullBinds int
	// SubGroupGangMoments counts the moments G1 judged a gang counted in sub-groups with pods
	// on nodes; SubGroupGangEvictions the evictions of such gangs.
	SubGroupGangMoments, SubGroupGangEvictions int
	// LostWorkPairs counts the (evicted, left running) pairs L1 judged; LostWorkByCheckpoint
	// those whose starts alone would have evicted the other: a checkpoint decided.
	LostWorkPairs, LostWorkByCheckpoint int
	// QuotaReclaims counts the reclaim decisions' victim queues Q1 and Q2 judged;
	// OverSubscribedReclaims those among quotas over-subscribed, UnlimitedQuotaReclaims
	// those with a quota of -1 on either side; OwedMoments the jobs Q3 found owed at the
	// start of a cycle; DefaultQueueBinds the pods of default-queue's jobs bound.
	QuotaReclaims, OverSubscribedReclaims, UnlimitedQuotaReclaims, OwedMoments, DefaultQueueBinds int
	// FractionalReclaims counts the victim queues Q1 and Q2 judged that held part of a GPU
	// or lost a share.
	FractionalReclaims int
	// ShareBinds counts the binds of pods asking for a share (D1 to D3), MemoryShareBinds and
	// MultiDeviceShareBinds those of memory shares and of shares of several devices;
	// PackedShareBinds the shares put on a device other shares held, FilledDevices those that
	// filled a device to one whole, WholeAfterShares the devices given whole after shares
	// had held them.
	ShareBinds, MemoryShareBinds, MultiDeviceShareBinds, PackedShareBinds, FilledDevices, WholeAfterShares int
	// ShareEvictions counts the evictions of shares by reclaim or preempt, ShareExpired
	// those after a min-runtime above 0 had expired, SharePreemptorEvictions the evictions
	// made for a job of shares.
	ShareEvictions, ShareExpired, SharePreemptorEvictions int
	// Moves counts the consolidation evictions S1 judged, MovesExpired those after a
	// min-runtime above 0 had expired, MovesExpiredAsReclaim those of them held by the
	// victim's reclaim min-runtime against the preemptor's queue (longer than its preempt
	// one); MoveCycles the cycles that moved jobs C1 judged, FullMoveCycles those that moved
	// as many as they might; MovingScenarios the scenarios with a move; TimeDrivenMoves the
	// moves E1 judged.
	Moves, MovesExpired, MovesExpiredAsReclaim, MoveCycles, FullMoveCycles, MovingScenarios, TimeDrivenMoves int
	// TopologyScenarios counts the scenarios with a Topology; TopologyBinds the binds of jobs
	// with a required level T1 judged; TopologyEvictions the evictions for such jobs T2
	// judged, TopologyLimitExempt those it left unjudged as victims a queue limit may have
	// asked for; TopologyPromisesJudged the binds T2 compared with the domain of the
	// evictions made for them; TopologyOwedMoments the jobs with a required level Q3 found
	// owed, in one domain, at the start of a cycle.
	TopologyScenarios, TopologyBinds, TopologyEvictions, TopologyLimitExempt, TopologyPromisesJudged, TopologyOwedMoments int
}

// Add sums figures.
func (f *Figures) Add(o Figures) {
	f.Scenarios += o.Scenarios
	f.Evictions += o.Evictions
	f.StaleEvictions += o.StaleEvictions
	f.ProtectionExpired += o.ProtectionExpired
	f.ShortenedExpired += o.ShortenedExpired
	f.EscalatedExpired += o.EscalatedExpired
	f.CappedExpired += o.CappedExpired
	f.QueueEscalatedExpired += o.QueueEscalatedExpired
	f.TimeDriven += o.TimeDriven
	f.VictimEndedTimeDriven += o.VictimEndedTimeDriven
	f.EscalatedTimeDriven += o.EscalatedTimeDriven
	f.ElasticAllowed += o.ElasticAllowed
	f.DelayElapsed += o.DelayElapsed
	f.ProtectedRefused += o.ProtectedRefused
	f.Binds += o.Binds
	f.TaintedBinds += o.TaintedBinds
	f.AffinityBinds += o.AffinityBinds
	f.FullBinds += o.FullBinds
	f.SubGroupGangMoments += o.SubGroupGangMoments
	f.SubGroupGangEvictions += o.SubGroupGangEvictions
	f.LostWorkPairs += o.LostWorkPairs
	f.LostWorkByCheckpoint += o.LostWorkByCheckpoint
	f.QuotaReclaims += o.QuotaReclaims
	f.OverSubscribedReclaims += o.OverSubscribedReclaims
	f.UnlimitedQuotaReclaims += o.UnlimitedQuotaReclaims
	f.OwedMoments += o.OwedMoments
	f.DefaultQueueBinds += o.DefaultQueueBinds
	f.FractionalReclaims += o.FractionalReclaims
	f.ShareBinds += o.ShareBinds
	f.MemoryShareBinds += o.MemoryShareBinds
	f.MultiDeviceShareBinds += o.MultiDeviceShareBinds
	f.PackedShareBinds += o.PackedShareBinds
	f.FilledDevices += o.FilledDevices
	f.WholeAfterShares += o.WholeAfterShares
	f.ShareEvictions += o.ShareEvictions
	f.ShareExpired += o.ShareExpired
	f.SharePreemptorEvictions += o.SharePreemptorEvictions
	f.Moves += o.Moves
	f.MovesExpired += o.MovesExpired
	f.MovesExpiredAsReclaim += o.MovesExpiredAsReclaim
	f.MoveCycles += o.MoveCycles
	f.FullMoveCycles += o.FullMoveCycles
	f.MovingScenarios += o.MovingScenarios
	f.TimeDrivenMoves += o.TimeDrivenMoves
	f.TopologyScenarios += o.TopologyScenarios
	f.TopologyBinds += o.TopologyBinds
	f.TopologyEvictions += o.TopologyEvictions
	f.TopologyLimitExempt += o.TopologyLimitExempt
	f.TopologyPromisesJudged += o.TopologyPromisesJudged
	f.TopologyOwedMoments += o.TopologyOwedMoments
}

// MinRuntime resolves the protection of a victim in victimQueue against an eviction by
// action ("preempt" or "reclaim") for a preemptor in preemptorQueue, from the design rules,
// and names the queue (or default) it came from. Written here, apart from the scheduler's
// plugin, so the two can disagree.
func (s *Scenario) MinRuntime(action, preemptorQueue, victimQueue string) (time.Duration, string) {
	victim := s.Ancestry(victimQueue)
	get := func(q *Queue) *time.Duration { return q.ReclaimMinRuntime }
	fallback, name := s.DefaultReclaim, "defaultReclaimMinRuntime"
	start := len(victim) - 1
	if action == "preempt" {
		get, fallback, name = func(q *Queue) *time.Duration { return q.PreemptMinRuntime }, s.DefaultPreempt, "defaultPreemptMinRuntime"
	} else if s.Method != "queue" {
		// lca: one step below the lowest common ancestor, on the victim's side; top-level
		// queues are children of an implicit root, so common 0 starts at the top.
		preemptor := s.Ancestry(preemptorQueue)
		common := 0
		for common < len(preemptor) && common < len(victim) && preemptor[common] == victim[common] {
			common++
		}
		start = min(common, len(victim)-1)
	}
	for i := start; i >= 0; i-- {
		if d := get(victim[i]); d != nil {
			return *d, "queue " + victim[i].Name
		}
	}
	if fallback != nil {
		return *fallback, name
	}
	return 0, "no value set"
}

// Shorten applies the victim's own min-runtime annotation for action to what its queues
// give it (d, from source): a well-formed, non-negative value below d replaces it; any other
// changes nothing, since a job may only shorten its protection, never lengthen it.
func (j *Job) Shorten(action string, d time.Duration, source string) (time.Duration, string) {
	value, key := j.OwnReclaim, ownReclaimAnnotation
	if action == "preempt" {
		value, key = j.OwnPreempt, ownPreemptAnnotation
	}
	if value == "" {
		return d, source
	}
	if own, err := time.ParseDuration(value); err == nil && own >= 0 && own < d {
		return own, "the job's annotation " + key
	}
	return d, source
}

// Escalation is the rule a job's min-runtimes escalate by: a factor (1 is off) and a ceiling,
// and the queues whose annotations set them ("" for the plugin's arguments).
type Escalation struct {
	Factor                  float64
	Ceiling                 time.Duration
	FactorFrom, CeilingFrom string
}

// EscalationOf is the escalation of the jobs of a leaf queue, by the design's rule: the factor
// from the nearest queue, the leaf first and then up its parents, whose escalation-factor
// annotation sets it, else the plugin's escalationFactor (1 when absent); the ceiling the
// same way, on its own, from escalation-ceiling annotations, else escalationCeiling (0s when
// absent). A factor above 1 left with a ceiling of 0s is off (factor 1): the plugin refuses
// that pair of arguments at startup, but annotations on different queues can still make it,
// and no job may become protected for good. Walked here on the scenario's own queues, apart
// from the scheduler's queue tree, so the two can disagree.
func (s *Scenario) EscalationOf(leaf string) Escalation {
	e := Escalation{Factor: max(s.EscalationFactor, 1), Ceiling: s.EscalationCeiling}
	factorSet, ceilingSet := false, false
	for q := s.Queue(leaf); q != nil; q = s.Queue(q.Parent) {
		if q.EscalationFactor != nil && !factorSet {
			e.Factor, e.FactorFrom, factorSet = *q.EscalationFactor, q.Name, true
		}
		if q.EscalationCeiling != nil && !ceilingSet {
			e.Ceiling, e.CeilingFrom, ceilingSet = *q.EscalationCeiling, q.Name, true
		}
	}
	if e.Factor > 1 && e.Ceiling <= 0 {
		e.Factor = 1
	}
	return e
}

// String says the rule and where each half came from, for a failure's message.
func (e Escalation) String() string {
	from := func(queue string) string {
		if queue == "" {
			return "arguments"
		}
		return "queue " + queue
	}
	return fmt.Sprintf("×%g (%s) up to %s (%s)", e.Factor, from(e.FactorFrom), e.Ceiling, from(e.CeilingFrom))
}

// Escalate lengthens a min-runtime d, resolved by the queues or the default, for a job whose
// runs preempt or reclaim ended evictions times, by the escalation rule of the design: d
// itself when escalation is off (no factor above 1), when the job was never evicted, when d
// is 0s (escalation never protects what the operator left open) or already at or above the
// ceiling (it never shortens); else d times the factor once per eviction, rounded to the
// second, at most the ceiling and never below d. Written here, apart from the plugin's
// Escalation, so the two can disagree.
func (e Escalation) Escalate(d time.Duration, evictions int) time.Duration {
	if e.Factor <= 1 || evictions <= 0 || d <= 0 || d >= e.Ceiling {
		return d
	}
	// In seconds as a float, compared with the ceiling before it becomes a Duration: many
	// evictions overflow any Duration (a factor of 3 does after 30).
	grown := math.Round(d.Seconds() * math.Pow(e.Factor, float64(evictions)))
	if grown >= e.Ceiling.Seconds() {
		return e.Ceiling
	}
	return max(d, time.Duration(grown)*time.Second)
}

// Resolution is a victim's min-runtime against one eviction, step by step as the design
// resolves it: its queues' (or the default's), escalated for the runs of it ended before,
// then shortened by its own annotation.
type Resolution struct {
	Queues, Escalated, MinRuntime time.Duration
	// Evictions is the count escalation multiplied by; Source names where MinRuntime came
	// from, with the escalation said when it lengthened it.
	Evictions int
	Source    string
	// Escalation is the victim's queue's (EscalationOf).
	Escalation Escalation
	// As is, for a consolidation move, the action whose min-runtime held it ("preempt" or
	// "reclaim"); "" otherwise.
	As string
}

// Resolve is the min-runtime that protects victim, which preempt or reclaim ended
// evictions runs of, against action by a preemptor in preemptorQueue. Escalation is the
// victim's queue's, whatever the preemptor's: it is the victim's runs that were lost.
//
// A consolidation move restarts the victim as any eviction does, so it is held to the longer
// of its two protections against the preemptor: its preempt min-runtime, and, when the
// preemptor's leaf queue is another, its reclaim min-runtime against that queue (as a
// reclaim resolves it, lca or queue), each escalated and shortened as for its own action; a
// tie goes to preempt. Source then says which of the two it is.
func (s *Scenario) Resolve(action, preemptorQueue string, victim *Job, evictions int) Resolution {
	if action == consolidationAction {
		r := s.Resolve("preempt", preemptorQueue, victim, evictions)
		r.As, r.Source = "preempt", "as a preempt: "+r.Source
		if preemptorQueue != victim.Queue {
			if reclaim := s.Resolve("reclaim", preemptorQueue, victim, evictions); reclaim.MinRuntime > r.MinRuntime {
				r = reclaim
				r.As, r.Source = "reclaim", "as a reclaim from "+preemptorQueue+": "+r.Source
			}
		}
		return r
	}
	queues, source := s.MinRuntime(action, preemptorQueue, victim.Queue)
	escalation := s.EscalationOf(victim.Queue)
	escalated := escalation.Escalate(queues, evictions)
	if escalated != queues {
		source = fmt.Sprintf("%s, escalated from %s for %d evictions (%s)", source, queues, evictions, escalation)
	}
	r := Resolution{Queues: queues, Escalated: escalated, Evictions: evictions, Escalation: escalation}
	r.MinRuntime, r.Source = victim.Shorten(action, escalated, source)
	return r
}

// Judge checks a run of s against every property and counts what it checked. It replays
// the events in time order; events of one time keep their order, which is the order things
// happened within a scheduling cycle.
func Judge(s *Scenario, r *report.Result) ([]Failure, Figures) {
	j := newJudge(s)
	events := slices.Clone(r.Events)
	slices.SortStableFunc(events, func(a, b report.Event) int { return cmp.Compare(a.Time, b.Time) })
	last := lastOfBurst(events)
	j.bindNodes = bindNodes(events)
	for _, e := range events {
		if e.Type == report.EventEvict {
			j.evictedAt[evictionAt{e.PodGroup, e.Time}] = true
		}
	}
	touched := map[string]bool{}
	previous := math.Inf(-1)         // the time of the events before
	var owedBefore map[string]string // Q3: the jobs owed at the start of this time's cycle
	cycleStart := 0                  // where this time's cycle events (binds, evictions) begin
	for i, e := range events {
		if i == 0 || events[i-1].Time < e.Time {
			if s.JudgeOwed {
				j.checkOwedBetween(previous, e.Time)
				owedBefore = j.owed(e.Time, e.Time)
			}
			previous, cycleStart = e.Time, i
		}
		switch e.Type {
		case report.EventBind:
			j.bind(e)
			touched[e.PodGroup] = true
		case report.EventEvict:
			if i == 0 || events[i-1].Time < e.Time {
				// The first decision of its cycle: made on the cluster as the events before
				// it left it, which is what E1 asks about.
				j.checkCeiling(e, events[:i])
			}
			if i == 0 || !sameDecision(events[i-1], e) {
				if e.Action == "reclaim" {
					j.checkReclaimDecision(events, i)
				}
				j.checkDomainDecision(events, i)
			}
			j.evict(e, last[i])
			touched[e.PodGroup] = true
		case report.EventStart:
			j.served(e.PodGroup, e.Time)
		case report.EventComplete:
			j.complete(e)
		case report.EventFail:
			j.podFailed(e)
		}
		// The cycle's own events come first at a time; starts, completions and failures
		// after it (kai-sim's order).
		if cycleEvent(e) && (i == len(events)-1 || events[i+1].Time != e.Time || !cycleEvent(events[i+1])) {
			j.checkOwedCycle(owedBefore, e.Time, events[cycleStart:i+1])
			owedBefore = nil // judged: the rest of this time's events are not the cycle's
		}
		if i == len(events)-1 || events[i+1].Time != e.Time {
			j.checkOwedCycle(owedBefore, e.Time, nil) // a time whose cycle bound and evicted nothing
			j.checkGangs(touched, e.Time)
			clear(touched)
		}
	}
	if s.JudgeOwed {
		j.checkOwedBetween(previous, s.Horizon.Seconds())
	}
	j.checkMoves(events)
	if j.figures.Moves > 0 {
		j.figures.MovingScenarios = 1
	}
	j.finish(r)
	j.figures.ProtectedRefused = r.Totals.ProtectedRefusals
	return j.failures, j.figures
}

// cycleEvent reports whether e is a scheduling cycle's decision: a bind or an eviction.
func cycleEvent(e report.Event) bool {
	return e.Type == report.EventBind || e.Type == report.EventEvict
}

// sameDecision reports whether two evictions are of one reclaim decision: one cycle's, for
// one preemptor.
func sameDecision(a, b report.Event) bool {
	return a.Type == report.EventEvict && a.Time == b.Time && a.Action == b.Action && a.Preemptor == b.Preemptor
}

// judge is the oracle's replay of the timeline.
type judge struct {
	s    *Scenario
	jobs map[string]*Job // by namespace/name, as events name them
	pods map[string]Pod
	// active pods of each job: bound and not evicted since.
	active    map[string]map[string]bool
	runStart  map[string]float64
	completed map[string]bool
	// evictedFor remembers, per (victim, preemptor), the last eviction time while the
	// preemptor has not started since.
	evictedFor map[[2]string]float64
	// lastEvicted is, per job, when a pod of it was last evicted by preempt, reclaim or
	// consolidation: its delay re-arms there (S4). lastEvictedAny counts stale evictions
	// too, which stamp the PodGroup all the same: E1 needs the delay's end as the scheduler
	// knows it.
	lastEvicted, lastEvictedAny map[string]float64
	// endings lists, per job, the times preempt or reclaim ended one of its runs: a decision
	// (a cycle) that left it no bound pod. Escalation counts them (see evictionsBefore); a
	// consolidation move is not one.
	endings map[string][]float64
	// bursts holds the pods of each burst so far.
	bursts   map[burstKey][]string
	promises map[string]*promise
	// terminating lists, per node, every eviction there: when it began and when the pod's
	// grace period ends.
	terminating map[string][]termination
	// bindNodes holds the nodes a job's pods are bound to at one time (all its Bind events
	// at that time), for the pods it waited for there.
	bindNodes map[bindKey][]string
	// nodes and podObjects are the scenario's nodes and pods as Kubernetes objects (K1).
	nodes      map[string]*v1.Node
	podObjects map[string]*v1.Pod
	// holders lists the pods holding each node, for K1. Unlike terminating, which keeps every
	// eviction for P2, it drops a pod once it is gone.
	holders map[string][]*holding
	// shortByFailure marks the jobs a pod of which failed while they had pods on nodes: such
	// a gang is short by no decision of the scheduler's (S5 judges its stale eviction, not
	// G1), until it has left the nodes.
	shortByFailure map[string]bool
	// podNode, boundAt and podDevices are where, when and on which of its node's devices
	// each pod was last bound (L1, and the queues' charges of quota.go).
	podNode    map[string]string
	boundAt    map[string]float64
	podDevices map[string][]int
	// everShared holds the devices shares have been given (a figure of D2).
	everShared map[deviceKey]bool
	// evictedAt holds (job, time) for every eviction of the timeline, ahead of the replay:
	// L1 must know which jobs a cycle evicted after the eviction it judges.
	evictedAt map[evictionAt]bool
	// reported is, per job, the last checkpoint its workload reported in an ended run (L1).
	reported map[string]float64
	// failed holds the pods that failed and have not been bound since: they ask for nothing
	// until their workload restarts (Q1-Q3's requested).
	failed map[string]bool
	// domainPromises holds, per job with a required level that evictions were made for and
	// that has not bound since, the domain they were made in (T2).
	domainPromises map[string]domainPromise
	failures       []Failure
	figures        Figures
}

// evictionAt is a job evicted from at a time.
type evictionAt struct {
	job  string
	time float64
}

// holding is a pod on a node: bound (gone is +Inf), or evicted at began and terminating until
// gone, when its grace period ends. It holds devices of the node: whole (portion 0), or
// portion thousandths of each (a share).
type holding struct {
	pod, job    string
	began, gone float64
	devices     []int
	portion     int64
}

// goneBy reports whether the pod has left its node for a bind at time t. The kubelet removes
// a terminating pod in the first cycle at or after its grace period ends, before that cycle
// schedules, but never in the cycle that evicted it: those binds still see it, whatever its
// grace period.
func (h *holding) goneBy(t float64) bool { return h.gone <= t && h.began < t }

// boundHolding is the holding of a pod bound and not evicted since, on whatever node; nil if
// there is none.
func (j *judge) boundHolding(pod string) *holding {
	for _, list := range j.holders {
		for _, h := range list {
			if h.pod == pod && math.IsInf(h.gone, 1) {
				return h
			}
		}
	}
	return nil
}

// promise is what a preemptor was given: the last eviction made for it and the longest grace
// period among its victims since it last started.
type promise struct {
	last    float64
	grace   int
	victims int
}

type termination struct{ began, ends float64 }

type bindKey struct {
	job  string
	time float64
}

func bindNodes(events []report.Event) map[bindKey][]string {
	nodes := map[bindKey][]string{}
	for _, e := range events {
		if e.Type == report.EventBind {
			k := bindKey{e.PodGroup, e.Time}
			nodes[k] = append(nodes[k], e.Node)
		}
	}
	return nodes
}

func newJudge(s *Scenario) *judge {
	j := &judge{s: s, jobs: map[string]*Job{}, pods: map[string]Pod{}, active: map[string]map[string]bool{},
		runStart: map[string]float64{}, completed: map[string]bool{}, evictedFor: map[[2]string]float64{}, lastEvicted: map[string]float64{},
		lastEvictedAny: map[string]float64{}, endings: map[string][]float64{}, bursts: map[burstKey][]string{}, promises: map[string]*promise{}, terminating: map[string][]termination{},
		nodes: map[string]*v1.Node{}, podObjects: map[string]*v1.Pod{}, holders: map[string][]*holding{}, shortByFailure: map[string]bool{},
		podNode: map[string]string{}, boundAt: map[string]float64{}, podDevices: map[string][]int{}, everShared: map[deviceKey]bool{}, evictedAt: map[evictionAt]bool{}, reported: map[string]float64{},
		failed: map[string]bool{}, domainPromises: map[string]domainPromise{},
		figures: Figures{Scenarios: 1}}
	if s.Topology != nil {
		j.figures.TopologyScenarios = 1
	}
	for _, job := range s.Jobs {
		key := "default/" + job.Name
		j.jobs[key], j.active[key] = job, map[string]bool{}
		for _, p := range job.Pods {
			j.pods[p.Name] = p
			j.podObjects[p.Name] = job.PodObject(p)
		}
	}
	for i := range s.Nodes {
		j.nodes[s.Nodes[i].Name] = s.Nodes[i].Object()
	}
	return j
}

func (j *judge) fail(property string, e report.Event, format string, args ...any) {
	j.failures = append(j.failures, Failure{Property: property, Job: e.PodGroup, Pod: e.Pod, Time: e.Time, Detail: fmt.Sprintf(format, args...)})
}

// burstKey groups the pods of one victim evicted at one time for one preemptor: the unit
// the elastic exception is judged on.
type burstKey struct {
	victim, preemptor string
	time              float64
}

// lastOfBurst marks the last Evict event of each burst.
func lastOfBurst(events []report.Event) map[int]bool {
	lastIndex := map[burstKey]int{}
	for i, e := range events {
		if e.Type == report.EventEvict {
			lastIndex[burstKey{e.PodGroup, e.Preemptor, e.Time}] = i
		}
	}
	last := map[int]bool{}
	for _, i := range lastIndex {
		last[i] = true
	}
	return last
}

func (j *judge) bind(e report.Event) {
	active, ok := j.active[e.PodGroup]
	switch {
	case !ok:
		j.fail(PropConsistent, e, "bind of a job the scenario does not have")
		return
	case j.completed[e.PodGroup]:
		j.fail(PropConsistent, e, "bind after the job completed")
	case active[e.Pod]:
		j.fail(PropConsistent, e, "pod bound while already bound and not evicted")
	}
	if len(active) == 0 {
		j.runStart[e.PodGroup] = e.Time // a new run: its protection starts now
	}
	active[e.Pod] = true
	delete(j.failed, e.Pod)
	if j.jobs[e.PodGroup].Queue == defaultQueue {
		j.figures.DefaultQueueBinds++
	}
	j.podNode[e.Pod], j.boundAt[e.Pod] = e.Node, e.Time
	j.served(e.PodGroup, e.Time)
	j.checkPlacement(e)
	j.checkPromisedDomain(e)
	j.checkOneDomain(e)
}

func (j *judge) evict(e report.Event, lastOfBurst bool) {
	victim, ok := j.jobs[e.PodGroup]
	if !ok {
		j.fail(PropConsistent, e, "eviction of a job the scenario does not have")
		return
	}
	active := j.active[e.PodGroup]
	if !active[e.Pod] {
		j.fail(PropConsistent, e, "pod evicted while not bound")
		return
	}
	if e.Action == "preempt" || e.Action == "reclaim" {
		if preemptor, ok := j.jobs[e.Preemptor]; ok {
			j.checkLeastLostWork(e, victim, preemptor)
		}
	}
	delete(active, e.Pod)
	j.ended(e.PodGroup, victim, e.Time)
	grace := j.pods[e.Pod].Grace
	if h := j.boundHolding(e.Pod); h != nil {
		h.began, h.gone = e.Time, e.Time+float64(grace) // it holds its node while it terminates
	}
	j.lastEvictedAny[e.PodGroup] = e.Time
	if e.Action == staleAction {
		bound := maps.Clone(active)
		bound[e.Pod] = true
		j.checkStale(e, victim, bound)
		j.terminating[e.Node] = append(j.terminating[e.Node], termination{began: e.Time, ends: e.Time + float64(grace)})
		return
	}
	preemptor, ok := j.jobs[e.Preemptor]
	if !ok || (e.Action != "preempt" && e.Action != "reclaim" && e.Action != consolidationAction) {
		j.fail(PropConsistent, e, "eviction with action %q for preemptor %q, not a reclaim, preempt or consolidation for a job of the scenario", e.Action, e.Preemptor)
		return
	}
	j.figures.Evictions++
	if e.Action == consolidationAction {
		j.figures.Moves++
	}
	if victim.Share != nil {
		j.figures.ShareEvictions++
	}
	if preemptor.Share != nil {
		j.figures.SharePreemptorEvictions++
	}
	if victim.MinSubGroup != nil {
		j.figures.SubGroupGangEvictions++
	}
	key := burstKey{e.PodGroup, e.Preemptor, e.Time}
	j.bursts[key] = append(j.bursts[key], e.Pod)
	j.checkRules(e, victim, preemptor)
	j.checkProtection(e, victim, preemptor, lastOfBurst)
	j.checkThrash(e)
	j.checkDelay(e, preemptor)
	j.lastEvicted[e.PodGroup] = e.Time
	// A move ends the run too, but escalation counts only the runs preempt and reclaim ended
	// (status.evictions counts nothing else): a job is not protected longer for being moved.
	if ends := j.endings[e.PodGroup]; e.Action != consolidationAction && len(active) == 0 && (len(ends) == 0 || ends[len(ends)-1] != e.Time) {
		// The run ended: counted once for the cycle, however many decisions of it took pods.
		j.endings[e.PodGroup] = append(ends, e.Time)
	}
	p := j.promises[e.Preemptor]
	if p == nil {
		p = &promise{}
		j.promises[e.Preemptor] = p
	}
	p.last, p.grace, p.victims = e.Time, max(p.grace, grace), p.victims+1
	j.terminating[e.Node] = append(j.terminating[e.Node], termination{began: e.Time, ends: e.Time + float64(grace)})
}

// onePod reports whether the job is one pod and needs it: its only unit as a victim is the
// whole job, and its run is that pod's.
func onePod(job *Job) bool {
	return len(job.Pods) == 1 && job.MinMember == 1 && job.MinSubGroup == nil && len(job.SubGroups) == 0
}

// ended notes the end of a one-pod job's run at t (its pod evicted or failed): the last
// checkpoint its workload reported in the run stays on its PodGroup.
func (j *judge) ended(key string, job *Job, t float64) {
	if job == nil || !onePod(job) {
		return
	}
	if c, ok := runCheckpoint(job, j.runStart[key], t); ok {
		j.reported[key] = c
	}
}

// runCheckpoint is the last checkpoint kai-sim's workload has taken by t in a run started at
// start: its startup, then every checkpoint interval of useful work (docs/simulator.md).
func runCheckpoint(job *Job, start, t float64) (float64, bool) {
	if job.Checkpoint <= 0 {
		return 0, false
	}
	interval, startup := job.Checkpoint.Seconds(), job.Startup.Seconds()
	k := math.Floor((t - start - startup) / interval)
	if k < 1 {
		return 0, false
	}
	return start + startup + k*interval, true
}

// savedAt is up to when a running one-pod job's work is saved at t, by the rule of
// docs/minruntime.md: the checkpoint on its PodGroup — the latest its workload reported, or
// else the scenario's claim when it can be read — clamped to [the run's start, t]; without
// one, the run's start.
func (j *judge) savedAt(key string, job *Job, t float64) float64 {
	start := j.runStart[key]
	checkpoint, ok := runCheckpoint(job, start, t)
	if !ok {
		checkpoint, ok = j.reported[key]
	}
	if !ok && job.CheckpointClaim != "" {
		if claim, err := time.Parse(time.RFC3339, job.CheckpointClaim); err == nil {
			checkpoint, ok = claim.Sub(sim.Start).Seconds(), true
		}
	}
	if !ok {
		return start
	}
	return max(min(checkpoint, t), start)
}

// checkLeastLostWork is L1 for the eviction e of victim for preemptor. It judges only pairs
// the victim search cannot tell apart but by the saved point: two jobs of one pod each, of
// one queue and priority, asking the same, on the same node (shares: on the same devices,
// which evicting either frees alike), the other bound before this cycle (allocate's binds
// of the cycle are not victims yet) and not evicted in it, and past any min-runtime that
// could protect it from this preemptor (with a second to spare). Any plugin or limit sees
// the two alike, and the search takes a node's units in rank order.
func (j *judge) checkLeastLostWork(e report.Event, victim, preemptor *Job) {
	if !onePod(victim) {
		return
	}
	savedVictim := j.savedAt(e.PodGroup, victim, e.Time)
	for _, other := range j.s.Jobs {
		key := "default/" + other.Name
		pod := other.Pods[0].Name
		switch {
		case key == e.PodGroup || !onePod(other) || other.Queue != victim.Queue || other.Priority != victim.Priority ||
			other.GPUs != victim.GPUs || other.FPGAs != victim.FPGAs || !sameShare(other.Share, victim.Share):
			continue
		case victim.Share != nil && !slices.Equal(j.podDevices[pod], j.podDevices[e.Pod]):
			continue // shares on other devices: what evicting either frees differs
		case !j.active[key][pod] || j.podNode[pod] != e.Node || j.boundAt[pod] >= e.Time || j.evictedAt[evictionAt{key, e.Time}]:
			continue
		}
		queues, source := j.s.MinRuntime(e.Action, preemptor.Queue, other.Queue)
		if minRuntime, _ := other.Shorten(e.Action, queues, source); minRuntime > 0 && e.Time < j.runStart[key]+minRuntime.Seconds()+1 {
			continue
		}
		j.figures.LostWorkPairs++
		savedOther := j.savedAt(key, other, e.Time)
		if savedOther < savedVictim || (savedOther == savedVictim && key > e.PodGroup) {
			if startOther := j.runStart[key]; startOther > j.runStart[e.PodGroup] || (startOther == j.runStart[e.PodGroup] && key < e.PodGroup) {
				j.figures.LostWorkByCheckpoint++ // by their starts alone, the other would have gone
			}
			continue
		}
		j.fail(PropLeastLostWork, e, "evicted by %s for %s with its work saved up to %s (run from %s), while %s, equal to it on %s, stays with its work saved up to %s (run from %s): %s loses less",
			e.Action, e.Preemptor, clock(savedVictim), clock(j.runStart[e.PodGroup]), key, e.Node, clock(savedOther), clock(j.runStart[key]), key)
	}
}

// staleAction is the action that evicts stale gangs, as the timeline names it.
const staleAction = "stalegangeviction"

// checkStale is S5. bound are the job's pods bound before this eviction; the first eviction
// of a burst must find the job or one of its sub-groups below its minimum, the rest of the
// burst takes what is left.
func (j *judge) checkStale(e report.Event, victim *Job, bound map[string]bool) {
	j.figures.StaleEvictions++
	key := burstKey{e.PodGroup, "", e.Time}
	first := len(j.bursts[key]) == 0
	j.bursts[key] = append(j.bursts[key], e.Pod)
	if e.Preemptor != "" {
		j.fail(PropStale, e, "stale eviction for preemptor %s: it evicts for no job", e.Preemptor)
	}
	if !first {
		return
	}
	inGroup := map[string]int{}
	for pod := range bound {
		inGroup[j.pods[pod].SubGroup]++
	}
	short := len(bound) < victim.MinMember
	for _, g := range victim.SubGroups {
		short = short || inGroup[g.Name] < g.MinMember
	}
	if !short {
		j.fail(PropStale, e, "stale eviction of a job with %d pods bound (%v by sub-group), below no minimum", len(bound), inGroup)
	}
}

// podFailed is a pod that failed on its own: it no longer holds its node nor counts toward
// its job's gang.
func (j *judge) podFailed(e report.Event) {
	active := j.active[e.PodGroup]
	if !active[e.Pod] {
		j.fail(PropConsistent, e, "pod failed while not bound")
		return
	}
	delete(active, e.Pod)
	j.failed[e.Pod] = true
	j.ended(e.PodGroup, j.jobs[e.PodGroup], e.Time)
	j.shortByFailure[e.PodGroup] = true
	if h := j.boundHolding(e.Pod); h != nil {
		h.began, h.gone = e.Time, e.Time
	}
}

func (j *judge) checkRules(e report.Event, victim, preemptor *Job) {
	if !victim.Preemptible() {
		j.fail(PropPreemptible, e, "%s job (priority %d) evicted by %s for %s", victim.PriorityClass, victim.Priority, e.Action, e.Preemptor)
	}
	switch {
	case e.Action == consolidationAction && e.PodGroup == e.Preemptor:
		j.fail(PropActionRules, e, "moved by consolidation to make room for itself")
	case e.Action == consolidationAction && !preemptor.Preemptible():
		j.fail(PropActionRules, e, "moved by consolidation for %s, a %s job (priority %d): only preemptible jobs are made room for by moves",
			e.Preemptor, preemptor.PriorityClass, preemptor.Priority)
	case e.Action == consolidationAction && victim.Priority > preemptor.Priority:
		j.fail(PropActionRules, e, "moved by consolidation for %s of priority %d, below the victim's %d", e.Preemptor, preemptor.Priority, victim.Priority)
	case e.Action == "preempt" && preemptor.Queue != victim.Queue:
		j.fail(PropActionRules, e, "preempt across queues: victim in %s, preemptor %s in %s", victim.Queue, e.Preemptor, preemptor.Queue)
	case e.Action == "preempt" && preemptor.Priority <= victim.Priority:
		j.fail(PropActionRules, e, "preempt by %s of priority %d, not above the victim's %d", e.Preemptor, preemptor.Priority, victim.Priority)
	case e.Action == "reclaim" && preemptor.Queue == victim.Queue:
		j.fail(PropActionRules, e, "reclaim within queue %s for %s", victim.Queue, e.Preemptor)
	}
}

// checkProtection is S1. A protected job may not be evicted at all, except that an elastic
// one may lose pods as long as, at the end of the burst, it keeps its gang and every
// sub-group that lost a pod keeps its own minimum.
func (j *judge) checkProtection(e report.Event, victim, preemptor *Job, lastOfBurst bool) {
	r := j.resolve(e.Action, preemptor, e.PodGroup)
	minRuntime, source := r.MinRuntime, r.Source
	start := j.runStart[e.PodGroup]
	until := start + minRuntime.Seconds()
	if e.Time >= until {
		if minRuntime > 0 && e.Action == consolidationAction {
			j.figures.MovesExpired++
			if r.As == "reclaim" {
				j.figures.MovesExpiredAsReclaim++
			}
		}
		if minRuntime > 0 {
			j.figures.ProtectionExpired++
			if victim.Share != nil {
				j.figures.ShareExpired++
			}
		}
		if e.Time < start+r.Escalated.Seconds() {
			j.figures.ShortenedExpired++
		}
		if r.Escalated > r.Queues {
			j.figures.EscalatedExpired++
			if r.Escalated == r.Escalation.Ceiling {
				j.figures.CappedExpired++
			}
			if r.Escalation.FactorFrom != "" || r.Escalation.CeilingFrom != "" {
				j.figures.QueueEscalatedExpired++
			}
		}
		return
	}
	why := fmt.Sprintf("evicted by %s for %s; its run started at %s and min-runtime %s (%s, %s) protects it until %s",
		e.Action, e.Preemptor, clock(start), minRuntime, e.Action, source, clock(until))
	if !victim.Elastic() {
		j.fail(PropSafety, e, "%s", why)
		return
	}
	j.figures.ElasticAllowed++
	if !lastOfBurst {
		return
	}
	active := j.active[e.PodGroup]
	if victim.MinSubGroup != nil {
		// Sub-groups are not each required: only how many stay ready counts.
		if ready := victim.ReadySubGroups(active, j.pods); ready < *victim.MinSubGroup {
			j.fail(PropSafety, e, "elastic job %s: left with %d ready sub-groups, below its minSubGroup %d", why, ready, *victim.MinSubGroup)
		}
		return
	}
	if len(active) < victim.MinMember {
		j.fail(PropSafety, e, "elastic job %s: left with %d active pods, below its minMember %d", why, len(active), victim.MinMember)
		return
	}
	for _, g := range victim.SubGroups {
		left := 0
		for pod := range active {
			if j.pods[pod].SubGroup == g.Name {
				left++
			}
		}
		if left < g.MinMember && j.burstTouched(e, g.Name) {
			j.fail(PropSafety, e, "elastic job %s: sub-group %s left with %d active pods, below its minMember %d", why, g.Name, left, g.MinMember)
		}
	}
}

// evictionsBefore is how many of the job's runs preempt or reclaim had ended before t, its
// PodGroup's prior count included: the count escalation multiplies a run starting at t by.
//
// This is exactly the count the scheduler knew whenever it judged the run, not one that
// might run ahead of it. The scheduler counts a decision that took every bound pod of the job
// (several such decisions in one cycle count once: the updater counts by the decision's time,
// the cycle's), and its status updater writes the count asynchronously; but kai-sim flushes
// the updater after every cycle, so each cycle sees the decisions of all earlier ones. A run
// starts in a later cycle than the one that ended the run before it (the job's next pods are
// created only once the evicted ones are gone, which is never in the cycle that evicted
// them), so the endings before its start are those of earlier cycles, and no ending of a
// cycle that judged the run is missed. On a real cluster a write that lags would make the
// scheduler count fewer and protect less, never more; kai-sim does not lag.
func (j *judge) evictionsBefore(job string, t float64) int {
	n := j.jobs[job].PriorEvictions()
	for _, end := range j.endings[job] {
		if end < t {
			n++
		}
	}
	return n
}

// resolve is the min-runtime protecting the running job victim (namespace/name) against
// action by preemptor, escalated by the evictions before its run started.
func (j *judge) resolve(action string, preemptor *Job, victim string) Resolution {
	return j.s.Resolve(action, preemptor.Queue, j.jobs[victim], j.evictionsBefore(victim, j.runStart[victim]))
}

// checkCeiling is E1 for e, the first eviction of its cycle. When nothing in the cluster
// changed in the period before it (no pod bound, evicted, started, failed or gone, no job
// completed or submitted), the cycle before, at e.Time minus a period, saw the same cluster
// and did not make this decision (kai-sim may skip that cycle, but only when it would decide
// nothing: TestSkippedCyclesDecideNothing), and only time changed. By design the scheduler's
// answers depend on time only through protections and preemption delays, so one of them
// ended in that period: a protection (preempt, reclaim or consolidation's longer of the two,
// as e's action) of a running job the preemptor may take, or the preemptor's own delay. The
// protections are the oracle's: escalated for each job's ended runs and never past the
// ceiling. A scheduler that held a victim past its ceiling, or escalated by a count other
// than the design's, evicts at a time no such end explains, once the cluster has been quiet.
// Its preemptor then starts within its victims' grace period and two cycles (P2), so an
// owner blocked by protection gets its quota no later than the protection's end plus those.
//
// What this cannot say: when the cluster changed meanwhile, the preemptor may have become
// entitled by that change rather than by a protection ending, and the oracle, which does not
// model fair share or node fit, cannot tell which; such evictions are not judged. before are
// the events before e.
func (j *judge) checkCeiling(e report.Event, before []report.Event) {
	preemptor := j.jobs[e.Preemptor]
	if preemptor == nil || (e.Action != "preempt" && e.Action != "reclaim" && e.Action != consolidationAction) {
		return // S0 reports it
	}
	period := j.s.Period.Seconds()
	from := e.Time - period
	changed := func(t float64) bool { return t > from && t <= e.Time }
	if len(before) > 0 && before[len(before)-1].Time >= from {
		return // the cycle before made decisions, or saw pods start, jobs complete or pods fail
	}
	for _, job := range j.s.Jobs {
		if changed(job.SubmitAt.Seconds()) {
			return
		}
	}
	for _, list := range j.terminating {
		for _, term := range list {
			if changed(term.ends) {
				return // a pod gone: its resources free, or its job's next pods created
			}
		}
	}
	j.figures.TimeDriven++
	if e.Action == consolidationAction {
		j.figures.TimeDrivenMoves++
	}
	if preemptor.PreemptionDelay > 0 {
		for _, last := range []float64{j.lastEvicted[e.Preemptor], j.lastEvictedAny[e.Preemptor]} {
			if changed(max(preemptor.SubmitAt.Seconds(), last) + preemptor.PreemptionDelay.Seconds()) {
				return
			}
		}
	}
	// Every end is looked at, so that the figures do not depend on which explains first.
	var ends []string
	explained, byVictim, byEscalated := false, false, false
	for _, key := range slices.Sorted(maps.Keys(j.active)) {
		victim := j.jobs[key]
		if key == e.Preemptor || len(j.active[key]) == 0 || !victim.Preemptible() {
			continue
		}
		if !mayTake(e.Action, preemptor, victim) {
			continue // not a victim this action could take for this preemptor (S3)
		}
		r := j.resolve(e.Action, preemptor, key)
		if r.MinRuntime <= 0 {
			continue
		}
		end := j.runStart[key] + r.MinRuntime.Seconds()
		if !changed(end) {
			ends = append(ends, fmt.Sprintf("%s at %s (run from %s, %s from %s)", key, clock(end), clock(j.runStart[key]), r.MinRuntime, r.Source))
			continue
		}
		explained, byVictim, byEscalated = true, byVictim || key == e.PodGroup, byEscalated || r.Escalated > r.Queues
	}
	if explained {
		if byVictim {
			j.figures.VictimEndedTimeDriven++
		}
		if byEscalated {
			j.figures.EscalatedTimeDriven++
		}
		return
	}
	if len(ends) == 0 {
		ends = []string{"none: no running job it could take is protected"}
	}
	last := "the start"
	if len(before) > 0 {
		last = clock(before[len(before)-1].Time)
	}
	j.fail(PropCeiling, e, "evicted by %s for %s when only time had changed since %s (a period is %s), but no protection of a job it could take nor its preemption delay ended in the period before; the protections' ends: %s",
		e.Action, e.Preemptor, last, j.s.Period, strings.Join(ends, "; "))
}

// mayTake reports whether action may evict a pod of the running preemptible job victim for
// preemptor, by S3's rules (preemptibility aside): preempt within the leaf queue and down in
// priority, reclaim across queues, consolidation from any queue at or below the preemptor's
// priority.
func mayTake(action string, preemptor, victim *Job) bool {
	sameQueue := victim.Queue == preemptor.Queue
	switch action {
	case "preempt":
		return sameQueue && victim.Priority < preemptor.Priority
	case "reclaim":
		return !sameQueue
	case consolidationAction:
		return victim.Priority <= preemptor.Priority
	}
	return false
}

// checkGangs is G1 for the jobs whose pods were bound or evicted at time t: a gang that has
// pods on nodes has at least minMember of them, or, counted in sub-groups, at least
// minSubGroup sub-groups each at its own minimum. (A gang binds at one time, and an eviction leaves it its minimum or takes it
// whole, so no moment may show less.)
func (j *judge) checkGangs(touched map[string]bool, t float64) {
	for _, key := range slices.Sorted(maps.Keys(touched)) {
		job := j.jobs[key]
		active := j.active[key]
		if len(active) == 0 {
			delete(j.shortByFailure, key) // off the nodes: its next run is judged afresh
		}
		if job == nil || len(active) == 0 || j.shortByFailure[key] {
			continue
		}
		if job.MinSubGroup == nil {
			if len(active) < job.MinMember {
				j.failures = append(j.failures, Failure{Property: PropGangKept, Job: key, Time: t,
					Detail: fmt.Sprintf("%d pods on nodes, below its minMember %d", len(active), job.MinMember)})
			}
			continue
		}
		j.figures.SubGroupGangMoments++
		if ready := job.ReadySubGroups(active, j.pods); ready < *job.MinSubGroup {
			j.failures = append(j.failures, Failure{Property: PropGangKept, Job: key, Time: t,
				Detail: fmt.Sprintf("%d pods on nodes in %d ready sub-groups, below its minSubGroup %d", len(active), ready, *job.MinSubGroup)})
		}
	}
}

// burstTouched reports whether the burst ending at e evicted a pod of the sub-group.
func (j *judge) burstTouched(e report.Event, subGroup string) bool {
	for _, p := range j.bursts[burstKey{e.PodGroup, e.Preemptor, e.Time}] {
		if j.pods[p].SubGroup == subGroup {
			return true
		}
	}
	return false
}

// checkDelay is S4: the preemptor's preemption delay, from the later of its submission (its
// PodGroup's creation) and its last eviction, has ended.
func (j *judge) checkDelay(e report.Event, preemptor *Job) {
	if preemptor.PreemptionDelay <= 0 {
		return
	}
	from, since := preemptor.SubmitAt.Seconds(), "its submission"
	if last, ok := j.lastEvicted[e.Preemptor]; ok && last > from {
		from, since = last, "its last eviction"
	}
	if until := from + preemptor.PreemptionDelay.Seconds(); e.Time < until {
		j.fail(PropDelay, e, "evicted by %s for %s, whose preemption delay of %s (%s) from %s at %s holds until %s",
			e.Action, e.Preemptor, preemptor.PreemptionDelay, preemptor.DelayAs, since, clock(from), clock(until))
		return
	}
	j.figures.DelayElapsed++
}

// checkThrash is P1: evictions of one job for one preemptor at one time are one eviction;
// another one later, before the preemptor started, means the first was for nothing.
func (j *judge) checkThrash(e report.Event) {
	key := [2]string{e.PodGroup, e.Preemptor}
	if before, ok := j.evictedFor[key]; ok && before != e.Time {
		j.fail(PropNoThrash, e, "evicted again by %s for %s, which has not started since the eviction for it at %s",
			e.Action, e.Preemptor, clock(before))
	}
	j.evictedFor[key] = e.Time
}

// served is a job starting or binding a pod: what it was evicted for arrived (P2), and
// evictions for it start counting afresh (P1).
func (j *judge) served(job string, t float64) {
	if p := j.promises[job]; p != nil {
		if deadline := j.deadline(p, j.bindNodes[bindKey{job, t}]); t > deadline {
			j.failures = append(j.failures, Failure{Property: PropPromise, Job: job, Time: t, Detail: fmt.Sprintf(
				"started only at %s; %d evictions were made for it, the last at %s, longest grace %ds, so it was due by %s",
				clock(t), p.victims, clock(p.last), p.grace, clock(deadline))})
		}
		delete(j.promises, job)
	}
	for key := range j.evictedFor {
		if key[1] == job {
			delete(j.evictedFor, key)
		}
	}
}

// deadline is when a preemptor must have started: its victims' longest grace after the last
// eviction for it, or the end of any pod that was already terminating, when that eviction
// came, on a node it binds to — whichever is later — plus promiseSlack periods.
func (j *judge) deadline(p *promise, nodes []string) float64 {
	waited := p.last + float64(p.grace)
	for _, node := range nodes {
		for _, term := range j.terminating[node] {
			if term.began <= p.last && term.ends > waited {
				waited = term.ends
			}
		}
	}
	return waited + promiseSlack*j.s.Period.Seconds()
}

func (j *judge) complete(e report.Event) {
	if j.completed[e.PodGroup] {
		j.fail(PropConsistent, e, "completed twice")
	}
	j.completed[e.PodGroup] = true
	clear(j.active[e.PodGroup]) // a finished job's pods leave without eviction events
	// Its terminating pods go with it: kai-sim deletes every pod of a finished job.
	for node, list := range j.holders {
		j.holders[node] = slices.DeleteFunc(list, func(h *holding) bool { return h.job == e.PodGroup })
	}
}

// checkPlacement is K1 for the bind e: the node's taints and the pod's node selector and
// required node affinity, then the sum of what the pods holding the node ask for, this one
// included, against its allocatable. Resources only get taken by binds, so checking at
// every bind checks every moment.
func (j *judge) checkPlacement(e report.Event) {
	pod, node := j.podObjects[e.Pod], j.nodes[e.Node]
	switch {
	case pod == nil:
		j.fail(PropPlacement, e, "bind of a pod the scenario does not have")
		return
	case node == nil:
		j.fail(PropPlacement, e, "bound to node %q, which the scenario does not have", e.Node)
		return
	}
	if why := refusal(pod, node); why != "" {
		j.fail(PropPlacement, e, "bound to %s: %s", e.Node, why)
	}
	holders := slices.DeleteFunc(j.holders[e.Node], func(h *holding) bool { return h.goneBy(e.Time) })
	h := &holding{pod: e.Pod, job: e.PodGroup, gone: math.Inf(1)}
	j.checkDevices(e, j.jobs[e.PodGroup], h, holders)
	holders = append(holders, h)
	j.holders[e.Node] = holders
	j.checkCapacity(e, node, holders)
	j.figures.Binds++
	if len(node.Spec.Taints) > 0 {
		j.figures.TaintedBinds++
	}
	if len(pod.Spec.NodeSelector) > 0 || pod.Spec.Affinity != nil {
		for _, other := range j.nodes {
			if refusal(pod, other) != "" {
				j.figures.AffinityBinds++
				break
			}
		}
	}
}

// checkCapacity compares what the holders of node ask for, resource by resource and in pods,
// with its allocatable.
func (j *judge) checkCapacity(e report.Event, node *v1.Node, holders []*holding) {
	used := v1.ResourceList{v1.ResourcePods: *resource.NewQuantity(int64(len(holders)), resource.DecimalSI)}
	for _, h := range holders {
		for name, q := range podRequests(j.podObjects[h.pod]) {
			sum := used[name]
			sum.Add(q)
			used[name] = sum
		}
	}
	full := false
	for _, name := range slices.Sorted(maps.Keys(used)) {
		q, have := used[name], node.Status.Allocatable[name]
		switch c := q.Cmp(have); {
		case c > 0 && name == v1.ResourcePods:
			j.fail(PropPlacement, e, "%s over-committed: held by %s pods (%s), it takes %s",
				e.Node, q.String(), describeHolders(holders), have.String())
		case c > 0:
			j.fail(PropPlacement, e, "%s over-committed: %s %s asked for by the pods holding it (%s), %s allocatable",
				e.Node, q.String(), name, describeHolders(holders), have.String())
		case c == 0 && (name == gpuResource || name == fpgaResource || name == v1.ResourcePods):
			full = true
		}
	}
	if full {
		j.figures.FullBinds++
	}
}

// describeHolders names the pods holding a node, with when the terminating ones leave.
func describeHolders(holders []*holding) string {
	var names []string
	for _, h := range holders {
		if math.IsInf(h.gone, 1) {
			names = append(names, h.pod)
		} else {
			names = append(names, fmt.Sprintf("%s terminating until %s", h.pod, clock(h.gone)))
		}
	}
	return strings.Join(names, ", ")
}

// finish checks what must have happened by the end: promises due before it (P2) and every
// job completed (P3).
func (j *judge) finish(r *report.Result) {
	end := r.Totals.SimulatedSeconds
	for _, job := range slices.Sorted(maps.Keys(j.promises)) {
		p := j.promises[job]
		if deadline := j.deadline(p, nil); deadline < end {
			j.failures = append(j.failures, Failure{Property: PropPromise, Job: job, Time: end, Detail: fmt.Sprintf(
				"never started; %d evictions were made for it, the last at %s, longest grace %ds, so it was due by %s",
				p.victims, clock(p.last), p.grace, clock(deadline))})
		}
	}
	evictions := map[string]int{}
	for _, e := range r.Events {
		if e.Type == report.EventEvict {
			evictions[e.PodGroup]++
		}
	}
	for _, job := range j.s.Jobs {
		key := "default/" + job.Name
		if !j.completed[key] {
			j.failures = append(j.failures, Failure{Property: PropLiveness, Job: key, Time: end, Detail: fmt.Sprintf(
				"did not settle: not completed when the run stopped (horizon %s, submitted at %s, %d pod evictions)",
				j.s.Horizon, clock(job.SubmitAt.Seconds()), evictions[key])})
		}
	}
}

// clock renders seconds as h:mm:ss with the raw seconds, matching kai-sim's text timeline.
func clock(seconds float64) string {
	s := int64(seconds)
	return fmt.Sprintf("%d:%02d:%02d (%gs)", s/3600, s/60%60, s%60, seconds)
}
