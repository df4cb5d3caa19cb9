package sim_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/internal/simtest"
)

// A scenario's PodGroup may say how often the job was evicted before (status.evictions, as
// kubectl kai snapshot writes it): with escalation on, its first run in the simulation is
// protected the longer time. When the manifest says the last one was is an absolute time
// the simulation does not use: it is dropped as the scenario is read, so that the
// simulation's own evictions count on after it.
func TestScenarioEvictionCountEscalatesProtection(t *testing.T) {
	config := `actions: "allocate, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: proportion
  - name: minruntime
    arguments: {defaultReclaimMinRuntime: 45m, escalationFactor: "4", escalationCeiling: 4h}
  - name: predicates
`
	firstEviction := func(t *testing.T, scenario string) float64 {
		t.Helper()
		sc, err := input.Parse([]byte(scenario))
		if err != nil {
			t.Fatal(err)
		}
		result, err := sim.Run(context.Background(), sc, sim.Options{Until: 10 * time.Hour, Config: []byte(config)})
		if err != nil {
			t.Fatal(err)
		}
		times := simtest.EvictionTimes(result)["research/pretrain-0"]
		if len(times) == 0 {
			t.Fatal("pretrain-0 was never evicted")
		}
		return times[0]
	}
	builtin := string(input.BuiltinScenario())
	counted := strings.Replace(builtin, "  queue: research\n  priorityClassName: train\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: pretrain-0-0",
		"  queue: research\n  priorityClassName: train\nstatus:\n  evictions: {total: 1, reclaim: 1, last: \"2030-01-01T00:00:00.000000Z\"}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: pretrain-0-0", 1)
	if counted == builtin {
		t.Fatal("the built-in scenario's pretrain-0 changed shape")
	}
	if got := firstEviction(t, builtin); got != (45 * time.Minute).Seconds() {
		t.Errorf("never evicted before: first evicted at %.0f s, want at its 45m", got)
	}
	if got := firstEviction(t, counted); got != (3 * time.Hour).Seconds() {
		t.Errorf("evicted once before: first evicted at %.0f s, want at 45m × 4 = 3h", got)
	}
	sc, err := input.Parse([]byte(counted))
	if err != nil {
		t.Fatal(err)
	}
	for _, job := range sc.Jobs {
		if e := job.Group.Status.Evictions; e != nil && (e.Total != 1 || !e.Last.IsZero()) {
			t.Errorf("%s: read as %+v, want the count 1 without its time", job.Group.Name, e)
		}
	}
}
