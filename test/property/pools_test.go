package property

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// poolPairs is how many pairs of seeds run as two node pools of one cluster.
const poolPairs = 100

// TestNodePoolsScheduleAsIfAlone runs two generated clusters as node pools a and b of one
// cluster, each pool's scheduler with its own configuration (its own min-runtime defaults and
// resolve method), and each cluster alone. Pools share nothing a scheduler may use, so each
// pool's timeline must be the one its cluster has alone: the same binds, on the same nodes,
// evictions, starts and completions, at the same times. A scheduler that saw the other
// pool's nodes, queues or jobs, or protected with the other's defaults, would differ. The
// runs alone are judged by the oracle, so the shared timeline keeps every property too.
func TestNodePoolsScheduleAsIfAlone(t *testing.T) {
	for pair := uint64(1); pair <= poolPairs; pair++ {
		t.Run(fmt.Sprintf("seeds=%d,%d", pair, pair+1000), func(t *testing.T) {
			a, b := Generate(pair).InPool("a"), Generate(pair+1000).InPool("b")
			// One simulated cluster: one cycle period, and one --max-consolidation-preemptees,
			// a flag of the scheduler, not of a pool's configuration.
			b.Period, b.MaxConsolidationPreemptees = a.Period, a.MaxConsolidationPreemptees
			until := max(a.Horizon, b.Horizon)
			run := func(scenario string, opts sim.Options) *report.Result {
				sc, err := input.Parse([]byte(scenario))
				if err != nil {
					t.Fatalf("generated scenario does not parse: %v", err)
				}
				opts.Until, opts.Period, opts.NodePoolLabelKey, opts.MaxConsolidationPreemptees = until, a.Period, PoolLabel, a.MaxConsolidationPreemptees
				r, err := sim.Run(context.Background(), sc, opts)
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			together := run(a.ScenarioYAML()+b.ScenarioYAML(), sim.Options{
				PoolConfigs:     map[string][]byte{"a": []byte(a.ConfigYAML()), "b": []byte(b.ConfigYAML())},
				VerifySnapshots: true,
			})
			for _, s := range []*Scenario{a, b} {
				alone := run(s.ScenarioYAML(), sim.Options{Config: []byte(s.ConfigYAML())})
				if failures, _ := Judge(s, alone); len(failures) > 0 {
					t.Errorf("pool %s alone (seed %d) breaks properties, first: %s", s.Pool, s.Seed, failures[0])
				}
				var shared []report.Event
				for _, e := range together.Events {
					if e.Pool == s.Pool {
						shared = append(shared, e)
					}
				}
				if len(alone.Events) == 0 {
					t.Fatalf("pool %s alone did nothing: the comparison would prove nothing", s.Pool)
				}
				if diff := cmp.Diff(alone.Events, shared); diff != "" {
					t.Errorf("pool %s decides otherwise beside pool %s than alone (seed %d; -alone +together):\n%s",
						s.Pool, map[string]string{"a": "b", "b": "a"}[s.Pool], s.Seed, diff)
				}
			}
			if n := len(together.Pools); n != 2 {
				t.Fatalf("the shared cluster ran %d schedulers, want one per pool", n)
			}
		})
	}
}
