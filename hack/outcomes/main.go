// Command outcomes measures, with kai-sim's engine, what min-runtime protection buys and
// costs, and prints the tables of docs/minruntime.md ("Outcomes, measured"):
//
//	go run ./hack/outcomes                     # both scenarios, one run at a time
//	go run ./hack/outcomes -scenarios builtin  # the built-in scenario only (a second)
//	go run ./hack/outcomes -parallel 2         # runs side by side, same output
//
// Each scenario — kai-sim's built-in one and the synthetic day of 2000 jobs
// (input.SyntheticDay) — runs with its jobs checkpointing as written and with every
// checkpoint annotation stripped, under no protection (no minruntime plugin), a fixed
// min-runtime, and escalating ones. For each run it prints the wasted GPU-hours (and the part
// beyond the startups of the jobs that completed, which no protection can save), evictions,
// the most evictions of one job, the protections escalation lengthened, the jobs completed,
// and each quota owner's mean and max wait beside the longest protection that held it back.
//
// The output is the same on every run: the simulations are deterministic, and runs done side
// by side are printed in order.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

func main() {
	names := flag.String("scenarios", "builtin,day", "comma-separated scenarios to run: builtin, day")
	parallel := flag.Int("parallel", 1, "simulations to run at once (the day takes tens of seconds each)")
	flag.Parse()
	var scenarios []scenario
	for _, name := range strings.Split(*names, ",") {
		s, ok := scenarioNamed(name)
		if !ok {
			fmt.Fprintf(os.Stderr, "outcomes: unknown scenario %q (want builtin or day)\n", name)
			os.Exit(2)
		}
		scenarios = append(scenarios, s)
	}
	began := time.Now()
	tables, err := measure(context.Background(), scenarios, max(1, *parallel))
	if err != nil {
		fmt.Fprintln(os.Stderr, "outcomes:", err)
		os.Exit(1)
	}
	for _, t := range tables {
		t.write(os.Stdout)
	}
	// Not in the tables: the time taken differs from run to run.
	fmt.Fprintf(os.Stderr, "outcomes: %d simulations in %s\n", countRuns(scenarios), time.Since(began).Round(time.Second))
}

// scenario is a scenario file, how long to simulate it, and the protections to compare on it.
type scenario struct {
	name        string
	data        []byte
	until       time.Duration
	protections []protection
}

// protection is a configuration of the minruntime plugin: its arguments, or none at all.
type protection struct {
	name string
	// arguments of the minruntime plugin ("" for its defaults); ignored when off.
	arguments string
	off       bool
}

// config is the scheduler configuration of a protection: kai-sim's built-in comparison's, with
// the minruntime plugin and its arguments, or without it.
func (p protection) config() []byte { return sim.ComparisonConfig(p.arguments, !p.off) }

// noProtection is the baseline of every scenario: without the minruntime plugin, no queue's
// reclaimMinRuntime applies either.
var noProtection = protection{name: "none", off: true}

// scenarioNamed is one of the two measured scenarios.
func scenarioNamed(name string) (scenario, bool) {
	switch name {
	case "builtin":
		base := `defaultReclaimMinRuntime: "` + sim.BuiltinMinRuntime.String() + `"`
		return scenario{name: "built-in", data: input.BuiltinScenario(), until: sim.BuiltinUntil, protections: []protection{
			noProtection,
			{name: "fixed 45m", arguments: base},
			// 45m×4 = 3h protects the second run of a checkpointing research job to its end.
			{name: "adaptive 45m ×4 up to 4h", arguments: base + `, escalationFactor: "4", escalationCeiling: "4h"`},
			// A ceiling short of research's whole run (10m + 3h): without checkpoints it is
			// cut at the ceiling every time and never finishes.
			{name: "adaptive 45m ×4 up to 3h", arguments: base + `, escalationFactor: "4", escalationCeiling: "3h"`},
			// 45m×5 = 3h45m covers research's whole run (10m + 3h) even without checkpoints.
			{name: "adaptive 45m ×5 up to 4h", arguments: base + `, escalationFactor: "5", escalationCeiling: "4h"`},
			// What the ≤ 10% target needs: no research run ever cut (longer than 10m + 3h).
			{name: "fixed 3h15m", arguments: `defaultReclaimMinRuntime: "3h15m"`},
		}}, true
	case "day":
		// The day's queues set reclaimMinRuntime 20m, which applies with the plugin at its
		// defaults; escalation multiplies it. Its jobs run up to 9m + 119m.
		return scenario{name: "day of 2000 jobs", data: input.SyntheticDay(), until: 24 * time.Hour, protections: []protection{
			noProtection,
			{name: "fixed 20m (queues)"},
			{name: "adaptive 20m ×2 up to 1h", arguments: `escalationFactor: "2", escalationCeiling: "1h"`},
			{name: "adaptive 20m ×3 up to 2h", arguments: `escalationFactor: "3", escalationCeiling: "2h"`},
			// 20m×7 = 2h20m covers the longest job's whole run after one eviction.
			{name: "adaptive 20m ×7 up to 2h20m", arguments: `escalationFactor: "7", escalationCeiling: "2h20m"`},
		}}, true
	}
	return scenario{}, false
}

