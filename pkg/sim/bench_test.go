package sim_test

import (
	"context"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
)

// benchHorizon is the virtual time the benchmark simulates.
var benchHorizon = 24 * time.Hour

// BenchmarkDayOf2000Jobs simulates input.SyntheticDay for 24 hours of virtual time with the
// built-in configuration. Parsing is setup and not timed.
func BenchmarkDayOf2000Jobs(b *testing.B) {
	trace := input.SyntheticDay()
	b.ReportAllocs()
	for range b.N {
		b.StopTimer()
		sc, err := input.Parse(trace)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		result, err := sim.Run(context.Background(), sc, sim.Options{Until: benchHorizon})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(result.Totals.Completed), "completed")
		b.ReportMetric(float64(result.Totals.Evictions), "evictions")
	}
}
