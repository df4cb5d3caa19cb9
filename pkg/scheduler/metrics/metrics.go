package metrics

import "github.com/prometheus/client_golang/prometheus"

// collectors are the scheduler's metrics, one set per scheduler (see Prometheus); their
// names are what the Grafana dashboard (deployments/grafana) queries.
type collectors struct {
	// cycleDuration is how long scheduling cycles take, snapshot included.
	cycleDuration prometheus.Histogram
	// binds counts pods bound.
	binds prometheus.Counter
	// bindErrors counts binds the API server refused, for instance a pod bound already.
	bindErrors prometheus.Counter
	// evictions counts pods evicted, by action.
	evictions *prometheus.CounterVec
	// staleGangEvictions counts jobs evicted whole for staying below their minimum longer
	// than their staleness grace period.
	staleGangEvictions prometheus.Counter
	// minRuntimeRefusals counts victims refused for a preemptor because min-runtime still
	// protected them, by action: once per victim and cycle for each kind of waiting job
	// (jobs alike in queue, priority and requests are asked about once).
	minRuntimeRefusals *prometheus.CounterVec
	// preemptionDelayHeld counts jobs that wanted to evict others but whose preemption delay
	// had not elapsed, by action: once per job and cycle.
	preemptionDelayHeld *prometheus.CounterVec
	// runtimeAtEviction is how long the evicted pod's job had run, counted from the start
	// min-runtime trusts, by action: the distribution a min-runtime is chosen against.
	runtimeAtEviction *prometheus.HistogramVec
	// protectedJobs is, per queue and action, the running jobs that min-runtime protects now.
	// For reclaim a job counts when it is protected against some reclaimer: with the lca
	// method the value depends on where the reclaimer sits.
	protectedJobs *prometheus.GaugeVec
	// escalatedJobs is, per queue and action, the protected jobs whose protection escalation
	// lengthened for their past evictions.
	escalatedJobs *prometheus.GaugeVec
	// queueAllocated, queueDeserved and queueFairShare are, per queue and quota resource, what
	// its jobs hold, what its quota earns (quota capped by request and limit, -1 all its parent
	// has) and its fair share, as the last cycle divided them: a queue below its fair share may
	// reclaim, one above it may be reclaimed from.
	queueAllocated, queueDeserved, queueFairShare *prometheus.GaugeVec
	// runsEnded counts the runs preempt and reclaim ended (every running pod of a job evicted
	// in one decision), by action: what each job's status.evictions counts, and escalation
	// lengthens protection by.
	runsEnded *prometheus.CounterVec
	// minRuntimeWait is how long pending jobs were held back by min-runtime: from the first
	// cycle a protection blocked them to the first cycle none did.
	minRuntimeWait prometheus.Histogram
	// pendingJobs is the number of jobs left pending by the last cycle; topologyWaiting
	// those of them with a topology constraint, per topology and level.
	pendingJobs     prometheus.Gauge
	topologyWaiting *prometheus.GaugeVec
	// invalidQueues is the number of queues that cannot be scheduled (orphans, cycles).
	invalidQueues prometheus.Gauge

	// The writes that carry decisions to the API server, off the cycle.

	// statusWrites counts the status updater's writes by kind (start-stamp, podgroup-status,
	// queue-status) and result (ok, error: retried after a backoff).
	statusWrites *prometheus.CounterVec
	// statusWritesGivenUp counts writes never made: refused as invalid, or start stamps left
	// when the shutdown grace ran out. The next leader stamps such jobs from their pods' start.
	statusWritesGivenUp *prometheus.CounterVec
	// decisionsDropped counts binds, evictions and nominations decided but never sent,
	// because the scheduler stopped first or what they counted on failed.
	decisionsDropped *prometheus.CounterVec
}

