package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// The protected-jobs gauge shows the queues with protected jobs now: a series whose jobs
// are no longer protected goes, rather than stay at its last value.
func TestProtectedJobsDeletesTheSeriesOfQueuesNoLongerProtected(t *testing.T) {
	p := &Prometheus{}
	team, other := ProtectedSeries{"team", "preempt"}, ProtectedSeries{"other", "reclaim"}
	p.ProtectedJobs(map[ProtectedSeries]int{team: 2, other: 1})
	if got := testutil.ToFloat64(ProtectedJobs.WithLabelValues("team", "preempt")); got != 2 {
		t.Fatalf("team/preempt = %v, want 2", got)
	}
	p.ProtectedJobs(map[ProtectedSeries]int{team: 1})
	if got := testutil.CollectAndCount(ProtectedJobs); got != 1 {
		t.Fatalf("%d series after other's protection ended, want team's alone", got)
	}
	if got := testutil.ToFloat64(ProtectedJobs.WithLabelValues("team", "preempt")); got != 1 {
		t.Fatalf("team/preempt = %v, want 1", got)
	}
}
