package property

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// PropMoves: C1, no cycle moves more jobs by consolidation than it may, and none when
// consolidation is not configured or may move none.
const PropMoves = "C1 moves per cycle"

// consolidationAction is the action that moves running jobs so that a pending one fits, as the
// timeline and the configuration name it.
const consolidationAction = "consolidation"

// defaultMaxMoved is how many jobs consolidation may move in a cycle when kai-sim's
// --max-consolidation-preemptees is not given: upstream KAI-Scheduler's default, written out
// here rather than taken from the scheduler's code, so that the suite would notice it changed.
const defaultMaxMoved = 16

// consolidationStream sets the stream of consolidation apart; of the keys from "con"
// (0x636f6e) on, the first that turns it on for no held seed, so that those still build the
// scenarios that found their defects.
const consolidationStream = 0x636f79

// consolidationShare is the share of scenarios, in quarters, that run consolidation.
const consolidationShare = 2

// maxMovedChoices are the --max-consolidation-preemptees a consolidating scenario draws: 0
// (the action configured but off), one or two jobs a cycle, so that the bound binds, and
// nil (unset: the default) for the rest.
var maxMovedChoices = []*int{ptr(0), ptr(1), ptr(2), nil, nil, nil}

func ptr[T any](v T) *T { return &v }

// consolidate lists, in consolidationShare of the scenarios, consolidation after allocate
// (upstream's default order), draws how many jobs it may move in a cycle, and gives it room
// to work: in half of them pods spread over the nodes (SpreadGPUs), and in half of them
// fragment adds jobs that leave no node whole for one that needs a node whole. The mix
// alone moves jobs in few scenarios: packing keeps whole nodes free, and reclaim and
// preempt serve most pending jobs.
func (s *Scenario) consolidate(c *rand.Rand) {
	if c.IntN(4) >= consolidationShare {
		return
	}
	s.Consolidation = true
	s.MaxConsolidationPreemptees = maxMovedChoices[c.IntN(len(maxMovedChoices))]
	s.SpreadGPUs = c.IntN(2) == 0
	if c.IntN(2) == 0 {
		s.fragment(c)
	}
}

// MaxMoved is how many jobs consolidation may move in a cycle: 0 when it is not configured.
func (s *Scenario) MaxMoved() int {
	switch {
	case !s.Consolidation:
		return 0
	case s.MaxConsolidationPreemptees != nil:
		return *s.MaxConsolidationPreemptees
	}
	return defaultMaxMoved
}

// Flags are kai-sim's flags beyond the configuration, period and horizon that the scenario
// runs with: --max-consolidation-preemptees when it sets it.
func (s *Scenario) Flags() []string {
	if s.MaxConsolidationPreemptees == nil {
		return nil
	}
	return []string{fmt.Sprintf("--max-consolidation-preemptees %d", *s.MaxConsolidationPreemptees)}
}

// checkMoves is C1 over the whole timeline: at every time (a scheduling cycle), the distinct
// jobs consolidation evicted pods of number at most the scenario's MaxMoved, and none when
// consolidation is not configured or may move no job.
func (j *judge) checkMoves(events []report.Event) {
	moved := map[float64]map[string]bool{}
	first := map[float64]report.Event{}
	for _, e := range events {
		if e.Type != report.EventEvict || e.Action != consolidationAction {
			continue
		}
		if moved[e.Time] == nil {
			moved[e.Time], first[e.Time] = map[string]bool{}, e
		}
		moved[e.Time][e.PodGroup] = true
	}
	limit := j.s.MaxMoved()
	for _, t := range slices.Sorted(maps.Keys(moved)) {
		jobs := slices.Sorted(maps.Keys(moved[t]))
		if len(jobs) <= limit {
			j.figures.MoveCycles++
			if len(jobs) == limit {
				j.figures.FullMoveCycles++
			}
			continue
		}
		why := fmt.Sprintf("at most %d may move in a cycle (--max-consolidation-preemptees)", limit)
		switch {
		case !j.s.Consolidation:
			why = "consolidation is not among the configured actions"
		case limit == 0:
			why = "--max-consolidation-preemptees 0 turns consolidation off"
		}
		j.fail(PropMoves, first[t], "the cycle moved %d jobs (%s), but %s", len(jobs), strings.Join(jobs, ", "), why)
	}
}

// fragment adds, when the cluster has two untainted nodes or more, one-GPU jobs that take a
// GPU on each of them (spread places them so; packing, now and then) and, a little later, a
// job of one pod that needs the largest of them whole: it fits nowhere as things stand, and
// on the largest node once the one-GPU job there moves to another, which consolidation is
// for. Each can run on its own: a node it may use holds it, and so do its queues' limits (a
// limit is never below one GPU, so every leaf takes a one-GPU job).
func (s *Scenario) fragment(c *rand.Rand) {
	var open []Node
	for _, n := range s.Nodes {
		if len(n.Taints) == 0 {
			open = append(open, n)
		}
	}
	if len(open) < 2 {
		return
	}
	big := 0
	for _, n := range open {
		big = max(big, n.GPUs)
	}
	leafFor := func(gpus int) string {
		var fit []string
		for _, q := range s.Leaves() {
			if limit, _ := s.chainBounds(q.Name); limit >= float64(gpus) {
				fit = append(fit, q.Name)
			}
		}
		if len(fit) == 0 {
			return ""
		}
		return fit[c.IntN(len(fit))]
	}
	bigLeaf := leafFor(big)
	if bigLeaf == "" {
		return
	}
	at := time.Duration(c.IntN(31)) * 10 * time.Second
	add := func(queue, class string, gpus int, submitAt, duration time.Duration) {
		j := &Job{Name: fmt.Sprintf("j%02d", len(s.Jobs)), Queue: queue, PriorityClass: class, Priority: classPriority[class],
			MinMember: 1, GPUs: gpus, SubmitAt: submitAt, Duration: duration}
		j.Pods = []Pod{{Name: j.Name + "-0", Grace: c.IntN(31)}}
		s.Jobs = append(s.Jobs, j)
	}
	for range open {
		add(leafFor(1), "train", 1, at, time.Duration(30+c.IntN(31))*10*time.Second)
	}
	add(bigLeaf, []string{"train", "build-preemptible"}[c.IntN(2)], big, at+time.Duration(1+c.IntN(6))*10*time.Second,
		time.Duration(6+c.IntN(25))*10*time.Second)
}
