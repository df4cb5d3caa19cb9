package property

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// Scenario is one generated cluster, kept as a model so that the oracle judges the run
// against what was asked for rather than against what the simulator parsed.
type Scenario struct {
	Seed uint64
	// Nodes are node-0, node-1, ...
	Nodes []Node
	// Queues lists parents before their children.
	Queues []*Queue
	// Jobs in generation order (j00, j01, ...).
	Jobs []*Job
	// DefaultPreempt and DefaultReclaim are the minruntime plugin arguments; nil when absent.
	DefaultPreempt, DefaultReclaim *time.Duration
	// Method is the reclaimResolveMethod argument: "lca", "queue", or "" (absent, meaning lca).
	Method string
	Period time.Duration
	// Horizon is long enough for every job to finish even if they ran one after another,
	// each losing work several times; a run still busy there did not settle.
	Horizon time.Duration
	// Pool is the node pool every Node, Queue and PodGroup is labelled with (PoolLabel); ""
	// labels nothing.
	Pool string
	// EscalationFactor and EscalationCeiling are the minruntime plugin's escalation
	// arguments: a factor of 0 leaves both out (escalation off); a factor of 1 is written
	// alone (off, said explicitly); above 1 it comes with its ceiling. A queue's annotations
	// may set either for its subtree (Queue.EscalationFactor, EscalationCeiling).
	EscalationFactor  float64
	EscalationCeiling time.Duration
	// Consolidation lists the consolidation action after allocate, as upstream's default
	// order does; MaxConsolidationPreemptees is then kai-sim's --max-consolidation-preemptees
	// (sim.Options), nil for its default (consolidation.go).
	Consolidation              bool
	MaxConsolidationPreemptees *int
	// SpreadGPUs places pods on the nodes with the most GPUs free (nodeplacement's gpu:
	// spread) rather than the default, which packs them: spread leaves whole nodes to no gang,
	// which consolidation then makes room for.
	SpreadGPUs bool
	// JudgeOwed turns on Q3, which needs GPUs all alike: pods of one GPU, no placement rule
	// (the quota family, GenerateQuota).
	JudgeOwed bool
	// Topology is the scenario's Topology (topology.go); nil for none. Nodes carry its
	// levels' labels (Node.TopologyLabels) and jobs may ask for its domains (Job.Topology).
	Topology *Topology
}

// PoolLabel assigns objects to node pools, as KAI-Scheduler's --nodepool-label-key default.
const PoolLabel = "kai.scheduler/node-pool"

// InPool returns the scenario as node pool pool of a larger cluster: every object labelled
// with the pool and named with it as a prefix, so that pools of several seeds can share one
// cluster (names are cluster-wide) and each still be judged by itself.
func (s *Scenario) InPool(pool string) *Scenario {
	out := *s
	out.Pool = pool
	prefix := func(name string) string {
		if name == "" {
			return ""
		}
		return pool + "-" + name
	}
	if s.Topology != nil {
		renamed := *s.Topology
		renamed.Name = prefix(s.Topology.Name) // a Topology is cluster-wide: one per pool
		out.Topology = &renamed
	}
	out.Nodes = slices.Clone(s.Nodes)
	for i := range out.Nodes {
		out.Nodes[i].Name = prefix(out.Nodes[i].Name)
	}
	out.Queues = nil
	for _, q := range s.Queues {
		renamed := *q
		renamed.Name, renamed.Parent = prefix(q.Name), prefix(q.Parent)
		out.Queues = append(out.Queues, &renamed)
	}
	out.Jobs = nil
	for _, j := range s.Jobs {
		renamed := *j
		renamed.Name, renamed.Queue = prefix(j.Name), prefix(j.Queue)
		renamed.Pods = slices.Clone(j.Pods)
		if j.Topology != nil {
			c := *j.Topology
			c.Topology = prefix(c.Topology)
			renamed.Topology = &c
		}
		for i := range renamed.Pods {
			renamed.Pods[i].Name = prefix(renamed.Pods[i].Name)
		}
		out.Jobs = append(out.Jobs, &renamed)
	}
	return &out
}

// poolLabels is the metadata labels of the scenario's Queues and PodGroups, in flow style;
// "" without a pool.
func (s *Scenario) poolLabels() string {
	if s.Pool == "" {
		return ""
	}
	return flow(map[string]string{PoolLabel: s.Pool})
}

// Node is one node of the cluster. Without placement features it offers GPUs only (beside
// ample CPU and memory), and every pod may go there.
type Node struct {
	Name string
	GPUs int
	// FPGAs is its example.com/fpga allocatable; 0 offers none.
	FPGAs int
	// MaxPods is its pods allocatable; 0 is the kubelet's default (input.DefaultMaxPods).
	MaxPods int
	// Zone is its zone label; "" leaves it unlabelled.
	Zone string
	// Taints: none, or one dedicated=<value> with effect NoSchedule or NoExecute.
	Taints []v1.Taint
	// GPUMemory is its nvidia.com/gpu.memory label, the memory of each of its devices as
	// written (MiB, or bytes); "" leaves it unlabelled, and no memory share fits there.
	GPUMemory string
	// TopologyLabels are its labels of the scenario's Topology's levels (label: value);
	// a node lacking any level's label is outside the topology.
	TopologyLabels map[string]string
}

// Queue is a queue of the tree. Only leaves hold jobs.
type Queue struct {
	Name, Parent string
	// GPU quota (-1 unlimited), limit (-1 unlimited, never 0) and over-quota weight.
	Quota, Limit float64
	Weight       int
	Priority     *int
	// PreemptMinRuntime and ReclaimMinRuntime are nil when unset (inherit).
	PreemptMinRuntime, ReclaimMinRuntime *time.Duration
	Leaf                                 bool
	// EscalationFactor and EscalationCeiling are its escalation annotations, nil when unset:
	// the jobs of its subtree take each from the nearest queue that sets it (see
	// Scenario.EscalationOf).
	EscalationFactor  *float64
	EscalationCeiling *time.Duration
	// NoCPUMemoryQuota gives it quota 0 of CPU and memory, as the chart's default queues
	// have; other queues leave both at -1.
	NoCPUMemoryQuota bool
}

