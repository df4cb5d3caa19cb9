package sim_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/internal/simtest"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

func simulate(t testing.TB, scenario []byte, config string) *report.Result {
	t.Helper()
	opts := sim.Options{}
	if config != "" {
		opts.Config = []byte(config)
	}
	return simulateWith(t, scenario, opts)
}

// simulateWith runs a scenario with opts, failing the test on any error.
func simulateWith(t testing.TB, scenario []byte, opts sim.Options) *report.Result {
	t.Helper()
	sc, err := input.Parse(scenario)
	if err != nil {
		t.Fatal(err)
	}
	result, err := sim.Run(context.Background(), sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	return result
}

func TestSeedPreemptTree(t *testing.T) {
	r := simulate(t, simtest.Example(t, "preempt-tree.yaml"), "")
	got := simtest.EvictionTimes(r)
	if len(got) != 2 || got["demo/low-1"][0] != 300 || got["demo/low-2"][0] != 600 {
		t.Fatalf("evictions %v: want low-1 at 300s (p-leaf1's own value) and low-2 at 600s (inherited from p-b)", got)
	}
	if r.Totals.ProtectedRefusals == 0 {
		t.Fatal("the preemptors waited on protected victims, but no refusal was counted")
	}
	if r := simulate(t, simtest.Example(t, "reclaim-promise.yaml"), ""); r.Totals.ProtectedRefusals != 0 {
		t.Fatalf("%d refusals counted where no min-runtime is set", r.Totals.ProtectedRefusals)
	}
}

func TestSeedReclaimTreeLCAAgainstQueueMethod(t *testing.T) {
	lca := simtest.EvictionTimes(simulate(t, simtest.Example(t, "reclaim-lca-tree.yaml"), ""))
	if got := lca["demo/borrower"]; len(got) != 1 || got[0] != 600 {
		t.Fatalf("lca: borrower evicted at %v, want once at 600s (C inherits B's 600s)", got)
	}
	queue := simtest.EvictionTimes(simulate(t, simtest.Example(t, "reclaim-lca-tree.yaml"), `
actions: "allocate, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: proportion
  - name: minruntime
    arguments: {reclaimResolveMethod: queue}
  - name: predicates
  - name: nodeplacement
`))
	if got := queue["demo/borrower"]; len(got) != 1 || got[0] != 100 {
		t.Fatalf("queue: borrower evicted at %v, want once at 100s, when the owner arrives (leaf1's own 0s)", got)
	}
}

func TestJSONIsByteIdentical(t *testing.T) {
	for _, name := range []string{"preempt-tree.yaml", "reclaim-lca-tree.yaml"} {
		var first, second bytes.Buffer
		if err := report.WriteJSON(&first, simulate(t, simtest.Example(t, name), "")); err != nil {
			t.Fatal(err)
		}
		if err := report.WriteJSON(&second, simulate(t, simtest.Example(t, name), "")); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first.Bytes(), second.Bytes()) {
			t.Fatalf("%s: two runs gave different JSON", name)
		}
		for _, key := range []string{`"events"`, `"jobs"`, `"totals"`, `"wastedGPUSeconds"`, `"firstStart"`} {
			if !strings.Contains(first.String(), key) {
				t.Errorf("%s: JSON lacks %s", name, key)
			}
		}
	}
}

// TestBuiltinComparison checks the story the built-in scenario tells: min-runtime stops the
// thrashing of the borrowed GPUs at the price of the owner waiting a while.
func TestBuiltinComparison(t *testing.T) {
	variants, err := sim.Compare(context.Background(), input.BuiltinScenario(), sim.Options{Until: sim.BuiltinUntil}, sim.BuiltinVariants())
	if err != nil {
		t.Fatal(err)
	}
	without, with := variants[0].Result.Totals, variants[1].Result.Totals
	if with.Evictions >= without.Evictions || with.WastedGPUSeconds >= without.WastedGPUSeconds/2 {
		t.Errorf("min-runtime should cut evictions and at least halve waste: without %+v, with %+v", without, with)
	}
	if with.Completed <= without.Completed {
		t.Errorf("min-runtime should let research finish: completed %d without, %d with", without.Completed, with.Completed)
	}
	wait := func(totals report.Totals) float64 {
		for _, q := range totals.Queues {
			if q.Queue == "prod" {
				return q.MeanWaitSeconds
			}
		}
		return -1
	}
	if wait(with) <= wait(without) {
		t.Errorf("the owner should wait longer with protection (the price): %v vs %v", wait(with), wait(without))
	}
}

