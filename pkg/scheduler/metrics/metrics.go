package metrics

import (
	"sync"

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
	// protected them, by action: once per victim and cycle for each kind of waiting job
	// (jobs alike in queue, priority and requests are asked about once).
	MinRuntimeRefusals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kai_scheduler_min_runtime_refusals_total",
		Help: "Victims refused to a preemptor because min-runtime still protected them, by action (reclaim, preempt); once per victim, kind of waiting job and cycle.",
	}, []string{"action"})
	// RuntimeAtEviction is how long the evicted pod's job had run, counted from the start
	// min-runtime trusts, by action: the distribution a min-runtime is chosen against.
	RuntimeAtEviction = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kai_scheduler_runtime_at_eviction_seconds",
		Help:    "How long the evicted pod's job had run when it was evicted, by action (reclaim, preempt).",
		Buckets: []float64{60, 300, 600, 1800, 3600, 2 * 3600, 4 * 3600, 8 * 3600, 24 * 3600},
	}, []string{"action"})
	// ProtectedJobs is, per queue and action, the running jobs that min-runtime protects now.
	// For reclaim a job counts when it is protected against some reclaimer: with the lca
	// method the value depends on where the reclaimer sits.
	ProtectedJobs = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kai_scheduler_min_runtime_protected_jobs",
		Help: "Running jobs min-runtime protects now, by queue and action (reclaim, preempt).",
	}, []string{"queue", "action"})
	// MinRuntimeWait is how long pending jobs were held back by min-runtime: from the first
	// cycle a protection blocked them to the first cycle none did.
	MinRuntimeWait = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "kai_scheduler_min_runtime_wait_seconds",
		Help:    "How long pending jobs were held back by min-runtime protection of the jobs that could make room.",
		Buckets: []float64{10, 30, 60, 300, 600, 1800, 3600, 2 * 3600, 4 * 3600},
	})
	// PendingJobs is the number of jobs left pending by the last cycle.
	PendingJobs = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "kai_scheduler_pending_jobs", Help: "Jobs left pending by the last cycle.",
	})
	// InvalidQueues is the number of queues that cannot be scheduled (orphans, cycles).
	InvalidQueues = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "kai_scheduler_invalid_queues", Help: "Queues that cannot be scheduled because their parent is missing or loops.",
	})
)

// The writes that carry decisions to the API server, off the cycle.
var (
	// StatusWrites counts the status updater's writes by kind (start-stamp, podgroup-status,
	// queue-status) and result (ok, error: retried after a backoff).
	StatusWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kai_scheduler_status_writes_total",
		Help: "Writes of start stamps, PodGroup and Queue statuses, by kind and result (errors are retried).",
	}, []string{"kind", "result"})
	// StatusWritesGivenUp counts writes never made: refused as invalid, or start stamps left
	// when the shutdown grace ran out. The next leader stamps such jobs from their pods' start.
	StatusWritesGivenUp = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kai_scheduler_status_writes_given_up_total",
		Help: "Status writes given up, by kind: refused as invalid, or start stamps left unwritten at shutdown.",
	}, []string{"kind"})
	// DecisionsDropped counts binds, evictions and nominations decided but never sent,
	// because the scheduler stopped first or what they counted on failed.
	DecisionsDropped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kai_scheduler_decisions_dropped_total",
		Help: "Decisions (bind, evict, nominate, withdraw, stamp) never sent: the scheduler stopped, or the write they counted on failed.",
	}, []string{"call", "cause"})
)

// all are the scheduler's metrics, as registered.
var all = []prometheus.Collector{CycleDuration, Binds, BindErrors, Evictions, MinRuntimeRefusals, RuntimeAtEviction,
	ProtectedJobs, MinRuntimeWait, PendingJobs, InvalidQueues, StatusWrites, StatusWritesGivenUp, DecisionsDropped}

// registered is the node pool the metrics were registered for, once per process.
var (
	registerOnce sync.Once
	registered   string
)

// Register serves the metrics on controller-runtime's registry, labelled node_pool=pool when
// the scheduler serves a named pool, so that the shards' series stay apart wherever they are
// collected. The metrics are the process's: a second scheduler in the same process (tests)
// shares them, and Register returns the pool they were registered for.
func Register(pool string) string {
	registerOnce.Do(func() {
		registered = pool
		var registerer prometheus.Registerer = ctrlmetrics.Registry
		if pool != "" {
			registerer = prometheus.WrapRegistererWith(prometheus.Labels{"node_pool": pool}, registerer)
		}
		registerer.MustRegister(all...)
	})
	return registered
}