// Job is a PodGroup and its pods; every pod requests GPUs, whole or a share, (and FPGAs) per
// pod and says the same about where it may go.
type Job struct {
	Name, Queue, PriorityClass string
	Priority                   int
	MinMember                  int
	// MinSubGroup, when set, is the gang counted in sub-groups (MinMember is then 0): the job
	// needs that many of its sub-groups (its replicas) to have each its own minimum.
	MinSubGroup *int
	// GPUs per pod, whole; 0 when the pods ask for a share of a GPU instead (Share).
	GPUs int
	// Share, when set, is the part of a GPU device each pod asks for (shares.go).
	Share               *Share
	Pods                []Pod
	SubGroups           []SubGroup
	SubmitAt, Duration  time.Duration
	Startup, Checkpoint time.Duration // Checkpoint 0: never
	// FPGAs per pod (example.com/fpga); 0 asks for none.
	FPGAs int
	// Tolerations of every pod.
	Tolerations []v1.Toleration
	// Zones, when set, are the zones a pod must run in: required node affinity "zone In
	// Zones", or with ZoneBySelector (one zone) a nodeSelector.
	Zones          []string
	ZoneBySelector bool
	// PreemptionDelay, when above 0, is the job's preemption delay, given as DelayAs says:
	// delayField (spec.preemptionDelay), delayGroupAnnotation or delayPodAnnotation.
	PreemptionDelay time.Duration
	DelayAs         string
	// OwnPreempt and OwnReclaim are the job's own min-runtime annotations as written ("":
	// none), which may only shorten what its queues give it; some are at or above it, or
	// malformed or negative, and must then change nothing.
	OwnPreempt, OwnReclaim string
	// PriorPreempt and PriorReclaim are the runs its PodGroup's status.evictions says
	// preempt and reclaim ended before the simulation (written only when either is above 0):
	// a job resubmitted with its history, whose first run is already escalated.
	PriorPreempt, PriorReclaim int
	// CheckpointClaim is a kai.scheduler/last-checkpoint-timestamp the scenario writes on the
	// PodGroup ("": none): a time on the simulation's clock, before the job can start, while
	// it may run, or after the horizon, or a value a scheduler cannot read. A job with a
	// checkpoint interval replaces it with its own reports once it saves.
	CheckpointClaim string
	// Topology is its PodGroup's spec.topologyConstraint; nil for none.
	Topology *TopologyConstraint
}

// PriorEvictions is the count the job's PodGroup starts with.
func (j *Job) PriorEvictions() int { return j.PriorPreempt + j.PriorReclaim }

// The job's own min-runtime annotations, written out here rather than taken from the
// scheduler's code, so that the suite would notice them renamed.
const (
	ownPreemptAnnotation = "kai.scheduler/preempt-min-runtime"
	ownReclaimAnnotation = "kai.scheduler/reclaim-min-runtime"
)

// A queue's escalation annotations, written out here rather than taken from the scheduler's
// code, so that the suite would notice them renamed.
const (
	queueFactorAnnotation  = "kai.scheduler/escalation-factor"
	queueCeilingAnnotation = "kai.scheduler/escalation-ceiling"
)

// checkpointAnnotation is the annotation a workload reports its last checkpoint in, written
// out here rather than taken from the scheduler's code, so that the suite would notice it
// renamed.
const checkpointAnnotation = "kai.scheduler/last-checkpoint-timestamp"

// delayAnnotation is upstream's name, written out here rather than taken from the
// scheduler's code, so that the suite would notice it renamed.
const delayAnnotation = "kai.scheduler/preemption-delay"

// The three ways a scenario gives a job its preemption delay.
const (
	delayField           = "field"
	delayGroupAnnotation = "podgroup annotation"
	delayPodAnnotation   = "pod annotation"
)

// Pod is one pod of a job; SubGroup is "" outside sub-groups.
type Pod struct {
	Name, SubGroup string
	Grace          int
	// FailAfter, when set, makes the pod fail that long after it first runs (kai-sim's
	// sim.kai.scheduler/fail-after): its job is then short of its gang, for S4.
	FailAfter time.Duration
}

// SubGroup is a named part of a gang with its own minimum.
type SubGroup struct {
	Name      string
	MinMember int
}

// Elastic reports whether the job has more pods than its gang needs.
func (j *Job) Elastic() bool { return len(j.Pods) > j.GangPods() }

// GangPods is the fewest pods with which the job runs: MinMember, or under MinSubGroup the
// minimums of its smallest sub-groups, as many as it needs.
func (j *Job) GangPods() int {
	if j.MinSubGroup == nil {
		return j.MinMember
	}
	sizes := make([]int, 0, len(j.SubGroups))
	for _, g := range j.SubGroups {
		sizes = append(sizes, g.MinMember)
	}
	slices.Sort(sizes)
	total := 0
	for _, n := range sizes[:*j.MinSubGroup] {
		total += n
	}
	return total
}

// ReadySubGroups counts the sub-groups that have their own minimum among the given pods.
func (j *Job) ReadySubGroups(pods map[string]bool, podsByName map[string]Pod) int {
	ready := 0
	for _, g := range j.SubGroups {
		n := 0
		for name := range pods {
			if podsByName[name].SubGroup == g.Name {
				n++
			}
		}
		if n >= g.MinMember {
			ready++
		}
	}
	return ready
}

// Preemptible is the KAI rule: priority below 100.
func (j *Job) Preemptible() bool { return j.Priority < 100 }

var classPriority = map[string]int{"train": 50, "build-preemptible": 75, "build": 100, "inference": 125}

// queueNames are shuffled per seed so that queue-name order, which the scheduler must not
// depend on, varies between scenarios.
var queueNames = []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
	"india", "juliet", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo"}

// minRuntimeChoices are the non-zero protections drawn; short, so that scenarios stay small.
var minRuntimeChoices = []time.Duration{20 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute}

// placementShare is the share of scenarios, in fifths, given placement features: taints
// and tolerations, zones and node affinity, FPGAs, small pod counts.
const placementShare = 2

