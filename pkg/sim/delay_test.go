package sim_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/internal/simtest"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// A scenario's preemption delay, as a PodGroup field or as a pod annotation, holds the
// reclaimer of reclaim-promise.yaml (submitted at 10 s) back for 30 s: big is reclaimed at
// 40 s, not 10 s. The report names the delayed job, and a comparison with the scenario
// without the delay shows it.
func TestScenarioPreemptionDelayHoldsTheReclaimer(t *testing.T) {
	example := string(simtest.Example(t, "reclaim-promise.yaml"))
	run := func(t *testing.T, scenario string) *report.Result {
		t.Helper()
		sc, err := input.Parse([]byte(scenario))
		if err != nil {
			t.Fatal(err)
		}
		result, err := sim.Run(context.Background(), sc, sim.Options{Until: 100 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return result
	}
	edit := func(t *testing.T, old, replacement string) string {
		t.Helper()
		edited := strings.Replace(example, old, replacement, 1)
		if edited == example {
			t.Fatalf("the example has no %q", old)
		}
		return edited
	}
	plain := run(t, example)
	for name, scenario := range map[string]string{
		"field": edit(t, "spec: {minMember: 1, queue: b, priorityClassName: train}",
			"spec: {minMember: 1, queue: b, priorityClassName: train, preemptionDelay: 30s}"),
		"pod annotation": edit(t, "metadata: {name: small-0, annotations: {pod-group-name: small}}",
			`metadata: {name: small-0, annotations: {pod-group-name: small, kai.scheduler/preemption-delay: "30s"}}`),
	} {
		t.Run(name, func(t *testing.T) {
			result := run(t, scenario)
			if got := simtest.EvictionTimes(result)["default/big"]; !slices.Equal(got, []float64{40}) {
				t.Fatalf("big evicted at %v, want once at 40 s (10 s + the 30 s delay)", got)
			}
			if result.Totals.DelayedJobs != 1 || !slices.ContainsFunc(result.Jobs, func(j report.JobReport) bool {
				return j.PodGroup == "default/small" && j.PreemptionDelayed
			}) {
				t.Errorf("delayed jobs %d (%+v), want small", result.Totals.DelayedJobs, result.Jobs)
			}
			var out bytes.Buffer
			if err := report.WriteText(&out, result); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), "1 job held back by the preemption delay") {
				t.Errorf("the report does not tell the delayed job:\n%s", out.String())
			}
			out.Reset()
			if err := report.WriteComparison(&out, []report.Variant{{Name: "plain", Result: plain}, {Name: "delayed", Result: result}}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), "jobs held by preemption delay") {
				t.Errorf("the comparison does not show the delay:\n%s", out.String())
			}
		})
	}
	if got := simtest.EvictionTimes(plain)["default/big"]; !slices.Equal(got, []float64{10}) {
		t.Fatalf("without a delay big is evicted at %v, want 10 s", got)
	}
}
