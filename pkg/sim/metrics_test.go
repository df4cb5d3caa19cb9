package sim_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/metrics"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/internal/simtest"
)

// The operator's two questions, answered by metrics: the reclaimed job ran 2 minutes (its
// queue's reclaim min-runtime), and the reclaimer waited 110 s on that protection (submitted
// at 10 s, reclaimed at 120 s, when the protection ended).
func TestMetricsTellRuntimeAtEvictionAndWaitOnProtection(t *testing.T) {
	example := simtest.Example(t, "reclaim-promise.yaml")
	// Queue a (big's) protects its jobs against reclaim for 2 minutes.
	scenario := strings.Replace(string(example), "metadata: {name: a}\nspec:\n", "metadata: {name: a}\nspec:\n  reclaimMinRuntime: 2m\n", 1)
	if scenario == string(example) {
		t.Fatal("the example's queue a is not where the test expects it")
	}
	sc, err := input.Parse([]byte(scenario))
	if err != nil {
		t.Fatal(err)
	}
	recorded := &metrics.Recording{}
	result, err := sim.Run(context.Background(), sc, sim.Options{Until: 200 * time.Second,
		Metrics: func(string) metrics.Recorder { return recorded }})
	if err != nil {
		t.Fatal(err)
	}
	if result.Totals.Evictions != 1 {
		t.Fatalf("%d evictions, want big reclaimed once", result.Totals.Evictions)
	}
	got := recorded.Recorded()
	if ran := got.RuntimesAtEviction["reclaim"]; !slices.Equal(ran, []time.Duration{120 * time.Second}) {
		t.Errorf("runtime at eviction: %v, want one of 2m0s", ran)
	}
	if !slices.Equal(got.ProtectionWaits, []time.Duration{110 * time.Second}) {
		t.Errorf("wait on protection: %v, want one of 1m50s", got.ProtectionWaits)
	}
	if got.MinRuntimeRefusals["reclaim"] == 0 {
		t.Error("no refused victim counted, though the protection held the reclaimer back for 110s")
	}
}