// Generate builds the scenario of a seed. The same seed always gives the same scenario.
func Generate(seed uint64) *Scenario {
	r := rand.New(rand.NewPCG(seed, seed))
	// Placement features draw from a stream of their own, so that every other draw stays as
	// it was before they existed: a seed without them generates the same scenario as then.
	var place *rand.Rand
	if p := rand.New(rand.NewPCG(seed, ^seed)); p.IntN(5) < placementShare {
		place = p
	}
	// Topologies too, in topologyShare of the scenarios: more nodes, labelled into domains
	// once placement has drawn its labels and taints, and constraints on jobs once every job
	// is drawn as it will run.
	var topology *rand.Rand
	if t := keyedStream(seed, topologyStream); t.IntN(4) < topologyShare {
		topology = t
	}
	s := &Scenario{Seed: seed}
	for i := range 1 + r.IntN(4) {
		s.Nodes = append(s.Nodes, Node{Name: fmt.Sprintf("node-%d", i), GPUs: 2 + r.IntN(7)})
	}
	if topology != nil {
		s.growForTopology(topology)
	}
	if place != nil {
		s.placeNodes(place)
	}
	if topology != nil {
		s.labelDomains(topology, true, 4)
	}
	s.generateQueues(r)
	s.DefaultPreempt, s.DefaultReclaim = optionalMinRuntime(r), optionalMinRuntime(r)
	s.Method = []string{"", "lca", "queue"}[r.IntN(3)]
	s.Period = []time.Duration{time.Second, 2 * time.Second, 5 * time.Second}[r.IntN(3)]
	for i := range 3 + r.IntN(8) {
		s.Jobs = append(s.Jobs, s.generateJob(r, place, i))
	}
	s.delayJobs(rand.New(rand.NewPCG(^seed, seed)))
	// Failures draw from a stream of their own too (not the delays' stream), so that adding
	// them changed nothing else: in one job out of five, one pod fails once, 10s to 2m after
	// it starts.
	fails := rand.New(rand.NewPCG(seed, ^seed))
	for _, j := range s.Jobs {
		if fails.IntN(5) == 0 {
			j.Pods[fails.IntN(len(j.Pods))].FailAfter = time.Duration(1+fails.IntN(12)) * 10 * time.Second
		}
	}
	// Gangs counted in sub-groups draw from a stream of their own, as placement does, so that
	// every other draw stays as it was before them.
	replicas := rand.New(rand.NewPCG(^seed, ^seed)) // not the delays' or the failures' stream
	for _, j := range s.Jobs {
		j.countSubGroups(replicas)
	}
	// Jobs' own min-runtimes draw from a stream of their own, so that every other draw, and
	// so every seed's scenario without them, stays as it was.
	s.shortenJobs(rand.New(rand.NewPCG(seed^ownStream, seed)))
	// Escalation, checkpoint claims and queues' escalation annotations too, each from a
	// keyed stream of its own.
	s.escalate(keyedStream(seed, escalationStream))
	s.claimCheckpoints(keyedStream(seed, claimStream))
	s.escalateQueues(keyedStream(seed, queueEscalationStream))
	s.overSubscribe(keyedStream(seed, overSubscribeStream))
	s.addDefaultQueues(keyedStream(seed, defaultQueueStream))
	// Shares last, once every job (default-queue notebooks too) and its queues' limits and
	// quotas are drawn: a share must keep each job able to run on its own.
	s.shareGPUs(keyedStream(seed, shareStream))
	// Consolidation after shares: the jobs it may add ask for whole GPUs.
	s.consolidate(keyedStream(seed, consolidationStream))
	// Topology constraints last: a required level must leave every job, as drawn, able to
	// run on its own.
	if topology != nil {
		s.constrainTopology(topology)
	}
	s.Horizon = s.horizon()
	return s
}

// streamKeys are the keys of keyedStream's streams; a feature that draws from a stream of
// its own adds its key here, and TestStreamKeysApart holds it to keyedStream's rule.
var streamKeys = []uint64{escalationStream, claimStream, queueEscalationStream, overSubscribeStream, defaultQueueStream, shareStream, consolidationStream, topologyStream}

// keyedStream is the stream of the feature keyed key for seed: the pair (seed^key, ^seed)
// meets none of Generate's other streams for any two seeds, (seed, seed), (seed, ^seed),
// (^seed, seed), (^seed, ^seed) and (seed^ownStream, seed), as long as key is none of 0,
// all ones and ^ownStream, nor another feature's key.
func keyedStream(seed, key uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed^key, ^seed))
}

// ownStream sets the stream of the jobs' own min-runtimes apart from every other stream; of
// the keys near "own" (0x6f776e), the first that draws none for a held seed, so that those
// still build the scenarios that found their defects.
const ownStream = 0x6f777a

// ownChoices are the values a job's own min-runtime annotation is drawn from: shorter than,
// equal to and longer than the queues' minRuntimeChoices, and two a scheduler must ignore.
var ownChoices = []string{"0s", "10s", "20s", "1m", "3m", "10m", "soon", "-1m"}

// ownShare is the share of scenarios, in quarters, whose jobs may carry their own
// min-runtimes; the others (and the held seeds among them) stay exactly as they were.
const ownShare = 1

// shortenJobs gives, in ownShare of the scenarios, about half of the jobs their own
// min-runtime annotations: preempt, reclaim or both.
func (s *Scenario) shortenJobs(o *rand.Rand) {
	if o.IntN(4) >= ownShare {
		return
	}
	for _, j := range s.Jobs {
		if o.IntN(2) != 0 {
			continue
		}
		switch o.IntN(3) {
		case 0:
			j.OwnPreempt = ownChoices[o.IntN(len(ownChoices))]
		case 1:
			j.OwnReclaim = ownChoices[o.IntN(len(ownChoices))]
		default:
			j.OwnPreempt, j.OwnReclaim = ownChoices[o.IntN(len(ownChoices))], ownChoices[o.IntN(len(ownChoices))]
		}
	}
}

// escalationStream sets the stream of escalation apart from every other stream; of the keys
// from "esc" (0x657363) up, the first that turns it on for no held seed, so that those still
// build the scenarios that found their defects.
const escalationStream = 0x6573c4

// escalationFactors are the factors drawn: 1 (off, though written) now and then, so that an
// explicit 1 is seen to change nothing.
var escalationFactors = []float64{1, 1.5, 2, 3}

// escalationCeilings are the ceilings drawn: below, between and above the minRuntimeChoices,
// so that a min-runtime at or above its ceiling (left as it is), one capped at it after an
// eviction or two, and one that grows several times all occur. They are short because the
// horizon makes room for the longest (see horizon).
var escalationCeilings = []time.Duration{30 * time.Second, 90 * time.Second, 3 * time.Minute, 6 * time.Minute, 10 * time.Minute}

