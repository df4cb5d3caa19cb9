package metrics

import (
	"maps"
	"slices"
	"sync"
	"time"
)

// Recording is a Recorder that keeps what it is told, for tests to read (Recorded), as
// client-go's record.FakeRecorder keeps events: a test reads the metrics of the scheduler it
// ran, not of every scheduler the process ran.
type Recording struct {
	mu       sync.Mutex
	recorded Recorded
}

// Recorded is what a Recording was told.
type Recorded struct {
	// Cycles counts the cycles ended; PendingJobs and InvalidQueues are the last one's.
	Cycles                     int
	PendingJobs, InvalidQueues int
	// MinRuntimeRefusals sums the victims refused, per action.
	MinRuntimeRefusals map[string]int
	// PreemptionDelayHeld sums the jobs held back by their preemption delay, per action.
	PreemptionDelayHeld map[string]int
	// ProtectionWaits are the waits on protection that ended, in order.
	ProtectionWaits []time.Duration
	// ProtectedJobs and EscalatedJobs are the protected- and escalated-jobs gauges as last set.
	ProtectedJobs, EscalatedJobs map[ProtectedSeries]int
	// TopologyWaiting is the topology-waiting gauge as last set.
	TopologyWaiting map[TopologySeries]int
	// QueueShares are the queues' fair-share gauges as last set.
	QueueShares map[QueueResource]QueueAmounts
	// RunsEnded counts the runs ended by eviction, per action.
	RunsEnded map[string]int
	// Binds and BindErrors count binds and binds refused.
	Binds, BindErrors int
	// Evictions counts the pods evicted, per action; RuntimesAtEviction holds, per action,
	// how long each evicted pod's job had run, for those known.
	Evictions          map[string]int
	RuntimesAtEviction map[string][]time.Duration
	// StaleGangEvictions counts the jobs evicted whole as stale.
	StaleGangEvictions int
	// StatusWrites counts the status updater's writes per kind and result ("ok", "error");
	// StatusWritesGivenUp those given up, per kind.
	StatusWrites        map[[2]string]int
	StatusWritesGivenUp map[string]int
	// DecisionsDropped counts the calls never sent, per call and cause.
	DecisionsDropped map[[2]string]int
}

var _ Recorder = &Recording{}

// Recorded returns a copy of what was recorded so far.
func (r *Recording) Recorded() Recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.recorded
	c.MinRuntimeRefusals = maps.Clone(c.MinRuntimeRefusals)
	c.PreemptionDelayHeld = maps.Clone(c.PreemptionDelayHeld)
	c.ProtectionWaits = slices.Clone(c.ProtectionWaits)
	c.ProtectedJobs = maps.Clone(c.ProtectedJobs)
	c.TopologyWaiting = maps.Clone(c.TopologyWaiting)
	c.EscalatedJobs = maps.Clone(c.EscalatedJobs)
	c.QueueShares = maps.Clone(c.QueueShares)
	c.RunsEnded = maps.Clone(c.RunsEnded)
	c.Evictions = maps.Clone(c.Evictions)
	c.RuntimesAtEviction = maps.Clone(c.RuntimesAtEviction)
	for action, ran := range c.RuntimesAtEviction {
		c.RuntimesAtEviction[action] = slices.Clone(ran)
	}
	c.StatusWrites = maps.Clone(c.StatusWrites)
	c.StatusWritesGivenUp = maps.Clone(c.StatusWritesGivenUp)
	c.DecisionsDropped = maps.Clone(c.DecisionsDropped)
	return c
}

// record runs f on what was recorded, under the lock.
func (r *Recording) record(f func(*Recorded)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.recorded)
}

// add adds n to m[key], making m if needed.
func add[K comparable](m *map[K]int, key K, n int) {
	if *m == nil {
		*m = map[K]int{}
	}
	(*m)[key] += n
}

func (r *Recording) CycleEnded(_ time.Duration, pendingJobs, invalidQueues int) {
	r.record(func(c *Recorded) { c.Cycles, c.PendingJobs, c.InvalidQueues = c.Cycles+1, pendingJobs, invalidQueues })
}

func (r *Recording) MinRuntimeRefused(action string, victims int) {
	r.record(func(c *Recorded) { add(&c.MinRuntimeRefusals, action, victims) })
}

func (r *Recording) PreemptionDelayHeld(action string, jobs int) {
	r.record(func(c *Recorded) { add(&c.PreemptionDelayHeld, action, jobs) })
}

func (r *Recording) ProtectionWaitEnded(waited time.Duration) {
	r.record(func(c *Recorded) { c.ProtectionWaits = append(c.ProtectionWaits, waited) })
}

func (r *Recording) ProtectedJobs(protected, escalated map[ProtectedSeries]int) {
	r.record(func(c *Recorded) { c.ProtectedJobs, c.EscalatedJobs = maps.Clone(protected), maps.Clone(escalated) })
}

func (r *Recording) TopologyWaiting(waiting map[TopologySeries]int) {
	r.record(func(c *Recorded) { c.TopologyWaiting = maps.Clone(waiting) })
}

func (r *Recording) QueueShares(shares map[QueueResource]QueueAmounts) {
	r.record(func(c *Recorded) { c.QueueShares = maps.Clone(shares) })
}

func (r *Recording) RunEnded(action string) {
	r.record(func(c *Recorded) { add(&c.RunsEnded, action, 1) })
}

func (r *Recording) Bound()      { r.record(func(c *Recorded) { c.Binds++ }) }
func (r *Recording) BindFailed() { r.record(func(c *Recorded) { c.BindErrors++ }) }

func (r *Recording) Evicted(action string, ran time.Duration, ranKnown bool) {
	r.record(func(c *Recorded) {
		add(&c.Evictions, action, 1)
		if !ranKnown {
			return
		}
		if c.RuntimesAtEviction == nil {
			c.RuntimesAtEviction = map[string][]time.Duration{}
		}
		c.RuntimesAtEviction[action] = append(c.RuntimesAtEviction[action], ran)
	})
}

func (r *Recording) StaleGangEvicted() { r.record(func(c *Recorded) { c.StaleGangEvictions++ }) }

func (r *Recording) StatusWritten(kind string, failed bool) {
	r.record(func(c *Recorded) { add(&c.StatusWrites, [2]string{kind, result(failed)}, 1) })
}

func (r *Recording) StatusWritesGivenUp(kind string, n int) {
	r.record(func(c *Recorded) { add(&c.StatusWritesGivenUp, kind, n) })
}

func (r *Recording) DecisionDropped(call, cause string) {
	r.record(func(c *Recorded) { add(&c.DecisionsDropped, [2]string{call, cause}, 1) })
}

// result is a status write's result label.
func result(failed bool) string {
	if failed {
		return "error"
	}
	return "ok"
}
