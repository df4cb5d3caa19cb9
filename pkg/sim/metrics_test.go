package sim_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/metrics"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
)

// histogram reads how many samples a histogram holds and their sum.
func histogram(t *testing.T, h prometheus.Collector) (uint64, float64) {
	t.Helper()
	ch := make(chan prometheus.Metric, 1)
	h.Collect(ch)
	m := &dto.Metric{}
	if err := (<-ch).Write(m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
}

// The operator's two questions, answered by metrics: the reclaimed job ran 2 minutes (its
// queue's reclaim min-runtime), and the reclaimer waited 110 s on that protection (submitted
// at 10 s, reclaimed at 120 s, when the protection ended).
func TestMetricsTellRuntimeAtEvictionAndWaitOnProtection(t *testing.T) {
	example, err := os.ReadFile("../../docs/examples/sim/reclaim-promise.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Queue a (big's) protects its jobs against reclaim for 2 minutes.
	scenario := strings.Replace(string(example), "metadata: {name: a}\nspec:\n", "metadata: {name: a}\nspec:\n  reclaimMinRuntime: 2m\n", 1)
	if scenario == string(example) {
		t.Fatal("the example's queue a is not where the test expects it")
	}
	sc, err := input.Parse([]byte(scenario))
	if err != nil {
		t.Fatal(err)
	}
	runtime := metrics.RuntimeAtEviction.WithLabelValues("reclaim").(prometheus.Histogram)
	evictionsBefore, ranBefore := histogram(t, runtime)
	waitsBefore, waitedBefore := histogram(t, metrics.MinRuntimeWait)

	result, err := sim.Run(context.Background(), sc, sim.Options{Until: 200 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if result.Totals.Evictions != 1 {
		t.Fatalf("%d evictions, want big reclaimed once", result.Totals.Evictions)
	}
	evictions, ran := histogram(t, runtime)
	if evictions-evictionsBefore != 1 || ran-ranBefore != 120 {
		t.Errorf("runtime at eviction: %d samples summing %.0fs, want 1 of 120s", evictions-evictionsBefore, ran-ranBefore)
	}
	waits, waited := histogram(t, metrics.MinRuntimeWait)
	if waits-waitsBefore != 1 || waited-waitedBefore != 110 {
		t.Errorf("wait on protection: %d samples summing %.0fs, want 1 of 110s", waits-waitsBefore, waited-waitedBefore)
	}
}