// escalate turns escalation on in half of the scenarios, with a factor and a ceiling, and
// draws for half of their jobs a count of runs ended before the simulation (0 to 2 by preempt
// and by reclaim): so many first runs are escalated already, where the runs ended in the
// simulation alone escalate few (most jobs are evicted once or never).
func (s *Scenario) escalate(e *rand.Rand) {
	if e.IntN(2) != 0 {
		return
	}
	s.EscalationFactor = escalationFactors[e.IntN(len(escalationFactors))]
	if s.EscalationFactor > 1 {
		s.EscalationCeiling = escalationCeilings[e.IntN(len(escalationCeilings))]
	}
	s.drawPriorEvictions(e)
}

// drawPriorEvictions draws for about half of the jobs a count of runs ended before the
// simulation, 0 to 2 by preempt and by reclaim, from e: one home for the draw that the
// plugin's escalation and the queues' both make, in this order, so that either stream draws
// what it drew before.
func (s *Scenario) drawPriorEvictions(e *rand.Rand) {
	for _, j := range s.Jobs {
		if e.IntN(2) == 0 {
			j.PriorPreempt, j.PriorReclaim = e.IntN(3), e.IntN(3)
		}
	}
}

// queueEscalationStream sets the stream of queues' escalation annotations apart; of the keys
// from "qes" (0x716573) on, the first that draws none for a held seed, so that those still
// build the scenarios that found their defects.
const queueEscalationStream = 0x716573

// queueCeilings are the ceilings a queue's annotation draws: escalationCeilings, and 0s,
// which leaves a factor above 1 below it with no ceiling, so off.
var queueCeilings = append([]time.Duration{0}, escalationCeilings...)

// escalateQueues gives, in a third of the scenarios, about a third of the queues (leaves or
// not) an escalation factor, a ceiling or both in their annotations: a factor of 1 turns off
// what the plugin's arguments turn on, a factor whose path has no ceiling (none set, or 0s)
// is off, and a ceiling alone bounds the plugin's factor or a parent's. When the plugin's
// arguments drew no prior counts, half of the jobs draw theirs here as escalate does, so that
// escalation a queue turns on has escalated first runs to protect.
func (s *Scenario) escalateQueues(e *rand.Rand) {
	if e.IntN(3) != 0 {
		return
	}
	for _, q := range s.Queues {
		if e.IntN(3) != 0 {
			continue
		}
		factor := escalationFactors[e.IntN(len(escalationFactors))]
		ceiling := queueCeilings[e.IntN(len(queueCeilings))]
		switch e.IntN(3) {
		case 0:
			q.EscalationFactor = &factor
		case 1:
			q.EscalationCeiling = &ceiling
		default:
			q.EscalationFactor, q.EscalationCeiling = &factor, &ceiling
		}
	}
	if s.EscalationFactor == 0 {
		s.drawPriorEvictions(e)
	}
}

// overSubscribeStream sets the stream of over-subscribed quotas apart; of the keys from "ovs"
// (0x6f7673) on, the first that draws none for a held seed, so that those still build the
// scenarios that found their defects.
const overSubscribeStream = 0x6f767a

// overSubscribe raises, in a third of the scenarios, the GPU quotas of the children of one
// queue (or of the top level) until they add up to more than it has: its own quota, or the
// cluster's GPUs. Each is still owed in full, and what is held stays where it is (Q1, Q2).
// Quotas only grow, so a non-preemptible job generated within its quotas stays within them;
// a quota of -1 stays -1.
func (s *Scenario) overSubscribe(o *rand.Rand) {
	if o.IntN(3) != 0 {
		return
	}
	parents := []string{""}
	for _, q := range s.Queues {
		if !q.Leaf {
			parents = append(parents, q.Name)
		}
	}
	parent := parents[o.IntN(len(parents))]
	room := float64(s.totalGPUs())
	if p := s.Queue(parent); p != nil && p.Quota >= 0 {
		room = math.Min(room, p.Quota)
	}
	var children []*Queue
	sum := 0.0
	for _, q := range s.Queues {
		if q.Parent == parent && q.Quota >= 0 {
			q.Quota = math.Max(q.Quota, float64(1+o.IntN(int(room)+1)))
			children = append(children, q)
			sum += q.Quota
		}
	}
	if len(children) > 0 && sum <= room {
		children[0].Quota += room - sum + 1
	}
}

// The chart's queues for work without a queue label, under upstream's names.
const (
	defaultParentQueue = "default-parent-queue"
	defaultQueue       = "default-queue"
)

// defaultQueueStream sets the stream of default-queue traffic apart; of the keys from "dfq"
// (0x646671) on, the first that draws none for a held seed.
const defaultQueueStream = 0x646675

// addDefaultQueues gives, in a third of the scenarios, the cluster the chart's default queues
// — quota 0, limit -1, over-quota weight 1, as upstream's; in one of four of them quota -1
// for everything, as this chart had them — and one to three jobs in default-queue, one GPU a
// pod, submitted over the first ten minutes: the unlabelled notebooks and tests a cluster
// gets, which must never cancel another queue's quota. Like every generated job, each can
// run on its own.
func (s *Scenario) addDefaultQueues(o *rand.Rand) {
	if o.IntN(3) != 0 {
		return
	}
	quota, noCPUMemory := 0.0, true
	if o.IntN(4) == 0 {
		quota, noCPUMemory = -1, false
	}
	s.Queues = append(s.Queues,
		&Queue{Name: defaultParentQueue, Quota: quota, Limit: -1, Weight: 1, NoCPUMemoryQuota: noCPUMemory},
		&Queue{Name: defaultQueue, Parent: defaultParentQueue, Quota: quota, Limit: -1, Weight: 1, NoCPUMemoryQuota: noCPUMemory, Leaf: true})
	for range 1 + o.IntN(3) {
		j := &Job{Name: fmt.Sprintf("j%02d", len(s.Jobs)), Queue: defaultQueue, PriorityClass: "train", Priority: classPriority["train"],
			GPUs: 1, SubmitAt: time.Duration(o.IntN(61)) * 10 * time.Second, Duration: time.Duration(6+o.IntN(55)) * 10 * time.Second}
		// Unlabelled work tolerates the cluster's dedicated taints, as a notebook image's
		// default tolerations might, so that it can run on its own however nodes are tainted.
		j.Tolerations = []v1.Toleration{{Key: dedicatedKey, Operator: v1.TolerationOpExists}}
		j.MinMember = min(1+o.IntN(2), s.slots(j))
		for range j.MinMember {
			j.Pods = append(j.Pods, Pod{Name: fmt.Sprintf("%s-%d", j.Name, len(j.Pods)), Grace: o.IntN(31)})
		}
		s.Jobs = append(s.Jobs, j)
	}
}

