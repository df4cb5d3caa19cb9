package sim_test

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// reclaimConfig is the built-in comparison's configuration with these minruntime arguments.
func reclaimConfig(arguments string) []byte {
	return []byte(`actions: "allocate, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: proportion
  - name: minruntime
    arguments: {` + arguments + `}
  - name: predicates
  - name: nodeplacement
`)
}

const (
	fixed45m  = `defaultReclaimMinRuntime: "45m"`
	escalated = `defaultReclaimMinRuntime: "45m", escalationFactor: "4", escalationCeiling: "4h"`
)

func queueOf(t *testing.T, r *report.Result, name string) report.QueueReport {
	t.Helper()
	for _, q := range r.Totals.Queues {
		if q.Queue == name {
			return q
		}
	}
	t.Fatalf("no queue %s in %+v", name, r.Totals.Queues)
	return report.QueueReport{}
}

// On the built-in scenario a fixed 45m lets prod reclaim research's jobs five times each;
// with escalation (×4, up to 4h) each is reclaimed once and its next run protected for 3h,
// which the report shows: the most evictions of one job, the protections lengthened, and
// prod's longest wait against the longest protection that held it back.
func TestEscalationIsReportedAndCompared(t *testing.T) {
	variants, err := sim.Compare(context.Background(), input.BuiltinScenario(), sim.Options{Until: sim.BuiltinUntil}, []report.Variant{
		{Name: "fixed", Config: reclaimConfig(fixed45m)}, {Name: "escalating", Config: reclaimConfig(escalated)},
	})
	if err != nil {
		t.Fatal(err)
	}
	fixed, esc := variants[0].Result, variants[1].Result
	// One pod per research job: every eviction ends a run.
	if fixed.Totals.RunsEnded != fixed.Totals.Evictions || fixed.Totals.MostRunsEnded != 5 || fixed.Totals.EscalatedRuns != 0 {
		t.Errorf("fixed: runs ended %d (evictions %d), most of one job %d, escalated %d; want 10, 10, 5, 0",
			fixed.Totals.RunsEnded, fixed.Totals.Evictions, fixed.Totals.MostRunsEnded, fixed.Totals.EscalatedRuns)
	}
	if esc.Totals.MostRunsEnded != 1 || esc.Totals.EscalatedRuns != 2 {
		t.Errorf("escalating: most of one job %d, escalated %d; want each research job evicted once and its next run escalated",
			esc.Totals.MostRunsEnded, esc.Totals.EscalatedRuns)
	}
	if got := esc.Pools[0].Escalation; got != "×4 per eviction, up to 4h0m0s" {
		t.Errorf("escalating: pool's escalation %q", got)
	}
	if got := fixed.Pools[0].Escalation; got != "" {
		t.Errorf("fixed: pool's escalation %q, want none", got)
	}
	// prod met research's 45m, then (escalating) the 3h of its next run, and waited no
	// longer than that, the victims' 30s grace period and two cycles.
	for _, c := range []struct {
		r       *report.Result
		longest time.Duration
	}{{fixed, 45 * time.Minute}, {esc, 3 * time.Hour}} {
		prod := queueOf(t, c.r, "prod")
		if got := time.Duration(prod.LongestProtectionMetSeconds) * time.Second; got != c.longest {
			t.Errorf("prod met a longest protection of %s, want %s", got, c.longest)
		}
		if bound := prod.LongestProtectionMetSeconds + 30 + 2; prod.MaxWaitSeconds > bound || prod.MaxWaitSeconds < prod.MeanWaitSeconds {
			t.Errorf("prod's max wait %vs: want at least its mean %vs and at most %vs", prod.MaxWaitSeconds, prod.MeanWaitSeconds, bound)
		}
	}

	var text bytes.Buffer
	if err := report.WriteComparison(&text, variants); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`most evictions of one job +5 +1 +-4`,
		`escalated protections +0 +2 +\+2`,
		`max wait, prod +0:42:01 +2:36:32 +\+1:54:31`,
		`research +2 +2 +2 +6\.7 +0:00:00 +0-16 +0:00:00 +1 +2`, // its queue table, with its fair share
	} {
		if !regexp.MustCompile(want).MatchString(text.String()) {
			t.Errorf("the comparison lacks %q:\n%s", want, text.String())
		}
	}
}

// Without escalation the comparison and the queue tables are as they were: no new rows.
func TestNoEscalationRowsWithoutEscalation(t *testing.T) {
	variants, err := sim.Compare(context.Background(), input.BuiltinScenario(), sim.Options{Until: sim.BuiltinUntil}, sim.BuiltinVariants())
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := report.WriteComparison(&text, variants); err != nil {
		t.Fatal(err)
	}
	for _, unwanted := range []string{"most evictions", "escalated", "max wait"} {
		if strings.Contains(text.String(), unwanted) {
			t.Errorf("the built-in comparison shows %q:\n%s", unwanted, text.String())
		}
	}
}

// A job running when the simulation ends shows its escalated protection as its status does.
func TestRunningJobShowsWhatItsProtectionWasEscalatedFrom(t *testing.T) {
	sc, err := input.Parse(input.BuiltinScenario())
	if err != nil {
		t.Fatal(err)
	}
	r, err := sim.Run(context.Background(), sc, sim.Options{Until: 2 * time.Hour, Config: reclaimConfig(escalated)})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range r.Jobs {
		if j.Queue != "research" {
			continue
		}
		if j.Protection == nil || len(j.Protection.Reclaim) != 1 {
			t.Fatalf("%s: protection %+v, want one reclaim entry", j.PodGroup, j.Protection)
		}
		if got := j.Protection.Reclaim[0]; got.MinRuntime != "3h0m0s" || got.EscalatedFrom != "45m0s" {
			t.Errorf("%s: reclaim protection %s escalated from %q, want 3h0m0s from 45m0s", j.PodGroup, got.MinRuntime, got.EscalatedFrom)
		}
		if j.RunsEnded != 1 || j.EscalatedRuns != 1 {
			t.Errorf("%s: runs ended %d, escalated %d; want 1, 1", j.PodGroup, j.RunsEnded, j.EscalatedRuns)
		}
	}
}
