package explain_test

import (
	"strings"
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
)

// A running job's saved point is told as the victim search ranks it: its checkpoint within its
// run, the run's start for one before it, now for one in the future, its start without one;
// an unreadable checkpoint is named and counts as none. The job started two minutes ago.
func TestExplainTellsTheWorkAnEvictionWouldLose(t *testing.T) {
	for _, c := range []struct {
		name, checkpoint string // "": no annotation
		want             string
	}{
		{"no checkpoint", "",
			"no checkpoint reported (kai.scheduler/last-checkpoint-timestamp): an eviction now loses the work since its start at 2026-01-01T11:58:00Z (2m0s ago)."},
		{"within the run", "2026-01-01T11:59:00Z",
			"last checkpoint 2026-01-01T11:59:00Z (1m0s ago): an eviction now loses the work since then."},
		{"before the run", "2026-01-01T11:50:00Z",
			"last checkpoint 2026-01-01T11:50:00Z, before its current run started at 2026-01-01T11:58:00Z: it saved nothing of this run, and an eviction now loses the work since its start (2m0s)."},
		{"in the future", "2026-01-01T13:00:00Z",
			"last checkpoint 2026-01-01T13:00:00Z, in the future: it counts as now, as if an eviction now lost nothing."},
		{"unreadable", "yesterday",
			`Its checkpoint is ignored, as if it reported none: annotation kai.scheduler/last-checkpoint-timestamp: cannot parse "yesterday"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var annotations []string
			if c.checkpoint != "" {
				annotations = []string{scheduling.LastCheckpointTimestampAnnotation, c.checkpoint}
			}
			out := explainTeamJob(t, nil, nil, annotations...)
			for _, w := range []string{"Work at risk (among victims otherwise equal, the one that loses least is evicted first):", c.want} {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}
