package explain_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
)

// A job's own annotation shortens what its queue gives it: explain shows the shorter value,
// where it came from, and what the queues would have given; a longer one is named as
// declined, the queue's value standing.
func TestExplainShowsAJobsOwnMinRuntime(t *testing.T) {
	thirty := &metav1.Duration{Duration: 30 * time.Minute}
	for _, c := range []struct {
		name, value string
		want        []string
	}{{
		name: "shortened", value: "5m",
		want: []string{
			"5m0s from the job's annotation kai.scheduler/reclaim-min-runtime: protected until 2026-01-01T12:03:00Z (3m0s from now)",
			"resolved: team sets reclaimMinRuntime 30m0s → the job's annotation kai.scheduler/reclaim-min-runtime shortens it to 5m0s",
		},
	}, {
		name: "declined", value: "1h",
		want: []string{
			"30m0s from queue team: protected until 2026-01-01T12:28:00Z (28m0s from now)",
			"Note: annotation kai.scheduler/reclaim-min-runtime=1h0m0s is not below the 30m0s against reclaimers from outside team from queue team: not honoured (it may only shorten).",
		},
	}} {
		t.Run(c.name, func(t *testing.T) {
			out := explainTeamJob(t, nil, thirty, scheduling.ReclaimMinRuntimeAnnotation, c.value)
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q", w)
				}
			}
			if t.Failed() {
				t.Logf("output:\n%s", out)
			}
		})
	}
}
