package property

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
)

// Scenario is one generated cluster, kept as a model so that the oracle judges the run
// against what was asked for rather than against what the simulator parsed.
type Scenario struct {
	Seed uint64
	// NodeGPUs is the GPU count of each node (node-0, node-1, ...).
	NodeGPUs []int
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
}

// Job is a PodGroup and its pods; every pod requests GPUs per pod.
type Job struct {
	Name, Queue, PriorityClass string
	Priority                   int
	MinMember                  int
	GPUs                       int
	Pods                       []Pod
	SubGroups                  []SubGroup
	SubmitAt, Duration         time.Duration
	Startup, Checkpoint        time.Duration // Checkpoint 0: never
}

// Pod is one pod of a job; SubGroup is "" outside sub-groups.
type Pod struct {
	Name, SubGroup string
	Grace          int
}

// SubGroup is a named part of a gang with its own minimum.
type SubGroup struct {
	Name      string
	MinMember int
}

// Elastic reports whether the job has more pods than its gang needs.
func (j *Job) Elastic() bool { return len(j.Pods) > j.MinMember }

// Preemptible is the KAI rule: priority below 100.
func (j *Job) Preemptible() bool { return j.Priority < 100 }

var classPriority = map[string]int{"train": 50, "build-preemptible": 75, "build": 100, "inference": 125}

// queueNames are shuffled per seed so that queue-name order, which the scheduler must not
// depend on, varies between scenarios.
var queueNames = []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
	"india", "juliet", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo"}

// minRuntimeChoices are the non-zero protections drawn; short, so that scenarios stay small.
var minRuntimeChoices = []time.Duration{20 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute}