// priorLast is the status.evictions.last of a prior count: an hour before the simulation
// starts, so that every eviction the run decides is later and counts.
var priorLast = sim.Start.Add(-time.Hour)

// claimStream sets the stream of checkpoint claims apart; of the keys from "ckp" (0x636b70)
// on, the first that draws none for a held seed, so that those still build the scenarios
// that found their defects.
const claimStream = 0x636b71

// claimShare is the share of scenarios, in quarters, whose jobs may claim checkpoints.
const claimShare = 2

// claimOffsets are when, from its submission, a job's claimed checkpoint is: before it can
// have started (a claim left from an earlier life), early in a run, and long after the
// horizon of any scenario (a clock ahead, or an edit).
var claimOffsets = []time.Duration{-time.Minute, 0, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 1000 * time.Hour}

// claimCheckpoints gives, in claimShare of the scenarios, about half of the jobs a
// checkpoint claim on their PodGroup, now and then one that cannot be read.
func (s *Scenario) claimCheckpoints(c *rand.Rand) {
	if c.IntN(4) >= claimShare {
		return
	}
	for _, j := range s.Jobs {
		if c.IntN(2) != 0 {
			continue
		}
		j.CheckpointClaim = drawClaim(c, j.SubmitAt)
	}
}

// drawClaim is a checkpoint claim for a job submitted at submitAt: a time of claimOffsets
// after it on the simulation's clock, or one time in ten a value that cannot be read.
func drawClaim(c *rand.Rand, submitAt time.Duration) string {
	if c.IntN(10) == 0 {
		return "yesterday"
	}
	return sim.Start.Add(submitAt + claimOffsets[c.IntN(len(claimOffsets))]).Format(time.RFC3339)
}

// delayJobs gives about a third of the jobs a preemption delay, in one of its three forms.
// It draws from a stream of its own, as placement does, so that every other draw stays as it
// was before delays existed.
func (s *Scenario) delayJobs(d *rand.Rand) {
	for _, j := range s.Jobs {
		if d.IntN(3) == 0 {
			j.PreemptionDelay = []time.Duration{10 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute}[d.IntN(4)]
			j.DelayAs = []string{delayField, delayGroupAnnotation, delayPodAnnotation}[d.IntN(3)]
		}
	}
}

// placeNodes labels every node with a zone and gives some a dedicated taint, FPGAs or room
// for only a few pods. Nothing here can leave a job without a node: each job's constraints
// are drawn afterwards from a node it may use (constrain).
func (s *Scenario) placeNodes(r *rand.Rand) {
	for i := range s.Nodes {
		n := &s.Nodes[i]
		n.Zone = placementZones[r.IntN(len(placementZones))]
		if r.IntN(3) == 0 {
			n.Taints = []v1.Taint{dedicatedTaint(r)}
		}
		if r.IntN(2) == 0 {
			n.FPGAs = 1 + r.IntN(2)
		}
		if r.IntN(4) == 0 {
			n.MaxPods = 1 + r.IntN(3)
		}
	}
}

// constrain draws where the job's pods may go, starting from one node, its anchor, that they
// must be able to use: they tolerate its taint, require a set of zones that holds its zone,
// and ask for an FPGA only if it has one. The anchor is thus never tainted for a job that
// tolerates nothing, and every job keeps a node its pods fit on.
func (s *Scenario) constrain(r *rand.Rand, j *Job) {
	anchor := s.Nodes[r.IntN(len(s.Nodes))]
	switch {
	case len(anchor.Taints) > 0:
		j.Tolerations = []v1.Toleration{tolerationOf(r, anchor.Taints[0])}
	case r.IntN(4) == 0:
		j.Tolerations = []v1.Toleration{tolerationOf(r, dedicatedTaint(r))} // may open other nodes
	}
	if anchor.FPGAs > 0 && r.IntN(3) == 0 {
		j.FPGAs = 1
	}
	if r.IntN(2) == 0 {
		j.Zones = []string{anchor.Zone}
		if other := placementZones[r.IntN(len(placementZones))]; other != anchor.Zone && r.IntN(2) == 0 {
			j.Zones = append(j.Zones, other)
		}
		j.ZoneBySelector = len(j.Zones) == 1 && r.IntN(2) == 0
	}
}

// optionalMinRuntime is unset, "0s" or a protection, so inheritance, its explicit stop and
// real protection all occur at every level.
func optionalMinRuntime(r *rand.Rand) *time.Duration {
	var d time.Duration
	switch n := r.IntN(20); {
	case n < 9:
		return nil
	case n < 12:
		d = 0
	default:
		d = minRuntimeChoices[r.IntN(len(minRuntimeChoices))]
	}
	return &d
}

// generateQueues builds a tree of 2 to 4 levels with at least two leaves.
func (s *Scenario) generateQueues(r *rand.Rand) {
	names := append([]string(nil), queueNames...)
	r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	total := s.totalGPUs()
	levels := 2 + r.IntN(3)
	var add func(parent string, depth int, deep bool)
	add = func(parent string, depth int, deep bool) {
		name := fmt.Sprintf("q%02d", len(s.Queues))
		if len(s.Queues) < len(names) {
			name = names[len(s.Queues)]
		}
		q := &Queue{Name: name, Parent: parent, Weight: r.IntN(4)}
		switch n := r.IntN(10); {
		case n == 0:
			q.Quota = -1
		case n < 4:
			q.Quota = 0
		default:
			q.Quota = float64(1 + r.IntN(total))
		}
		q.Limit = -1
		if r.IntN(10) < 3 {
			q.Limit = float64(1 + r.IntN(total))
		}
		if r.IntN(4) == 0 {
			p := []int{50, 100, 150}[r.IntN(3)]
			q.Priority = &p
		}
		q.PreemptMinRuntime, q.ReclaimMinRuntime = optionalMinRuntime(r), optionalMinRuntime(r)
		s.Queues = append(s.Queues, q)
		internal := depth < levels && (deep || (r.IntN(2) == 0 && len(s.Queues) < 10))
		if !internal {
			q.Leaf = true
			return
		}
		for i := range 1 + r.IntN(2) {
			add(q.Name, depth+1, deep && i == 0)
		}
	}
	for i := range 1 + r.IntN(3) {
		add("", 1, i == 0) // the first top-level queue reaches the full depth
	}
	if len(s.Leaves()) < 2 {
		// A second top-level leaf, so that reclaim between queues can happen.
		add("", levels, false)
	}
}