// checkpointing says whether a run keeps the jobs' checkpoints as written.
var checkpointing = []struct {
	name  string
	strip bool
}{{"as written", false}, {"none", true}}

func countRuns(scenarios []scenario) int {
	n := 0
	for _, s := range scenarios {
		n += len(checkpointing) * len(s.protections)
	}
	return n
}

// withoutCheckpoints is a scenario file without its checkpoint annotations (each on a line of
// its own in the measured scenarios): its jobs lose all their work when evicted.
func withoutCheckpoints(data []byte) []byte {
	var out strings.Builder
	for line := range strings.Lines(string(data)) {
		if !strings.Contains(line, input.CheckpointIntervalAnnotation) {
			out.WriteString(line)
		}
	}
	return []byte(out.String())
}

// run is one simulation of the matrix and what it measured.
type run struct {
	scenario    *scenario
	checkpoints string
	protection  protection
	sc          *input.Scenario
	result      *report.Result
}

// measure runs every scenario under every checkpointing and protection, parallel at a time,
// and returns a table per scenario, in order.
func measure(ctx context.Context, scenarios []scenario, parallel int) ([]table, error) {
	var runs []*run
	for i := range scenarios {
		s := &scenarios[i]
		for _, c := range checkpointing {
			data := s.data
			if c.strip {
				data = withoutCheckpoints(data)
			}
			for _, p := range s.protections {
				sc, err := input.Parse(data) // a run changes its scenario: each its own
				if err != nil {
					return nil, fmt.Errorf("%s: %w", s.name, err)
				}
				if c.strip && slices.ContainsFunc(sc.Jobs, func(j *input.Job) bool { return j.CheckpointInterval > 0 }) {
					return nil, fmt.Errorf("%s: a checkpoint annotation was not stripped", s.name)
				}
				runs = append(runs, &run{scenario: s, checkpoints: c.name, protection: p, sc: sc})
			}
		}
	}
	errs := make([]error, len(runs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r := runs[i]
				r.result, errs[i] = sim.Run(ctx, r.sc, sim.Options{Config: r.protection.config(), Until: r.scenario.until})
			}
		}()
	}
	for i := range runs {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("%s, checkpoints %s, %s: %w", runs[i].scenario.name, runs[i].checkpoints, runs[i].protection.name, err)
		}
	}
	var tables []table
	for i := range scenarios {
		t := table{scenario: &scenarios[i]}
		var baseline *row
		for _, r := range runs {
			if r.scenario != t.scenario {
				continue
			}
			rw := measureRun(r)
			if r.protection == noProtection { // the first of each checkpointing
				baseline = &rw
			}
			rw.baseline = baseline
			t.rows = append(t.rows, rw)
		}
		tables = append(tables, t)
	}
	return tables, nil
}

// row is what one run measured, as the table shows it.
type row struct {
	checkpoints string
	protection  string
	// wasted is every GPU-second startups and lost work took; lost is the part beyond one
	// startup of each completed job, which every run of it pays however it is protected.
	wasted, lost float64
	evictions    int
	mostRunsLost int
	escalated    int
	completed    int
	jobs         int
	owners       []ownerWait
	// baseline is the unprotected run of the same scenario and checkpointing.
	baseline *row
}

// ownerWait is a quota owner's wait, and the bound the owner-wait target sets on it: the
// longest protection that held its jobs back, the victims' grace period and two cycles.
type ownerWait struct {
	queue      string
	mean, max  float64
	started    bool
	longestMet float64
	bound      float64
}

