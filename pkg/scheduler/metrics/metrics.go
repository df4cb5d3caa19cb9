// Package metrics defines the scheduler's Prometheus metrics, registered with
// controller-runtime's registry so the manager serves them on --listen-address /metrics.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// CycleDuration is how long scheduling cycles take, snapshot included.
	CycleDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "kai_scheduler_cycle_duration_seconds", Help: "Duration of scheduling cycles.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 14),
	})
	// Binds counts pods bound.
	Binds = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kai_scheduler_binds_total", Help: "Pods bound to nodes.",
	})
	// BindErrors counts binds the API server refused, for instance a pod bound already.
	BindErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kai_scheduler_bind_errors_total", Help: "Binds the API server refused.",
	})
	// Evictions counts pods evicted, by action.
	Evictions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kai_scheduler_evictions_total", Help: "Pods evicted, by action (reclaim, preempt).",
	}, []string{"action"})
	// MinRuntimeRefusals counts victims refused for a preemptor because min-runtime still
	// protected them, by action.
	MinRuntimeRefusals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kai_scheduler_min_runtime_refusals_total",
		Help: "Victims refused to a preemptor because min-runtime still protected them, by action (reclaim, preempt).",
	}, []string{"action"})
	// PendingJobs is the number of jobs left pending by the last cycle.
	PendingJobs = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "kai_scheduler_pending_jobs", Help: "Jobs left pending by the last cycle.",
	})
	// InvalidQueues is the number of queues that cannot be scheduled (orphans, cycles).
	InvalidQueues = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "kai_scheduler_invalid_queues", Help: "Queues that cannot be scheduled because their parent is missing or loops.",
	})
)

func init() {
	ctrlmetrics.Registry.MustRegister(CycleDuration, Binds, BindErrors, Evictions, MinRuntimeRefusals, PendingJobs, InvalidQueues)
}
