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

// Issue 38's reproduction (notebook-beside-a-quota.yaml): production reclaims its 16 GPUs
// when research's protection ends, 88 s in, though a notebook waits in default-queue; the
// notebook gets a GPU only when production is done, and nothing is evicted again for it. The
// report gives production's fair share, 16 throughout. With the default queues' quota at -1
// (the chart before), the outcome is the same and the run reports the over-subscription.
func TestANotebookDoesNotCancelAQuota(t *testing.T) {
	example := string(simtest.Example(t, "notebook-beside-a-quota.yaml"))
	documents := strings.Split(example, "\n---\n")
	for i, d := range documents {
		if strings.Contains(d, "kind: Queue\nmetadata: {name: default-") {
			documents[i] = strings.ReplaceAll(d, "quota: 0,", "quota: -1,")
		}
	}
	unlimited := strings.Join(documents, "\n---\n")
	if strings.Count(unlimited, "quota: -1,") != strings.Count(example, "quota: -1,")+6 {
		t.Fatal("the example's default queues do not have a quota of 0 for every resource")
	}
	for name, scenario := range map[string]string{"quota 0": example, "quota -1": unlimited} {
		t.Run(name, func(t *testing.T) {
			sc, err := input.Parse([]byte(scenario))
			if err != nil {
				t.Fatal(err)
			}
			result, err := sim.Run(context.Background(), sc, sim.Options{Until: 4 * time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			evictions := simtest.EvictionTimes(result)
			if got := evictions["research/pretrain"]; !slices.Equal(got, []float64{88, 88}) {
				t.Errorf("research evicted at %v, want its two pods at 88 s, when its 2m protection ends", got)
			}
			if len(evictions) != 1 {
				t.Errorf("evicted %v: nothing but research's gang, once", evictions)
			}
			starts := map[string]float64{}
			for _, j := range result.Jobs {
				if j.FirstStart != nil {
					starts[j.PodGroup] = *j.FirstStart
				}
			}
			if got := starts["production/serve"]; got != 118 {
				t.Errorf("production started at %v, want 118 s: when research's pods, given 30 s to stop, are gone", got)
			}
			if got, ok := starts["default/notebook"]; !ok || got < 118+2*3600 {
				t.Errorf("the notebook started at %v (%v), want after production's 2 hours: it is owed nothing", got, ok)
			}
			for _, q := range result.Totals.Queues {
				if q.Queue == "production" && (q.GPUFairShare == nil || *q.GPUFairShare != (report.Range{Min: 16, Max: 16})) {
					t.Errorf("production's GPU fair share over the run: %v, want 16", q.GPUFairShare)
				}
			}
			told := slices.ContainsFunc(result.Problems, func(p report.Problem) bool {
				return p.Kind == "Queue" && p.Name == "default-parent-queue" && p.Reason == "UnlimitedQuota" &&
					strings.Contains(p.Message, "beside it are owed their quotas (production 16 GPUs)")
			})
			if want := name == "quota -1"; told != want {
				t.Errorf("the over-subscription told: %v, want %v (problems: %+v)", told, want, result.Problems)
			}
			var text bytes.Buffer
			if err := report.WriteText(&text, result); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text.String(), "GPU fair share") {
				t.Errorf("the queue table gives no fair share:\n%s", text.String())
			}
		})
	}
}