// startTime returns when a job first started, or -1.
func startTime(r *report.Result, job string) float64 {
	for _, e := range r.Events {
		if e.Type == report.EventStart && e.PodGroup == job {
			return e.Time
		}
	}
	return -1
}

// The reclaimer gets what was evicted for it: one eviction, a start one grace period (0 s)
// and at most two cycles later, and the simulation ends by itself instead of looping.
func TestReclaimPromiseIsKept(t *testing.T) {
	r := simulate(t, simtest.Example(t, "reclaim-promise.yaml"), "")
	if got := simtest.EvictionTimes(r); len(got["default/big"]) != 1 {
		t.Fatalf("evictions %v, want big evicted exactly once", got)
	}
	evicted := simtest.EvictionTimes(r)["default/big"][0]
	if start := startTime(r, "default/small"); start < 0 || start > evicted+2 {
		t.Fatalf("small started at %v, want within 2 cycles of the eviction at %v", start, evicted)
	}
	if r.Totals.SimulatedSeconds > 60 {
		t.Fatalf("the simulation ran %v s: it must stop once nothing more can change", r.Totals.SimulatedSeconds)
	}
	if len(r.Warnings) != 0 {
		t.Fatalf("warnings %q for a run that evicted once", r.Warnings)
	}
}

// Renaming the owner queue so that it sorts before or after the borrower changes nothing.
func TestReclaimDoesNotDependOnQueueNames(t *testing.T) {
	config := string(simtest.Example(t, "reclaim-queue-names.conf.yaml"))
	for _, owner := range []string{"zowner", "aowner"} {
		scenario := strings.ReplaceAll(string(simtest.Example(t, "reclaim-queue-names.yaml")), "zowner", owner)
		r := simulate(t, []byte(scenario), config)
		evictions := simtest.EvictionTimes(r)
		if len(evictions["default/sweep"]) != 1 || len(evictions) != 1 {
			t.Fatalf("owner %q: evictions %v, want sweep evicted once", owner, evictions)
		}
		if start := startTime(r, "default/eval"); start != 65 {
			t.Fatalf("owner %q: eval started at %v, want 65 (evicted at 60, 5 s grace)", owner, start)
		}
		if r.Totals.Completed != 3 {
			t.Fatalf("owner %q: %d of 3 jobs completed", owner, r.Totals.Completed)
		}
	}
}

// The placement example: a tolerating pod uses the tainted node, one that does not waits
// and is told why in kube-scheduler's words, and the one FPGA is never given to two jobs at
// once: the second starts only when the first completes.
func TestPlacementRulesInTheSimulator(t *testing.T) {
	r := simulate(t, simtest.Example(t, "placement.yaml"), "")
	starts := map[string]report.Event{}
	for _, e := range r.Events {
		if e.Type == report.EventBind {
			starts[e.PodGroup] = e
		}
	}
	if got := starts["default/serve"].Node; got != "reserved" {
		t.Errorf("serve bound on %q, want the tainted node it tolerates", got)
	}
	if got := starts["default/fpga-a"].Node; got != "fpga" {
		t.Errorf("fpga-a bound on %q, want the only node with an FPGA", got)
	}
	first, second := startTime(r, "default/fpga-a"), startTime(r, "default/fpga-b")
	if first < 0 || second < first+600 {
		t.Errorf("fpga-b started at %v, want after fpga-a (started %v) completed its 10 minutes", second, first)
	}
	for _, j := range r.Jobs {
		switch j.PodGroup {
		case "default/train":
			want := "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {dedicated: inference}."
			if j.FirstStart != nil || !strings.Contains(strings.Join(j.Waiting, "; "), want) {
				t.Errorf("train: started %v, waiting %q; want it never started and told %q", j.FirstStart, j.Waiting, want)
			}
		default:
			if j.Completed == nil {
				t.Errorf("%s did not complete", j.PodGroup)
			}
		}
	}
}
