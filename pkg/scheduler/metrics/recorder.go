package metrics

import "time"

// Recorder receives what the scheduler's metrics count, from the places that see it happen.
// Each method is one metric (or two that are always written together); its doc names them.
// Implementations are safe for concurrent use: the dispatcher's and the status updater's
// workers record from their own goroutines.
type Recorder interface {
	// CycleEnded: a scheduling cycle ended, took (snapshot included), and left pendingJobs
	// jobs pending and invalidQueues queues unschedulable (kai_scheduler_cycle_duration_seconds,
	// kai_scheduler_pending_jobs, kai_scheduler_invalid_queues).
	CycleEnded(took time.Duration, pendingJobs, invalidQueues int)
	// MinRuntimeRefused: a cycle's action refused victims because min-runtime still protected
	// them (kai_scheduler_min_runtime_refusals_total).
	MinRuntimeRefused(action string, victims int)
	// PreemptionDelayHeld: a cycle's action held back jobs that wanted to evict others, but
	// whose preemption delay had not elapsed (kai_scheduler_preemption_delay_held_total).
	PreemptionDelayHeld(action string, jobs int)
	// ProtectionWaitEnded: a pending job that min-runtime held back is held back no longer,
	// after waited (kai_scheduler_min_runtime_wait_seconds).
	ProtectionWaitEnded(waited time.Duration)
	// ProtectedJobs: per queue and action, the running jobs min-runtime protects now
	// (kai_scheduler_min_runtime_protected_jobs), and those of them whose protection
	// escalation lengthened (kai_scheduler_min_runtime_escalated_jobs). Each call replaces
	// the last: a series absent from a map has no job any more.
	ProtectedJobs(protected, escalated map[ProtectedSeries]int)
	// QueueShares: per queue and quota resource, what the queue's jobs hold, what its quota
	// earns and its fair share, as the latest cycle divided them (kai_scheduler_queue_allocated,
	// kai_scheduler_queue_deserved, kai_scheduler_queue_fair_share). Each call replaces the
	// last: a series absent from the map has no queue any more.
	QueueShares(shares map[QueueResource]QueueAmounts)
	// TopologyWaiting: per topology and level, the jobs the last cycle left pending that must
	// (or would rather) run inside one domain of that level
	// (kai_scheduler_topology_waiting_jobs). Each call replaces the last.
	TopologyWaiting(waiting map[TopologySeries]int)
	// RunEnded: preempt or reclaim ended a job's run, counted on its PodGroup
	// (kai_scheduler_runs_ended_total).
	RunEnded(action string)
	// Bound: a pod was bound (kai_scheduler_binds_total).
	Bound()
	// BindFailed: the API server refused a bind (kai_scheduler_bind_errors_total).
	BindFailed()
	// Evicted: a pod was evicted by action, after its job ran for ran if ranKnown
	// (kai_scheduler_evictions_total, kai_scheduler_runtime_at_eviction_seconds).
	Evicted(action string, ran time.Duration, ranKnown bool)
	// StaleGangEvicted: a running job below its minimum for longer than its staleness grace
	// period was evicted whole (kai_scheduler_stale_gang_evictions_total, jobs; its pods
	// count in kai_scheduler_evictions_total under the action stalegangeviction).
	StaleGangEvicted()
	// StatusWritten: the status updater wrote an object of kind, or failed to
	// (kai_scheduler_status_writes_total).
	StatusWritten(kind string, failed bool)
	// StatusWritesGivenUp: the status updater gave up n writes of kind
	// (kai_scheduler_status_writes_given_up_total).
	StatusWritesGivenUp(kind string, n int)
	// DecisionDropped: a decided call (bind, evict, ...) was never sent, for cause
	// (kai_scheduler_decisions_dropped_total).
	DecisionDropped(call, cause string)
}

// ProtectedSeries is one series of the protected-jobs gauge.
type ProtectedSeries struct {
	Queue  string
	Action string
}

// TopologySeries is one series of the topology-waiting gauge: a topology and the level its
// jobs' constraints name (alias or node label, as written).
type TopologySeries struct {
	Topology, Level string
}

// QueueResource is one queue's series of one quota resource ("gpu", "cpu" or "memory").
type QueueResource struct {
	Queue, Resource string
}

// QueueAmounts are a queue's amounts of one resource in the fair-share division, in the
// resource's base unit: GPU devices, CPU cores, memory bytes.
type QueueAmounts struct {
	Allocated, Deserved, FairShare float64
}

// Discard is the Recorder of the tools that run the scheduler's code offline (kai-sim,
// kubectl kai explain) and of tests that read no metric: it records nothing.
type Discard struct{}

var _ Recorder = Discard{}

func (Discard) CycleEnded(time.Duration, int, int)         {}
func (Discard) MinRuntimeRefused(string, int)              {}
func (Discard) PreemptionDelayHeld(string, int)            {}
func (Discard) ProtectionWaitEnded(time.Duration)          {}
func (Discard) ProtectedJobs(_, _ map[ProtectedSeries]int) {}
func (Discard) QueueShares(map[QueueResource]QueueAmounts) {}
func (Discard) TopologyWaiting(map[TopologySeries]int)     {}
func (Discard) RunEnded(string)                            {}
func (Discard) Bound()                                     {}
func (Discard) BindFailed()                                {}
func (Discard) Evicted(string, time.Duration, bool)        {}
func (Discard) StaleGangEvicted()                          {}
func (Discard) StatusWritten(string, bool)                 {}
func (Discard) StatusWritesGivenUp(string, int)            {}
func (Discard) DecisionDropped(string, string)             {}

// OrDiscard is r, or Discard when r is nil: the components that record take their Recorder
// as an optional field, so that a tool or a test that leaves it out records nothing.
func OrDiscard(r Recorder) Recorder {
	if r == nil {
		return Discard{}
	}
	return r
}
