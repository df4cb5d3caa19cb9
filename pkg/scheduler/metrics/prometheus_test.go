package metrics

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// series reads every series g gathers as name{label="value",...} (labels sorted), with a
// histogram as its _count and _sum.
func series(t *testing.T, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	read := map[string]float64{}
	for _, family := range families {
		for _, m := range family.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			slices.Sort(labels)
			key := func(suffix string) string {
				return family.GetName() + suffix + "{" + strings.Join(labels, ",") + "}"
			}
			switch {
			case m.GetCounter() != nil:
				read[key("")] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				read[key("")] = m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				read[key("_count")] = float64(m.GetHistogram().GetSampleCount())
				read[key("_sum")] = m.GetHistogram().GetSampleSum()
			}
		}
	}
	return read
}

func newRegistered(t *testing.T, registry *prometheus.Registry, pool string) *Prometheus {
	t.Helper()
	p, err := NewPrometheus(registry, pool)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Each thing the scheduler records lands in the metric the dashboard and the docs name,
// under the labels they name.
func TestPrometheusRecordsEachMetricUnderItsNameAndLabels(t *testing.T) {
	registry := prometheus.NewRegistry()
	p := newRegistered(t, registry, "")
	p.CycleEnded(2*time.Second, 3, 1)
	p.MinRuntimeRefused("reclaim", 4)
	p.ProtectionWaitEnded(30 * time.Second)
	p.ProtectedJobs(map[ProtectedSeries]int{{Queue: "team", Action: "preempt"}: 2}, map[ProtectedSeries]int{{Queue: "team", Action: "preempt"}: 1})
	p.QueueShares(map[QueueResource]QueueAmounts{{Queue: "team", Resource: "gpu"}: {Allocated: 16, Deserved: 16, FairShare: 16.5}})
	p.RunEnded("reclaim")
	p.Bound()
	p.BindFailed()
	p.Evicted("reclaim", time.Minute, true)
	p.Evicted("preempt", 0, false) // a runtime not known is not observed
	p.StaleGangEvicted()
	p.StatusWritten("start-stamp", false)
	p.StatusWritten("queue-status", true)
	p.StatusWritesGivenUp("start-stamp", 2)
	p.DecisionDropped("bind", "stopped")
	p.TopologyWaiting(map[TopologySeries]int{{Topology: "dc", Level: "rack"}: 3, {Topology: "dc", Level: "zone"}: 1})
	p.TopologyWaiting(map[TopologySeries]int{{Topology: "dc", Level: "rack"}: 2}) // the zone's job left: its series goes
	want := map[string]float64{
		`kai_scheduler_topology_waiting_jobs{level="rack",topology="dc"}`:         2,
		"kai_scheduler_cycle_duration_seconds_count{}":                            1,
		"kai_scheduler_cycle_duration_seconds_sum{}":                              2,
		"kai_scheduler_pending_jobs{}":                                            3,
		"kai_scheduler_invalid_queues{}":                                          1,
		`kai_scheduler_min_runtime_refusals_total{action="reclaim"}`:              4,
		"kai_scheduler_min_runtime_wait_seconds_count{}":                          1,
		"kai_scheduler_min_runtime_wait_seconds_sum{}":                            30,
		`kai_scheduler_min_runtime_protected_jobs{action="preempt",queue="team"}`: 2,
		`kai_scheduler_min_runtime_escalated_jobs{action="preempt",queue="team"}`: 1,
		`kai_scheduler_runs_ended_total{action="reclaim"}`:                        1,
		`kai_scheduler_queue_allocated{queue="team",resource="gpu"}`:              16,
		`kai_scheduler_queue_deserved{queue="team",resource="gpu"}`:               16,
		`kai_scheduler_queue_fair_share{queue="team",resource="gpu"}`:             16.5,
		"kai_scheduler_binds_total{}":                                             1,
		"kai_scheduler_bind_errors_total{}":                                       1,
		`kai_scheduler_evictions_total{action="reclaim"}`:                         1,
		`kai_scheduler_evictions_total{action="preempt"}`:                         1,
		"kai_scheduler_stale_gang_evictions_total{}":                              1,
		`kai_scheduler_runtime_at_eviction_seconds_count{action="reclaim"}`:       1,
		`kai_scheduler_runtime_at_eviction_seconds_sum{action="reclaim"}`:         60,
		`kai_scheduler_status_writes_total{kind="start-stamp",result="ok"}`:       1,
		`kai_scheduler_status_writes_total{kind="queue-status",result="error"}`:   1,
		`kai_scheduler_status_writes_given_up_total{kind="start-stamp"}`:          2,
		`kai_scheduler_decisions_dropped_total{call="bind",cause="stopped"}`:      1,
	}
	if got := series(t, registry); !maps.Equal(got, want) {
		t.Errorf("gathered %v,\nwant %v", got, want)
	}
}

// The protected-jobs gauge shows the queues with protected jobs now: a series whose jobs
// are no longer protected goes, rather than stay at its last value.
func TestProtectedJobsDeletesTheSeriesOfQueuesNoLongerProtected(t *testing.T) {
	registry := prometheus.NewRegistry()
	p := newRegistered(t, registry, "")
	team, other := ProtectedSeries{"team", "preempt"}, ProtectedSeries{"other", "reclaim"}
	p.ProtectedJobs(map[ProtectedSeries]int{team: 2, other: 1}, map[ProtectedSeries]int{other: 1})
	p.ProtectedJobs(map[ProtectedSeries]int{team: 1}, nil)
	want := map[string]float64{`kai_scheduler_min_runtime_protected_jobs{action="preempt",queue="team"}`: 1}
	got := series(t, registry)
	maps.DeleteFunc(got, func(name string, _ float64) bool {
		return !strings.HasPrefix(name, "kai_scheduler_min_runtime_protected_jobs{") &&
			!strings.HasPrefix(name, "kai_scheduler_min_runtime_escalated_jobs{")
	})
	if !maps.Equal(got, want) {
		t.Errorf("gathered %v after other's protection ended, want team's alone: %v", got, want)
	}
}

// The queue gauges show the queues of the last cycle: a queue deleted (or no longer valid)
// loses its series rather than keep its last share.
func TestQueueSharesDeleteTheSeriesOfQueuesGone(t *testing.T) {
	registry := prometheus.NewRegistry()
	p := newRegistered(t, registry, "")
	team, gone := QueueResource{"team", "gpu"}, QueueResource{"gone", "gpu"}
	p.QueueShares(map[QueueResource]QueueAmounts{team: {Allocated: 2, Deserved: 4, FairShare: 6}, gone: {Allocated: 1, Deserved: 1, FairShare: 1}})
	p.QueueShares(map[QueueResource]QueueAmounts{team: {Allocated: 3, Deserved: 4, FairShare: 8}})
	want := map[string]float64{
		`kai_scheduler_queue_allocated{queue="team",resource="gpu"}`:  3,
		`kai_scheduler_queue_deserved{queue="team",resource="gpu"}`:   4,
		`kai_scheduler_queue_fair_share{queue="team",resource="gpu"}`: 8,
	}
	got := series(t, registry)
	maps.DeleteFunc(got, func(name string, _ float64) bool { return !strings.HasPrefix(name, "kai_scheduler_queue_") })
	if !maps.Equal(got, want) {
		t.Errorf("gathered %v after queue gone was deleted, want team's alone: %v", got, want)
	}
}

// A pool's scheduler labels every series with its pool, so that shards scraped into one
// Prometheus stay apart: two pools' schedulers register side by side, a second scheduler
// of the same pool is refused, and one that stops leaves room for the next.
func TestSchedulersRegisterTheirOwnSeriesPerPool(t *testing.T) {
	registry := prometheus.NewRegistry()
	a100, h100 := newRegistered(t, registry, "a100"), newRegistered(t, registry, "h100")
	a100.Bound()
	h100.Bound()
	h100.Bound()
	got := series(t, registry)
	if got[`kai_scheduler_binds_total{node_pool="a100"}`] != 1 || got[`kai_scheduler_binds_total{node_pool="h100"}`] != 2 {
		t.Errorf("binds per pool: %v, want 1 for a100 and 2 for h100", got)
	}
	for name := range got {
		if !strings.Contains(name, "node_pool=") {
			t.Errorf("%s has no node_pool label", name)
		}
	}
	if _, err := NewPrometheus(registry, "a100"); err == nil {
		t.Fatal("a second scheduler of pool a100 registered beside the first")
	}
	a100.Unregister()
	again := newRegistered(t, registry, "a100")
	again.Bound()
	if got := series(t, registry)[`kai_scheduler_binds_total{node_pool="a100"}`]; got != 1 {
		t.Errorf("the restarted a100 scheduler's binds: %v, want its own 1", got)
	}
}