// newCollectors makes a scheduler's collectors, unregistered.
func newCollectors() collectors {
	return collectors{
		cycleDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "kai_scheduler_cycle_duration_seconds", Help: "Duration of scheduling cycles.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 14),
		}),
		binds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kai_scheduler_binds_total", Help: "Pods bound to nodes.",
		}),
		bindErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kai_scheduler_bind_errors_total", Help: "Binds the API server refused.",
		}),
		evictions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kai_scheduler_evictions_total", Help: "Pods evicted, by action (reclaim, preempt).",
		}, []string{"action"}),
		staleGangEvictions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kai_scheduler_stale_gang_evictions_total",
			Help: "Jobs evicted whole by stalegangeviction: running below their minimum for longer than their staleness grace period.",
		}),
		minRuntimeRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kai_scheduler_min_runtime_refusals_total",
			Help: "Victims refused to a preemptor because min-runtime still protected them, by action (reclaim, preempt); once per victim, kind of waiting job and cycle.",
		}, []string{"action"}),
		preemptionDelayHeld: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kai_scheduler_preemption_delay_held_total",
			Help: "Pending jobs that would have looked for victims but whose preemption delay had not elapsed, by action (reclaim, preempt); once per job and cycle.",
		}, []string{"action"}),
		runtimeAtEviction: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "kai_scheduler_runtime_at_eviction_seconds",
			Help:    "How long the evicted pod's job had run when it was evicted, by action (reclaim, preempt).",
			Buckets: []float64{60, 300, 600, 1800, 3600, 2 * 3600, 4 * 3600, 8 * 3600, 24 * 3600},
		}, []string{"action"}),
		protectedJobs: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kai_scheduler_min_runtime_protected_jobs",
			Help: "Running jobs min-runtime protects now, by queue and action (reclaim, preempt).",
		}, []string{"queue", "action"}),
		escalatedJobs: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kai_scheduler_min_runtime_escalated_jobs",
			Help: "Running jobs min-runtime protects now for longer than their queues say, escalated for their past evictions, by queue and action (reclaim, preempt).",
		}, []string{"queue", "action"}),
		queueAllocated: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kai_scheduler_queue_allocated",
			Help: "What a queue's jobs hold (bound, running or promised), by queue and resource (gpu in devices, cpu in cores, memory in bytes).",
		}, []string{"queue", "resource"}),
		queueDeserved: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kai_scheduler_queue_deserved",
			Help: "What a queue's quota earns: its quota (-1: all its parent has) capped by its request and limit, by queue and resource (gpu in devices, cpu in cores, memory in bytes).",
		}, []string{"queue", "resource"}),
		queueFairShare: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kai_scheduler_queue_fair_share",
			Help: "A queue's fair share: its deserved quota and its part of what is left over the quotas beside it, by queue and resource (gpu in devices, cpu in cores, memory in bytes).",
		}, []string{"queue", "resource"}),
		runsEnded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kai_scheduler_runs_ended_total",
			Help: "Job runs ended by eviction (every running pod of the job evicted by one decision), by action (reclaim, preempt); each is counted in the job's status.evictions.",
		}, []string{"action"}),
		minRuntimeWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "kai_scheduler_min_runtime_wait_seconds",
			Help:    "How long pending jobs were held back by min-runtime protection of the jobs that could make room.",
			Buckets: []float64{10, 30, 60, 300, 600, 1800, 3600, 2 * 3600, 4 * 3600},
		}),
		pendingJobs: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kai_scheduler_pending_jobs", Help: "Jobs left pending by the last cycle.",
		}),
		topologyWaiting: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kai_scheduler_topology_waiting_jobs",
			Help: "Jobs left pending by the last cycle that must (or would rather) run inside one domain of a topology level, by topology and level.",
		}, []string{"topology", "level"}),
		invalidQueues: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kai_scheduler_invalid_queues", Help: "Queues that cannot be scheduled because their parent is missing or loops.",
		}),
		statusWrites: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kai_scheduler_status_writes_total",
			Help: "Writes of start stamps, PodGroup and Queue statuses, by kind and result (errors are retried).",
		}, []string{"kind", "result"}),
		statusWritesGivenUp: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kai_scheduler_status_writes_given_up_total",
			Help: "Status writes given up, by kind: refused as invalid, or start stamps left unwritten at shutdown.",
		}, []string{"kind"}),
		decisionsDropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kai_scheduler_decisions_dropped_total",
			Help: "Decisions (bind, evict, nominate, withdraw, stamp) never sent: the scheduler stopped, or the write they counted on failed.",
		}, []string{"call", "cause"}),
	}
}

// all lists the collectors, as registered.
func (c collectors) all() []prometheus.Collector {
	return []prometheus.Collector{c.cycleDuration, c.binds, c.bindErrors, c.evictions, c.minRuntimeRefusals, c.preemptionDelayHeld, c.staleGangEvictions,
		c.runtimeAtEviction, c.protectedJobs, c.escalatedJobs, c.queueAllocated, c.queueDeserved, c.queueFairShare, c.runsEnded, c.minRuntimeWait, c.pendingJobs, c.topologyWaiting, c.invalidQueues,
		c.statusWrites, c.statusWritesGivenUp, c.decisionsDropped}
}
