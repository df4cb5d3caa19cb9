package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// builtinRows measures the built-in scenario and returns its rows by checkpointing and
// protection name.
func builtinRows(t *testing.T) (map[[2]string]row, []byte) {
	t.Helper()
	s, _ := scenarioNamed("builtin")
	tables, err := measure(context.Background(), []scenario{s}, 2)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[[2]string]row{}
	for _, r := range tables[0].rows {
		rows[[2]string{r.checkpoints, r.protection}] = r
	}
	var out bytes.Buffer
	tables[0].write(&out)
	return rows, out.Bytes()
}

// The claims docs/minruntime.md makes from the built-in scenario's table.
func TestBuiltinOutcomes(t *testing.T) {
	rows, _ := builtinRows(t)
	get := func(checkpoints, protection string) row {
		t.Helper()
		r, ok := rows[[2]string{checkpoints, protection}]
		if !ok {
			t.Fatalf("no run with checkpoints %s under %s", checkpoints, protection)
		}
		return r
	}
	none, fixed := get("as written", "none"), get("as written", "fixed 45m")
	adaptive := get("as written", "adaptive 45m ×4 up to 4h")

	// Escalation wastes less than a fixed min-runtime, which wastes less than none, and no
	// job loses its run as often.
	if !(adaptive.wasted < fixed.wasted && fixed.wasted < none.wasted) {
		t.Errorf("wasted GPU-hours: adaptive %.1f, fixed %.1f, none %.1f; want them in that order, rising",
			adaptive.wasted/3600, fixed.wasted/3600, none.wasted/3600)
	}
	if !(adaptive.mostRunsLost < fixed.mostRunsLost && fixed.mostRunsLost < none.mostRunsLost) {
		t.Errorf("most evictions of one job: adaptive %d, fixed %d, none %d; want them in that order, rising",
			adaptive.mostRunsLost, fixed.mostRunsLost, none.mostRunsLost)
	}
	if adaptive.completed != adaptive.jobs || none.completed == none.jobs {
		t.Errorf("completed: adaptive %d of %d, none %d of %d; want every job with escalation, not without protection",
			adaptive.completed, adaptive.jobs, none.completed, none.jobs)
	}

	// The ≤ 10% target: what escalation wastes beyond the startups of the jobs that
	// completed is under a tenth of the unprotected run's; the whole of it is under a tenth
	// only when no research run is cut, which a base protection longer than the run gives.
	if adaptive.lost > none.lost/10 {
		t.Errorf("adaptive wastes %.1f GPU-h beyond startups, more than 10%% of none's %.1f", adaptive.lost/3600, none.lost/3600)
	}
	if whole := get("as written", "fixed 3h15m"); whole.wasted > none.wasted/10 || whole.evictions != 0 {
		t.Errorf("fixed 3h15m: wasted %.1f GPU-h with %d evictions; want no eviction and at most 10%% of none's %.1f",
			whole.wasted/3600, whole.evictions, none.wasted/3600)
	}

	// Without checkpoints a fixed min-runtime only delays the loss; an escalation that
	// protects the job's whole run after one eviction (×5: 3h45m ≥ 10m + 3h) saves it, where
	// ×4 (3h) falls 10 minutes short and cuts the run again.
	bare := func(protection string) row { return get("none", protection) }
	if bare("fixed 45m").wasted < bare("none").wasted {
		t.Errorf("without checkpoints fixed 45m wastes %.1f GPU-h, less than none's %.1f", bare("fixed 45m").wasted/3600, bare("none").wasted/3600)
	}
	if x5, x4 := bare("adaptive 45m ×5 up to 4h"), bare("adaptive 45m ×4 up to 4h"); x5.wasted >= x4.wasted || x5.mostRunsLost != 1 {
		t.Errorf("without checkpoints ×5 wastes %.1f GPU-h (most evictions of one job %d), ×4 %.1f; want ×5 less, each job evicted once",
			x5.wasted/3600, x5.mostRunsLost, x4.wasted/3600)
	}

	// A ceiling short of the whole run (3h < 10m + 3h) cuts a job without checkpoints at the
	// ceiling every time: it never finishes.
	if short := bare("adaptive 45m ×4 up to 3h"); short.completed == short.jobs {
		t.Errorf("without checkpoints, a 3h ceiling let all %d jobs complete", short.jobs)
	}

	// Every quota owner waits no longer than the longest protection it met, the victims'
	// grace period and two cycles, in every run.
	for key, r := range rows {
		for _, o := range r.owners {
			if o.started && o.max > o.bound {
				t.Errorf("%v: %s waited up to %s, more than %s", key, o.queue, report.ClockTime(o.max), report.ClockTime(o.bound))
			}
		}
	}
}

// The table is the same every time, even with runs side by side.
func TestOutcomesAreDeterministic(t *testing.T) {
	_, first := builtinRows(t)
	_, second := builtinRows(t)
	if !bytes.Equal(first, second) {
		t.Fatalf("two measurements differ:\n%s\n%s", first, second)
	}
	for _, want := range []string{"| as written | adaptive 45m ×4 up to 4h |", "prod wait: mean / max (longest protection met)"} {
		if !bytes.Contains(first, []byte(want)) {
			t.Errorf("the table lacks %q:\n%s", want, first)
		}
	}
}