// generateJob makes a job that can run on its own: its gang fits on the empty cluster, on
// the nodes its pods may use, and under every limit of its queue chain, and a
// non-preemptible gang within every quota. place draws its placement constraints; nil
// leaves it free to go anywhere.
func (s *Scenario) generateJob(r, place *rand.Rand, index int) *Job {
	leaves := s.Leaves()
	j := &Job{Name: fmt.Sprintf("j%02d", index), Queue: leaves[r.IntN(len(leaves))].Name}
	if place != nil {
		s.constrain(place, j)
	}
	limit, quota := s.chainBounds(j.Queue)
	j.GPUs = 1 + r.IntN(s.maxNodeGPUs())
	limitGPUs := 1 << 20 // unlimited
	if !math.IsInf(limit, 1) {
		limitGPUs = int(limit)
	}
	// Fewer GPUs per pod until a pod fits: at one GPU every node the job may use holds one, and
	// there is always one (any node, or the anchor of constrain).
	gangCap := func() int { return min(s.slots(j), limitGPUs/j.GPUs, 4) }
	for gangCap() < 1 {
		j.GPUs--
	}
	gang := 1 + r.IntN(gangCap())
	if float64(gang*j.GPUs) <= quota && r.IntN(3) == 0 {
		j.PriorityClass = []string{"build", "inference"}[r.IntN(2)]
	} else {
		j.PriorityClass = []string{"train", "build-preemptible"}[r.IntN(2)]
	}
	j.Priority = classPriority[j.PriorityClass]
	j.MinMember = gang
	var groups []SubGroup
	var counts []int
	switch {
	case gang >= 2 && r.IntN(4) == 0:
		lead := 1 + r.IntN(gang-1)
		groups = []SubGroup{{Name: "lead", MinMember: lead}, {Name: "work", MinMember: gang - lead}}
		counts = []int{lead + r.IntN(2), gang - lead + r.IntN(2)}
	case r.IntN(10) < 3:
		counts = []int{gang + 1 + r.IntN(2)} // elastic
	default:
		counts = []int{gang}
	}
	j.SubGroups = groups
	for g, n := range counts {
		for range n {
			pod := Pod{Name: fmt.Sprintf("%s-%d", j.Name, len(j.Pods)), Grace: r.IntN(31)}
			if groups != nil {
				pod.SubGroup = groups[g].Name
			}
			j.Pods = append(j.Pods, pod)
		}
	}
	if index > 0 {
		j.SubmitAt = time.Duration(r.IntN(61)) * 10 * time.Second
	}
	j.Duration = time.Duration(6+r.IntN(55)) * 10 * time.Second
	if r.IntN(2) == 0 {
		j.Startup = time.Duration(1+r.IntN(6)) * 10 * time.Second
	}
	if r.IntN(5) < 2 {
		j.Checkpoint = time.Duration(3+r.IntN(16)) * 10 * time.Second
	}
	return j
}

// countSubGroups makes about one gang in four of those with more than one pod and no
// sub-groups a gang counted in sub-groups (upstream's minSubGroup): k replicas of size pods
// needed (k*size within the gang drawn, so it still fits on its own), one or two replicas
// more that may run or not, and now and then minSubGroup 0, which asks for no gang at all.
func (j *Job) countSubGroups(r *rand.Rand) {
	gang := j.MinMember
	if gang < 2 || len(j.SubGroups) > 0 || r.IntN(4) != 0 {
		return
	}
	need := 1 + r.IntN(2)
	if r.IntN(8) == 0 {
		need = 0
	}
	size := gang / max(need, 1)
	if need == 0 {
		size = 1 + r.IntN(gang)
	}
	count := max(need, 1) + 1 + r.IntN(2)
	j.MinMember, j.MinSubGroup, j.SubGroups = 0, &need, nil
	template := j.Pods[0]
	j.Pods = nil
	for g := range count {
		name := fmt.Sprintf("r%d", g)
		j.SubGroups = append(j.SubGroups, SubGroup{Name: name, MinMember: size})
		for range size {
			pod := template
			pod.Name, pod.SubGroup, pod.Grace = fmt.Sprintf("%s-%d", j.Name, len(j.Pods)), name, r.IntN(31)
			j.Pods = append(j.Pods, pod)
		}
	}
}

// chainBounds is the smallest GPU limit and quota on the way from a leaf to the top
// (+Inf when unlimited everywhere).
func (s *Scenario) chainBounds(leaf string) (limit, quota float64) {
	limit, quota = math.Inf(1), math.Inf(1)
	for _, q := range s.Ancestry(leaf) {
		if q.Limit >= 0 {
			limit = math.Min(limit, q.Limit)
		}
		if q.Quota >= 0 {
			quota = math.Min(quota, q.Quota)
		}
	}
	return limit, quota
}

// slots is how many pods of the job the empty cluster holds: on each node its pods may use,
// as many as the node's resources, pod count and devices (for a share, shareSlots) take.
func (s *Scenario) slots(j *Job) int {
	return s.slotsOn(j, nil)
}

// slotsOn is slots on the nodes at the positions given (nil: every node).
func (s *Scenario) slotsOn(j *Job, nodes []int) int {
	if nodes == nil {
		nodes = make([]int, len(s.Nodes))
		for i := range nodes {
			nodes[i] = i
		}
	}
	pod := j.PodObject(Pod{})
	n := 0
	for _, i := range nodes {
		if node := s.Nodes[i].Object(); refusal(pod, node) == "" {
			fit := podsFit(node, pod)
			if j.Share != nil {
				fit = min(fit, s.Nodes[i].shareSlots(j.Share))
			}
			n += fit
		}
	}
	return n
}

