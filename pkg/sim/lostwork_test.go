package sim_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/internal/simtest"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// A job that checkpoints reports it, and the scheduler reclaims it rather than an equal job
// that saved nothing: 5 minutes of work lost (since its checkpoint at 20 minutes) instead of
// 25. By name alone the other would have gone.
func TestReportedCheckpointsPickTheVictimThatLosesLeast(t *testing.T) {
	r := simulate(t, simtest.Example(t, "least-lost-work.yaml"), "")
	if got := simtest.EvictionTimes(r); !reflect.DeepEqual(got, map[string][]float64{"default/saver": {1500}}) {
		t.Fatalf("evictions %v, want saver once at 1500 s", got)
	}
	for _, j := range r.Jobs {
		if j.Completed == nil {
			t.Errorf("%s did not complete", j.PodGroup)
		}
		if want := map[string]float64{"default/saver": 300}[j.PodGroup]; j.WastedGPUSeconds != want {
			t.Errorf("%s wasted %v GPU-seconds, want %v", j.PodGroup, j.WastedGPUSeconds, want)
		}
	}
	// saver resumed from its checkpoint: 20 of its 120 minutes were saved.
	if done := completion(r, "default/saver"); done != 2102+100*60 {
		t.Errorf("saver completed at %v s, want %v (restarted at 2102 s with 100 minutes left)", done, 2102+100*60)
	}
}

// A checkpoint a scenario writes itself is read on the virtual clock, as the workload's own
// report would be: long, claiming one at 0:24:00, now loses least and is the victim.
func TestScenarioCheckpointAnnotationIsVirtualTime(t *testing.T) {
	scenario := strings.Replace(string(simtest.Example(t, "least-lost-work.yaml")),
		"metadata: {name: long, annotations: {", `metadata: {name: long, annotations: {kai.scheduler/last-checkpoint-timestamp: "2026-01-01T00:24:00Z", `, 1)
	if got := simtest.EvictionTimes(simulate(t, []byte(scenario), "")); !reflect.DeepEqual(got, map[string][]float64{"default/long": {1500}}) {
		t.Fatalf("evictions %v, want long once at 1500 s", got)
	}
}

// Checkpoints reported between cycles call for no cycle of their own: running a cycle every
// period decides exactly what the run that skips idle periods decides, and the scheduler's
// store, told of every reported checkpoint, matches the cluster listed afresh.
func TestReportingCheckpointsSkipsNoDecision(t *testing.T) {
	sc, err := input.Parse(simtest.Example(t, "least-lost-work.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(every bool) *report.Result {
		r, err := sim.Run(context.Background(), sc, sim.Options{Until: 3 * time.Hour, EveryPeriod: every, VerifySnapshots: every})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	skipping, every := run(false), run(true)
	if !reflect.DeepEqual(skipping.Events, every.Events) {
		t.Fatalf("a cycle every period changed the events:\nskipping %v\nevery    %v", skipping.Events, every.Events)
	}
}

func completion(r *report.Result, job string) float64 {
	for _, e := range r.Events {
		if e.Type == report.EventComplete && e.PodGroup == job {
			return e.Time
		}
	}
	return -1
}
