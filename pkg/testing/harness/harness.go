package harness

import (
	"context"
	"fmt"
	"strings"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/conf"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/metrics"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// DefaultConfigWith is the built-in configuration (its plugins) running other actions, a
// comma-separated list such as upstream's "allocate, consolidation, reclaim, preempt".
func DefaultConfigWith(actions string) string {
	const line = `actions: "allocate, reclaim, preempt"`
	config := string(conf.DefaultYAML())
	if !strings.Contains(config, line) {
		panic("the built-in configuration's actions are not " + line)
	}
	return strings.Replace(config, line, fmt.Sprintf("actions: %q", actions), 1)
}

// DefaultPeriod is the virtual time between two rounds.
const DefaultPeriod = time.Second

// Harness holds a small cluster and runs scheduling cycles on it.
type Harness struct {
	// Clock is the virtual clock every cycle reads; rounds advance it by Period.
	Clock  *clocktesting.FakeClock
	Period time.Duration
	// Metrics holds what the cycles' plugins measured (the protected-jobs gauge).
	Metrics *metrics.Recording

	policy     *scheduler.Policy
	nodes      []*model.NodeInfo
	queues     []*model.QueueInfo
	jobs       []*model.JobInfo
	topologies []*model.Topology
}

// New returns a harness running the given scheduler configuration (YAML), or the built-in
// default when config is empty. An invalid configuration panics: it is a broken test.
func New(config string) *Harness {
	var data []byte
	if config != "" {
		data = []byte(config)
	}
	policy, _, err := scheduler.LoadPolicy(data)
	if err != nil {
		panic(fmt.Sprintf("scenario configuration: %v", err))
	}
	return &Harness{Clock: clocktesting.NewFakeClock(Epoch), Period: DefaultPeriod, Metrics: &metrics.Recording{}, policy: policy}
}

// MaxConsolidationPreemptees sets how many jobs the consolidation action, if configured, may
// move in a cycle (kai-scheduler's --max-consolidation-preemptees).
func (h *Harness) MaxConsolidationPreemptees(n int) *Harness {
	h.policy.SetMaxConsolidationPreemptees(n)
	return h
}

// Plugins appends extra plugins (fakes in tests) after the configured ones.
func (h *Harness) Plugins(plugins ...framework.Plugin) *Harness {
	h.policy.Plugins = append(h.policy.Plugins, plugins...)
	return h
}

// Nodes adds nodes.
func (h *Harness) Nodes(nodes ...*NodeBuilder) *Harness {
	for _, b := range nodes {
		n := b.node
		h.nodes = append(h.nodes, &n)
	}
	return h
}

// Queues adds queues.
func (h *Harness) Queues(queues ...*QueueBuilder) *Harness {
	for _, b := range queues {
		q := b.queue
		h.queues = append(h.queues, &q)
	}
	return h
}

// Topology adds a Topology named name whose levels are the node labels given, widest
// first; a label may carry an alias after "=" ("example.com/rack=rack").
func (h *Harness) Topology(name string, levels ...string) *Harness {
	t := &model.Topology{Name: name}
	for _, l := range levels {
		label, alias, _ := strings.Cut(l, "=")
		t.Levels = append(t.Levels, model.TopologyLevel{NodeLabel: label, Alias: alias})
	}
	h.topologies = append(h.topologies, t)
	return h
}

// Jobs adds jobs.
func (h *Harness) Jobs(jobs ...*JobBuilder) *Harness {
	for _, b := range jobs {
		h.jobs = append(h.jobs, b.build())
	}
	return h
}

// Snapshot builds a fresh snapshot of the cluster as it stands, as the cache would.
func (h *Harness) Snapshot() *model.Snapshot {
	nodes := make([]*model.NodeInfo, len(h.nodes))
	for i, n := range h.nodes {
		c := *n
		c.Used, c.Releasing, c.Pipelined, c.Pods, c.GPUGroups = model.Resources{}, model.Resources{}, model.Resources{}, nil, nil
		nodes[i] = &c
	}
	queues := make([]*model.QueueInfo, len(h.queues))
	for i, q := range h.queues {
		c := *q
		queues[i] = &c
	}
	jobs := make([]*model.JobInfo, len(h.jobs))
	for i, j := range h.jobs {
		c := *j
		c.Pods = make([]*model.PodInfo, len(j.Pods))
		for k, p := range j.Pods {
			pc := *p
			c.Pods[k] = &pc
		}
		jobs[i] = &c
	}
	snapshot, err := model.NewSnapshot(nodes, jobs, queues)
	if err != nil {
		panic(fmt.Sprintf("scenario snapshot: %v", err))
	}
	snapshot.SetTopologies(h.topologies)
	return snapshot
}

// RunCycle runs one scheduling cycle at the current virtual time and applies its effects to
// the cluster: bound pods run, evicted pods start releasing.
func (h *Harness) RunCycle(ctx context.Context) Round {
	round := Round{Time: h.Clock.Now()}
	recorder := &recorder{round: &round}
	cycle := scheduler.Cycle{Clock: h.Clock, Policy: h.policy, Effects: recorder, Metrics: h.Metrics}
	result := cycle.Run(ctx, h.Snapshot())
	round.PendingReasons = result.PendingReasons
	round.QueueProblems = result.QueueProblems
	round.ProtectedRefusals = result.ProtectedRefusals
	round.AnswersChangeAt = result.AnswersChangeAt
	round.ProtectionChanges = result.ProtectionChanges
	h.apply(&round)
	return round
}

// RunRounds runs cycles until one changes nothing (a fixed point) or maxRounds ran. Before
// each round after the first, the clock advances by Period and pods that were releasing are
// gone: they come back pending, as a job controller recreates evicted pods. It returns every
// round and whether a fixed point was reached.
func (h *Harness) RunRounds(ctx context.Context, maxRounds int) ([]Round, bool) {
	var rounds []Round
	for i := range maxRounds {
		if i > 0 {
			h.nextPeriod()
		}
		round := h.RunCycle(ctx)
		rounds = append(rounds, round)
		if round.IsQuiet() && !h.anyReleasing() {
			return rounds, true
		}
	}
	return rounds, false
}

// RunUntil runs a cycle now and then one every Period while the clock has not passed end,
// whether or not anything happens: for scenarios that wait on time, such as protection
// expiring. Between cycles evicted pods terminate, as in RunRounds.
func (h *Harness) RunUntil(ctx context.Context, end time.Time) []Round {
	rounds := []Round{h.RunCycle(ctx)}
	for !h.Clock.Now().Add(h.Period).After(end) {
		h.nextPeriod()
		rounds = append(rounds, h.RunCycle(ctx))
	}
	return rounds
}

func (h *Harness) nextPeriod() {
	h.Clock.Step(h.Period)
	h.finishReleasing()
}

// apply plays the cluster's side of a cycle's effects. A promise (a nominated node) stays
// with the pod until it is bound or withdrawn, as on a cluster; a pod only pipelined for the
// cycle is pending again.
func (h *Harness) apply(round *Round) {
	now := h.Clock.Now()
	for _, p := range round.Nominated {
		pod := h.pod(p.Pod)
		pod.Status, pod.NodeName = model.Pipelined, p.Node
		if pod.IsShare() {
			pod.GPUGroups, pod.Request = p.GPUGroups, p.Request
		}
	}
	for _, key := range round.Withdrawn {
		pod := h.pod(key)
		pod.Status, pod.NodeName = model.Pending, ""
	}
	for _, b := range round.Binds {
		pod := h.pod(b.Pod)
		pod.Status, pod.NodeName, pod.StartTime = model.Running, b.Node, &now
		if pod.IsShare() {
			pod.GPUGroups, pod.Request = b.GPUGroups, b.Request
		}
	}
	ended := map[model.JobID]bool{} // a round is one decision: a run it ends counts once
	for _, e := range round.Evictions {
		pod := h.pod(e.Pod)
		pod.Status, pod.EvictedFor, pod.Moved = model.Releasing, e.Reason.Preemptor, e.Reason.Action.Moves()
		job := h.Job(e.Job)
		job.LastEvictionTimestamp = &now // as the scheduler stamps the PodGroup
		// and counts the runs it ended (status.evictions)
		if r := e.Reason; r.EndsRun && !ended[e.Job] {
			ended[e.Job] = true
			switch r.Action {
			case framework.Preempt:
				job.Evictions.Preempt++
			case framework.Reclaim:
				job.Evictions.Reclaim++
			}
		}
	}
	for _, started := range round.Started {
		t := started.At
		h.Job(started.Job).LastStartTimestamp = &t
	}
	for _, c := range round.ProtectionChanges {
		job := h.Job(c.Job)
		job.ShownProtection = nil
		if !c.None {
			shown := c.Protection.Shown()
			job.ShownProtection = &shown
		}
	}
}

func (h *Harness) finishReleasing() {
	for _, j := range h.jobs {
		for _, p := range j.Pods {
			if p.Status == model.Releasing {
				p.Status, p.NodeName, p.StartTime, p.EvictedFor, p.Moved = model.Pending, "", nil, "", false
			}
		}
	}
}

func (h *Harness) anyReleasing() bool {
	for _, j := range h.jobs {
		for _, p := range j.Pods {
			if p.Status == model.Releasing {
				return true
			}
		}
	}
	return false
}

// Job returns the cluster's current state of a job by name.
func (h *Harness) Job(id model.JobID) *model.JobInfo {
	for _, j := range h.jobs {
		if j.ID == id {
			return j
		}
	}
	panic(fmt.Sprintf("scenario has no job %s", id))
}

// JobNamed is Job for a name in the scenario namespace.
func (h *Harness) JobNamed(name string) *model.JobInfo {
	return h.Job(model.NewJobID(Namespace, name))
}

// PodsIn counts a job's pods in the given status.
func (h *Harness) PodsIn(name string, status model.PodStatus) int {
	n := 0
	for _, p := range h.JobNamed(name).Pods {
		if p.Status == status {
			n++
		}
	}
	return n
}

func (h *Harness) pod(key string) *model.PodInfo {
	for _, j := range h.jobs {
		for _, p := range j.Pods {
			if p.Key() == key {
				return p
			}
		}
	}
	panic(fmt.Sprintf("scenario has no pod %s", key))
}