func (s *Scenario) totalGPUs() int {
	n := 0
	for _, node := range s.Nodes {
		n += node.GPUs
	}
	return n
}

func (s *Scenario) maxNodeGPUs() int {
	m := 0
	for _, node := range s.Nodes {
		m = max(m, node.GPUs)
	}
	return m
}

// horizon: the last submission, four times all the work done one job after another, and the
// longest protection, rounded up to a minute and capped so that a looping run stays cheap.
// With escalation the longest protection is the ceiling, when above every min-runtime: an
// escalated one never passes it, and one already above it stays as it is. Any queue's
// ceiling counts, whether or not a factor reaches it: the bound needs no resolving.
func (s *Scenario) horizon() time.Duration {
	var last, work time.Duration
	for _, j := range s.Jobs {
		last = max(last, j.SubmitAt)
		work += j.Duration + j.Startup + j.PreemptionDelay // a delay re-arms, but each wait is short
	}
	longest := s.maxMinRuntime()
	if s.EscalationFactor > 1 {
		longest = max(longest, s.EscalationCeiling)
	}
	for _, q := range s.Queues {
		if q.EscalationCeiling != nil {
			longest = max(longest, *q.EscalationCeiling)
		}
	}
	h := (last + 4*work + longest).Round(time.Minute) + time.Minute
	return min(h, 3*time.Hour)
}

func (s *Scenario) maxMinRuntime() time.Duration {
	var m time.Duration
	for _, d := range []*time.Duration{s.DefaultPreempt, s.DefaultReclaim} {
		if d != nil {
			m = max(m, *d)
		}
	}
	for _, q := range s.Queues {
		for _, d := range []*time.Duration{q.PreemptMinRuntime, q.ReclaimMinRuntime} {
			if d != nil {
				m = max(m, *d)
			}
		}
	}
	return m
}

// Leaves are the queues that hold jobs, in tree order.
func (s *Scenario) Leaves() []*Queue {
	var leaves []*Queue
	for _, q := range s.Queues {
		if q.Leaf {
			leaves = append(leaves, q)
		}
	}
	return leaves
}

// Queue finds a queue by name.
func (s *Scenario) Queue(name string) *Queue {
	for _, q := range s.Queues {
		if q.Name == name {
			return q
		}
	}
	return nil
}

// Ancestry is the path from the top-level queue down to the named queue.
func (s *Scenario) Ancestry(name string) []*Queue {
	var path []*Queue
	for q := s.Queue(name); q != nil; q = s.Queue(q.Parent) {
		path = append([]*Queue{q}, path...)
	}
	return path
}

// ScenarioYAML renders the scenario as the manifests kai-sim reads. Nodes and pods are
// written from their Kubernetes objects (Object, PodObject), the Kubernetes parts in JSON
// flow style, so the manifests say exactly what the oracle judges against.
func (s *Scenario) ScenarioYAML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Generated by test/property from seed %d.\n", s.Seed)
	b.WriteString(s.topologyYAML())
	for i := range s.Nodes {
		node := s.Nodes[i].Object()
		if s.Pool != "" {
			metav1.SetMetaDataLabel(&node.ObjectMeta, PoolLabel, s.Pool)
		}
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Node\nmetadata: {name: %s", node.Name)
		if len(node.Labels) > 0 {
			fmt.Fprintf(&b, ", labels: %s", flow(node.Labels))
		}
		b.WriteString("}\n")
		if len(node.Spec.Taints) > 0 {
			fmt.Fprintf(&b, "spec:\n  taints: %s\n", flow(node.Spec.Taints))
		}
		fmt.Fprintf(&b, "status:\n  allocatable: %s\n", flow(node.Status.Allocatable))
	}
	for _, q := range s.Queues {
		fmt.Fprintf(&b, "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: %s", q.Name)
		if labels := s.poolLabels(); labels != "" {
			fmt.Fprintf(&b, ", labels: %s", labels)
		}
		if annotations := q.annotations(); len(annotations) > 0 {
			fmt.Fprintf(&b, ", annotations: %s", flow(annotations))
		}
		b.WriteString("}\nspec:\n")
		if q.Parent != "" {
			fmt.Fprintf(&b, "  parentQueue: %s\n", q.Parent)
		}
		if q.Priority != nil {
			fmt.Fprintf(&b, "  priority: %d\n", *q.Priority)
		}
		if q.PreemptMinRuntime != nil {
			fmt.Fprintf(&b, "  preemptMinRuntime: %q\n", q.PreemptMinRuntime.String())
		}
		if q.ReclaimMinRuntime != nil {
			fmt.Fprintf(&b, "  reclaimMinRuntime: %q\n", q.ReclaimMinRuntime.String())
		}
		fmt.Fprintf(&b, "  resources:\n    gpu: {quota: %g, overQuotaWeight: %d, limit: %g}\n", q.Quota, q.Weight, q.Limit)
		other := -1
		if q.NoCPUMemoryQuota {
			other = 0
		}
		fmt.Fprintf(&b, "    cpu: {quota: %d, overQuotaWeight: 1, limit: -1}\n    memory: {quota: %d, overQuotaWeight: 1, limit: -1}\n", other, other)
	}
	for _, j := range s.Jobs {
		fmt.Fprintf(&b, "---\napiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata:\n  name: %s\n", j.Name)
		if labels := s.poolLabels(); labels != "" {
			fmt.Fprintf(&b, "  labels: %s\n", labels)
		}
		b.WriteString("  annotations:\n")
		fmt.Fprintf(&b, "    %s: %q\n    %s: %q\n    %s: %q\n", input.SubmitAtAnnotation, j.SubmitAt.String(),
			input.DurationAnnotation, j.Duration.String(), input.StartupAnnotation, j.Startup.String())
		if j.Checkpoint > 0 {
			fmt.Fprintf(&b, "    %s: %q\n", input.CheckpointIntervalAnnotation, j.Checkpoint.String())
		}
		if j.DelayAs == delayGroupAnnotation {
			fmt.Fprintf(&b, "    %s: %q\n", delayAnnotation, j.PreemptionDelay.String())
		}
		if j.OwnPreempt != "" {
			fmt.Fprintf(&b, "    %s: %q\n", ownPreemptAnnotation, j.OwnPreempt)
		}
		if j.OwnReclaim != "" {
			fmt.Fprintf(&b, "    %s: %q\n", ownReclaimAnnotation, j.OwnReclaim)
		}
		if j.CheckpointClaim != "" {
			fmt.Fprintf(&b, "    %s: %q\n", checkpointAnnotation, j.CheckpointClaim)
		}
		if j.MinSubGroup != nil {
			fmt.Fprintf(&b, "spec:\n  minSubGroup: %d\n", *j.MinSubGroup)
		} else {
			fmt.Fprintf(&b, "spec:\n  minMember: %d\n", j.MinMember)
		}
		fmt.Fprintf(&b, "  queue: %s\n  priorityClassName: %s\n", j.Queue, j.PriorityClass)
		if j.Topology != nil {
			fmt.Fprintf(&b, "  topologyConstraint: %s\n", flow(j.Topology))
		}
		if j.DelayAs == delayField {
			fmt.Fprintf(&b, "  preemptionDelay: %q\n", j.PreemptionDelay.String())
		}
		if len(j.SubGroups) > 0 {
			b.WriteString("  subGroups:\n")
			for _, g := range j.SubGroups {
				fmt.Fprintf(&b, "  - {name: %s, minMember: %d}\n", g.Name, g.MinMember)
			}
		}
		if j.PriorEvictions() > 0 {
			fmt.Fprintf(&b, "status:\n  evictions: {total: %d, preempt: %d, reclaim: %d, last: %q}\n",
				j.PriorEvictions(), j.PriorPreempt, j.PriorReclaim, priorLast.Format(metav1.RFC3339Micro))
		}
		for _, p := range j.Pods {
			pod := j.PodObject(p)
			fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  annotations: %s\n", pod.Name, flow(pod.Annotations))
			if len(pod.Labels) > 0 {
				fmt.Fprintf(&b, "  labels: %s\n", flow(pod.Labels))
			}
			spec := pod.Spec
			fmt.Fprintf(&b, "spec:\n  terminationGracePeriodSeconds: %d\n", *spec.TerminationGracePeriodSeconds)
			if len(spec.NodeSelector) > 0 {
				fmt.Fprintf(&b, "  nodeSelector: %s\n", flow(spec.NodeSelector))
			}
			if spec.Affinity != nil {
				fmt.Fprintf(&b, "  affinity: %s\n", flow(spec.Affinity))
			}
			if len(spec.Tolerations) > 0 {
				fmt.Fprintf(&b, "  tolerations: %s\n", flow(spec.Tolerations))
			}
			fmt.Fprintf(&b, "  containers: %s\n", flow(spec.Containers))
		}
	}
	return b.String()
}

