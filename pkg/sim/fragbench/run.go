package fragbench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// Strategies are the nodeplacement plugin's values of its gpu argument, in the table's order.
var Strategies = []string{"binpack", "spread", "fragmentation"}

// Config is the scheduler configuration a strategy runs: allocation alone (one queue and one
// priority leave reclaim and preempt nothing to do, and no pod is moved once placed, as in
// the paper) with the default plugins, the nodeplacement plugin placing GPUs by strategy.
func Config(strategy string) []byte {
	return []byte(`actions: "allocate"
tiers:
- plugins:
  - name: priority
  - name: proportion
  - name: predicates
  - name: nodeplacement
    arguments:
      gpu: ` + strategy + "\n")
}

// Outcome is what one strategy made of a mix.
type Outcome struct {
	Strategy string
	// Allocated and Stranded are, for each of Levels, the share of the cluster's GPUs
	// allocated and stranded (report.GPUReport) once the pod that reached that level of
	// arrivals was scheduled (or not).
	Allocated, Stranded []float64
	// Waiting counts the pods that never started.
	Waiting int
	// Wall is how long the simulation took (parsing the mix included); CPU, when the caller
	// measured it, the CPU time it took (0: not measured).
	Wall, CPU time.Duration
	// Result is the run's kai-sim result.
	Result *report.Result
}

// Run plays the mix in kai-sim with the strategy, up to the last arrival. An error is one of
// kai-sim's, among them a bind a node's devices could not honour (a scheduler bug).
func Run(ctx context.Context, m *Mix, strategy string) (*Outcome, error) {
	began := time.Now()
	sc, err := input.Parse(m.Scenario)
	if err != nil {
		return nil, fmt.Errorf("the mix does not parse: %w", err)
	}
	last := m.ReachedAt[len(m.ReachedAt)-1]
	result, err := sim.Run(ctx, sc, sim.Options{Config: Config(strategy), Until: time.Duration(last) * time.Second})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", strategy, err)
	}
	o := &Outcome{Strategy: strategy, Wall: time.Since(began), Result: result}
	for _, at := range m.ReachedAt {
		s := sampleAt(result.Series, float64(at))
		if s.Capacity == 0 {
			return nil, fmt.Errorf("%s: no sample of the cluster's GPUs at %ds", strategy, at)
		}
		o.Allocated = append(o.Allocated, s.Allocated/float64(s.Capacity))
		o.Stranded = append(o.Stranded, s.Stranded/float64(s.Capacity))
	}
	for _, j := range result.Jobs {
		if j.FirstStart == nil {
			o.Waiting++
		}
	}
	return o, nil
}

// sampleAt is the cluster as sampled at t: the latest sample at or before it (a run samples
// only when something changed). The sample of a second is taken after its cycle, so it holds
// the pod submitted then, placed or waiting.
func sampleAt(series []report.Sample, t float64) report.Sample {
	var at report.Sample
	for _, s := range series {
		if s.Time > t {
			break
		}
		at = s
	}
	return at
}

// WriteTable writes the outcomes side by side: the share of GPUs allocated and stranded at
// each level of arrivals, the pods that never started, and, with times, each run's wall time
// and CPU time (where measured).
func WriteTable(w io.Writer, m *Mix, outcomes []*Outcome, times bool) error {
	if _, err := fmt.Fprintf(w, "GPU-sharing mix: %d nodes, %d GPUs, seed %d; %d pods (%s), one a second, none leaving, until they ask for %.0f%% of the GPUs\n\n",
		m.Nodes, m.GPUs, m.Seed, m.Pods, kindsText(m), 100*Levels[len(Levels)-1]); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', tabwriter.AlignRight)
	cells := func(label string, value func(*Outcome) string) {
		row := []string{label}
		for _, o := range outcomes {
			row = append(row, value(o))
		}
		_, _ = fmt.Fprintln(tw, strings.Join(row, "\t")+"\t") // a tabwriter's error comes from Flush
	}
	cells("", func(o *Outcome) string { return o.Strategy })
	for i, level := range Levels {
		cells(fmt.Sprintf("GPUs allocated at %.0f%% arrived", 100*level), func(o *Outcome) string { return fmt.Sprintf("%.1f%%", 100*o.Allocated[i]) })
	}
	for i, level := range Levels {
		cells(fmt.Sprintf("GPUs stranded at %.0f%% arrived", 100*level), func(o *Outcome) string { return fmt.Sprintf("%.1f%%", 100*o.Stranded[i]) })
	}
	cells("pods never started", func(o *Outcome) string { return fmt.Sprint(o.Waiting) })
	if times {
		cells("wall time", func(o *Outcome) string { return o.Wall.Round(time.Second).String() })
		if slices.ContainsFunc(outcomes, func(o *Outcome) bool { return o.CPU > 0 }) {
			cells("CPU time", func(o *Outcome) string { return o.CPU.Round(time.Second).String() })
		}
	}
	return tw.Flush()
}

// kindsText lists the mix's pods by kind.
func kindsText(m *Mix) string {
	var parts []string
	for _, k := range podKinds {
		name := k.name
		if m.Whole && k.fraction {
			name += " asked whole"
		}
		parts = append(parts, fmt.Sprintf("%d %s", m.Kinds[k.name], name))
	}
	return strings.Join(parts, ", ")
}