// Generate builds the scenario of a seed. The same seed always gives the same scenario.
func Generate(seed uint64) *Scenario {
	r := rand.New(rand.NewPCG(seed, seed))
	s := &Scenario{Seed: seed}
	for range 1 + r.IntN(4) {
		s.NodeGPUs = append(s.NodeGPUs, 2+r.IntN(7))
	}
	s.generateQueues(r)
	s.DefaultPreempt, s.DefaultReclaim = optionalMinRuntime(r), optionalMinRuntime(r)
	s.Method = []string{"", "lca", "queue"}[r.IntN(3)]
	s.Period = []time.Duration{time.Second, 2 * time.Second, 5 * time.Second}[r.IntN(3)]
	for i := range 3 + r.IntN(8) {
		s.Jobs = append(s.Jobs, s.generateJob(r, i))
	}
	s.Horizon = s.horizon()
	return s
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

// generateJob makes a job that can run on its own: its gang fits on the empty cluster and
// under every limit of its queue chain, and a non-preemptible gang within every quota.
func (s *Scenario) generateJob(r *rand.Rand, index int) *Job {
	leaves := s.Leaves()
	j := &Job{Name: fmt.Sprintf("j%02d", index), Queue: leaves[r.IntN(len(leaves))].Name}
	limit, quota := s.chainBounds(j.Queue)
	j.GPUs = 1 + r.IntN(slicesMax(s.NodeGPUs))
	limitGPUs := 1 << 20 // unlimited
	if !math.IsInf(limit, 1) {
		limitGPUs = int(limit)
	}
	gangCap := func() int { return min(s.slots(j.GPUs), limitGPUs/j.GPUs, 4) }
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

// slots is how many pods of the given GPU size the empty cluster holds.
func (s *Scenario) slots(gpus int) int {
	n := 0
	for _, g := range s.NodeGPUs {
		n += g / gpus
	}
	return n
}

func (s *Scenario) totalGPUs() int {
	n := 0
	for _, g := range s.NodeGPUs {
		n += g
	}
	return n
}

func slicesMax(v []int) int {
	m := v[0]
	for _, x := range v[1:] {
		m = max(m, x)
	}
	return m
}

// horizon: the last submission, four times all the work done one job after another, and the
// longest protection, rounded up to a minute and capped so that a looping run stays cheap.
func (s *Scenario) horizon() time.Duration {
	var last, work time.Duration
	for _, j := range s.Jobs {
		last = max(last, j.SubmitAt)
		work += j.Duration + j.Startup
	}
	h := (last + 4*work + s.maxMinRuntime()).Round(time.Minute) + time.Minute
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

// ScenarioYAML renders the scenario as the manifests kai-sim reads.
func (s *Scenario) ScenarioYAML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Generated by test/property from seed %d.\n", s.Seed)
	for i, gpus := range s.NodeGPUs {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Node\nmetadata: {name: node-%d}\nstatus:\n"+
			"  allocatable: {cpu: \"64\", memory: 512Gi, nvidia.com/gpu: \"%d\", pods: \"110\"}\n", i, gpus)
	}
	for _, q := range s.Queues {
		fmt.Fprintf(&b, "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: %s}\nspec:\n", q.Name)
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
		b.WriteString("    cpu: {quota: -1, overQuotaWeight: 1, limit: -1}\n    memory: {quota: -1, overQuotaWeight: 1, limit: -1}\n")
	}
	for _, j := range s.Jobs {
		fmt.Fprintf(&b, "---\napiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata:\n  name: %s\n  annotations:\n", j.Name)
		fmt.Fprintf(&b, "    %s: %q\n    %s: %q\n    %s: %q\n", sim.SubmitAtAnnotation, j.SubmitAt.String(),
			sim.DurationAnnotation, j.Duration.String(), sim.StartupAnnotation, j.Startup.String())
		if j.Checkpoint > 0 {
			fmt.Fprintf(&b, "    %s: %q\n", sim.CheckpointIntervalAnnotation, j.Checkpoint.String())
		}
		fmt.Fprintf(&b, "spec:\n  minMember: %d\n  queue: %s\n  priorityClassName: %s\n", j.MinMember, j.Queue, j.PriorityClass)
		if len(j.SubGroups) > 0 {
			b.WriteString("  subGroups:\n")
			for _, g := range j.SubGroups {
				fmt.Fprintf(&b, "  - {name: %s, minMember: %d}\n", g.Name, g.MinMember)
			}
		}
		for _, p := range j.Pods {
			fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  annotations: {pod-group-name: %s}\n", p.Name, j.Name)
			if p.SubGroup != "" {
				fmt.Fprintf(&b, "  labels: {kai.scheduler/subgroup-name: %s}\n", p.SubGroup)
			}
			fmt.Fprintf(&b, "spec:\n  terminationGracePeriodSeconds: %d\n  containers:\n"+
				"  - {name: main, image: w, resources: {requests: {cpu: \"1\", memory: 1Gi, nvidia.com/gpu: \"%d\"}}}\n", p.Grace, j.GPUs)
		}
	}
	return b.String()
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
	var b strings.Builder
	fmt.Fprintf(&b, "# Generated by test/property from seed %d.\n", s.Seed)
	b.WriteString("actions: \"allocate, reclaim, preempt\"\ntiers:\n- plugins:\n  - name: priority\n  - name: proportion\n  - name: minruntime\n")
	if len(args) > 0 {
		b.WriteString("    arguments:\n")
		for _, a := range args {
			b.WriteString("      " + a + "\n")
		}
	}
	b.WriteString("  - name: predicates\n  - name: nodeplacement\n")
	return b.String()
}

// Simulate parses the rendered text, as kai-sim would, and runs it up to the horizon.
func (s *Scenario) Simulate(ctx context.Context) (*sim.Result, error) {
	sc, err := sim.Parse([]byte(s.ScenarioYAML()))
	if err != nil {
		return nil, fmt.Errorf("seed %d: generated scenario does not parse: %w", s.Seed, err)
	}
	return sim.Run(ctx, sc, sim.Options{Config: []byte(s.ConfigYAML()), Until: s.Horizon, Period: s.Period})
}
