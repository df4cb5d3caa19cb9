package simtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// Example is the file name of docs/examples/sim, found from the directory the test runs in
// (its package's), whichever package of the simulator that is.
func Example(t testing.TB, name string) []byte {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		if filepath.Dir(dir) == dir {
			t.Fatalf("no go.mod above the test's directory to find docs/examples/sim/%s in", name)
		}
		dir = filepath.Dir(dir)
	}
	data, err := os.ReadFile(filepath.Join(dir, "docs", "examples", "sim", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// EvictionTimes maps each evicted job to the times it was evicted.
func EvictionTimes(r *report.Result) map[string][]float64 {
	times := map[string][]float64{}
	for _, e := range r.Events {
		if e.Type == report.EventEvict {
			times[e.PodGroup] = append(times[e.PodGroup], e.Time)
		}
	}
	return times
}