// annotations are the queue's escalation annotations as written on its Queue.
func (q *Queue) annotations() map[string]string {
	a := map[string]string{}
	if q.EscalationFactor != nil {
		a[queueFactorAnnotation] = strconv.FormatFloat(*q.EscalationFactor, 'f', -1, 64)
	}
	if q.EscalationCeiling != nil {
		a[queueCeilingAnnotation] = q.EscalationCeiling.String()
	}
	return a
}

// flow writes a value as JSON, which YAML reads as flow style.
func flow(v any) string {
	text, err := json.Marshal(v)
	if err != nil {
		panic(err) // the values are built here from plain Kubernetes types
	}
	return string(text)
}

// ConfigYAML renders the scheduler configuration: the default plugin list with the
// minruntime arguments of this scenario.
func (s *Scenario) ConfigYAML() string {
	var args []string
	if s.DefaultPreempt != nil {
		args = append(args, fmt.Sprintf("defaultPreemptMinRuntime: %q", s.DefaultPreempt.String()))
	}
	if s.DefaultReclaim != nil {
		args = append(args, fmt.Sprintf("defaultReclaimMinRuntime: %q", s.DefaultReclaim.String()))
	}
	if s.Method != "" {
		args = append(args, fmt.Sprintf("reclaimResolveMethod: %q", s.Method))
	}
	if s.EscalationFactor > 0 {
		args = append(args, fmt.Sprintf("escalationFactor: %q", strconv.FormatFloat(s.EscalationFactor, 'f', -1, 64)))
	}
	if s.EscalationCeiling > 0 {
		args = append(args, fmt.Sprintf("escalationCeiling: %q", s.EscalationCeiling.String()))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Generated by test/property from seed %d.\n", s.Seed)
	// stalegangeviction runs with a grace period of one second, so that S4 judges every
	// eviction it makes as soon as a job is short (a pod failed, or a gang was evicted while
	// a surplus pod bound in the same cycle stays).
	actions := "allocate, reclaim, preempt, stalegangeviction"
	if s.Consolidation {
		actions = "allocate, consolidation, reclaim, preempt, stalegangeviction" // upstream's default order
	}
	fmt.Fprintf(&b, "actions: %q\nglobalDefaultStalenessGracePeriod: 1s\n", actions)
	b.WriteString("tiers:\n- plugins:\n  - name: priority\n  - name: proportion\n  - name: minruntime\n")
	if len(args) > 0 {
		b.WriteString("    arguments:\n")
		for _, a := range args {
			b.WriteString("      " + a + "\n")
		}
	}
	b.WriteString("  - name: predicates\n  - name: nodeplacement\n")
	if s.SpreadGPUs {
		b.WriteString("    arguments:\n      gpu: spread\n")
	}
	return b.String()
}

// Simulate parses the rendered text, as kai-sim would, and runs it up to the horizon.
func (s *Scenario) Simulate(ctx context.Context) (*report.Result, error) {
	sc, err := input.Parse([]byte(s.ScenarioYAML()))
	if err != nil {
		return nil, fmt.Errorf("seed %d: generated scenario does not parse: %w", s.Seed, err)
	}
	opts := s.Options()
	opts.VerifySnapshots = true
	return sim.Run(ctx, sc, opts)
}

// Options are the simulator's options the scenario runs with: its configuration, horizon,
// period and --max-consolidation-preemptees.
func (s *Scenario) Options() sim.Options {
	return sim.Options{Config: []byte(s.ConfigYAML()), Until: s.Horizon, Period: s.Period, MaxConsolidationPreemptees: s.MaxConsolidationPreemptees}
}
