package metrics

import (
	"sync"
	"time"
)

// Prometheus is the Recorder of the scheduler binary: it writes the Prometheus metrics that
// Register serves.
type Prometheus struct {
	// mu guards shown.
	mu sync.Mutex
	// shown are the protected-jobs series the last ProtectedJobs set: the next deletes those
	// it has no jobs for, after setting its own, so that no scrape finds the gauge empty.
	shown map[ProtectedSeries]bool
}

var _ Recorder = &Prometheus{}

func (p *Prometheus) CycleEnded(took time.Duration, pendingJobs, invalidQueues int) {
	PendingJobs.Set(float64(pendingJobs))
	InvalidQueues.Set(float64(invalidQueues))
	CycleDuration.Observe(took.Seconds())
}

func (p *Prometheus) MinRuntimeRefused(action string, victims int) {
	MinRuntimeRefusals.WithLabelValues(action).Add(float64(victims))
}

func (p *Prometheus) ProtectionWaitEnded(waited time.Duration) {
	MinRuntimeWait.Observe(waited.Seconds())
}

func (p *Prometheus) ProtectedJobs(protected map[ProtectedSeries]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	set := make(map[ProtectedSeries]bool, len(protected))
	for s, n := range protected {
		ProtectedJobs.WithLabelValues(s.Queue, s.Action).Set(float64(n))
		set[s] = true
	}
	for s := range p.shown {
		if !set[s] {
			ProtectedJobs.DeleteLabelValues(s.Queue, s.Action)
		}
	}
	p.shown = set
}

func (p *Prometheus) Bound()      { Binds.Inc() }
func (p *Prometheus) BindFailed() { BindErrors.Inc() }

func (p *Prometheus) Evicted(action string, ran time.Duration, ranKnown bool) {
	Evictions.WithLabelValues(action).Inc()
	if ranKnown {
		RuntimeAtEviction.WithLabelValues(action).Observe(ran.Seconds())
	}
}

func (p *Prometheus) StatusWritten(kind string, failed bool) {
	StatusWrites.WithLabelValues(kind, result(failed)).Inc()
}

func (p *Prometheus) StatusWritesGivenUp(kind string, n int) {
	StatusWritesGivenUp.WithLabelValues(kind).Add(float64(n))
}

func (p *Prometheus) DecisionDropped(call, cause string) {
	DecisionsDropped.WithLabelValues(call, cause).Inc()
}