// cycles is how many scheduling cycles (of kai-sim's default 1s period) the owner-wait
// bound allows after the victims' grace period.
const cycles = 2

func measureRun(r *run) row {
	rw := row{checkpoints: r.checkpoints, protection: r.protection.name, wasted: r.result.Totals.WastedGPUSeconds,
		evictions: r.result.Totals.Evictions, mostRunsLost: r.result.Totals.MostRunsEnded,
		escalated: r.result.Totals.EscalatedRuns, completed: r.result.Totals.Completed, jobs: r.result.Totals.Jobs}
	startup := map[string]float64{} // a run's startup in GPU-seconds, by job
	var grace time.Duration
	for _, j := range r.sc.Jobs {
		var gpus int64
		for _, pod := range j.Pods {
			gpus += sim.PodGPUs(pod)
			grace = max(grace, sim.GracePeriod(pod))
		}
		startup[j.Key()] = float64(gpus) * j.Startup.Seconds()
	}
	rw.lost = rw.wasted
	for _, j := range r.result.Jobs {
		if j.Completed != nil {
			rw.lost -= startup[j.PodGroup]
		}
	}
	for _, q := range r.result.Totals.Queues {
		if !owns(r.sc, q.Queue) {
			continue
		}
		bound := q.LongestProtectionMetSeconds + grace.Seconds() + cycles*time.Second.Seconds()
		rw.owners = append(rw.owners, ownerWait{queue: q.Queue, mean: q.MeanWaitSeconds, max: q.MaxWaitSeconds,
			started: q.Started > 0, longestMet: q.LongestProtectionMetSeconds, bound: bound})
	}
	return rw
}

// owns reports whether a queue has a GPU quota: its jobs reclaim what others borrowed.
func owns(sc *input.Scenario, queue string) bool {
	for _, q := range sc.Queues {
		if q.Name == queue {
			return q.Spec.Resources != nil && q.Spec.Resources.GPU.Quota > 0
		}
	}
	return false
}

// table is a scenario's rows.
type table struct {
	scenario *scenario
	rows     []row
}

// write prints the table in Markdown.
func (t table) write(w io.Writer) {
	s := t.scenario
	fmt.Fprintf(w, "### %s (%s simulated)\n\n", s.name, s.until)
	header := []string{"checkpoints", "protection", "wasted GPU-h (% of none)", "beyond completed jobs' startups (% of none)",
		"evictions", "most evictions of one job", "escalated protections", "completed"}
	if len(t.rows) > 0 {
		for _, o := range t.rows[0].owners {
			header = append(header, o.queue+" wait: mean / max (longest protection met)")
		}
	}
	header = append(header, "owners' max wait ≤ longest protection met + grace + 2 cycles")
	fmt.Fprintf(w, "| %s |\n", strings.Join(header, " | "))
	fmt.Fprintf(w, "|%s\n", strings.Repeat("---|", len(header)))
	for _, r := range t.rows {
		cells := []string{r.checkpoints, r.protection,
			fmt.Sprintf("%.1f (%s)", r.wasted/3600, percent(r.wasted, r.baseline.wasted)),
			fmt.Sprintf("%.1f (%s)", r.lost/3600, percent(r.lost, r.baseline.lost)),
			fmt.Sprint(r.evictions), fmt.Sprint(r.mostRunsLost), fmt.Sprint(r.escalated),
			fmt.Sprintf("%d of %d", r.completed, r.jobs)}
		var missed []string
		for _, o := range r.owners {
			if !o.started {
				cells = append(cells, "- (none started)")
				continue
			}
			cells = append(cells, fmt.Sprintf("%s / %s (%s)", report.ClockTime(o.mean), report.ClockTime(o.max), minutes(o.longestMet)))
			if o.max > o.bound {
				missed = append(missed, fmt.Sprintf("%s by %s", o.queue, report.ClockTime(o.max-o.bound)))
			}
		}
		verdict := "yes"
		if len(missed) > 0 {
			verdict = "no: " + strings.Join(missed, ", ")
		}
		cells = append(cells, verdict)
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintln(w)
}

func percent(part, whole float64) string {
	if whole <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*part/whole)
}

// minutes renders a protection as a queue spec would set it (45m, 3h, 3h45m), or "none".
func minutes(seconds float64) string {
	if seconds == 0 {
		return "none"
	}
	return report.ClockLabel(seconds)
}
