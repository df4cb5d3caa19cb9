package metrics

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Prometheus is the Recorder of the scheduler binary. It owns its collectors: two schedulers
// in one process (tests, a restart) each have their own series, registered with the
// registry each was given.
type Prometheus struct {
	c          collectors
	registerer prometheus.Registerer

	// mu guards the shown series.
	mu sync.Mutex
	// shownProtected and shownEscalated are the series the last ProtectedJobs set: the next
	// deletes those it has no jobs for, after setting its own, so that no scrape finds a
	// gauge empty.
	shownProtected, shownEscalated map[ProtectedSeries]bool
	shownTopology                  map[TopologySeries]bool
	// shownShares are the series the last QueueShares set, deleted by the next that has none
	// for them (a queue deleted, or no longer valid).
	shownShares map[QueueResource]bool
}

var _ Recorder = &Prometheus{}

// NewPrometheus makes a scheduler's collectors and registers them with registerer, every
// series labelled node_pool=pool when the scheduler serves a named pool, so that the shards'
// series stay apart wherever they are collected. It fails, registering nothing, when the
// registry holds them already: another scheduler of the process registered there for the
// same pool.
func NewPrometheus(registerer prometheus.Registerer, pool string) (*Prometheus, error) {
	if pool != "" {
		registerer = prometheus.WrapRegistererWith(prometheus.Labels{"node_pool": pool}, registerer)
	}
	p := &Prometheus{c: newCollectors(), registerer: registerer}
	all := p.c.all()
	for i, c := range all {
		if err := registerer.Register(c); err != nil {
			for _, registered := range all[:i] {
				registerer.Unregister(registered)
			}
			return nil, fmt.Errorf("registering the scheduler's metrics: %w", err)
		}
	}
	return p, nil
}

// Unregister takes the collectors back from the registry: a scheduler that stops leaves the
// registry as it found it, for the next one of the process.
func (p *Prometheus) Unregister() {
	for _, c := range p.c.all() {
		p.registerer.Unregister(c)
	}
}

func (p *Prometheus) CycleEnded(took time.Duration, pendingJobs, invalidQueues int) {
	p.c.pendingJobs.Set(float64(pendingJobs))
	p.c.invalidQueues.Set(float64(invalidQueues))
	p.c.cycleDuration.Observe(took.Seconds())
}

func (p *Prometheus) MinRuntimeRefused(action string, victims int) {
	p.c.minRuntimeRefusals.WithLabelValues(action).Add(float64(victims))
}

func (p *Prometheus) PreemptionDelayHeld(action string, jobs int) {
	p.c.preemptionDelayHeld.WithLabelValues(action).Add(float64(jobs))
}

func (p *Prometheus) ProtectionWaitEnded(waited time.Duration) {
	p.c.minRuntimeWait.Observe(waited.Seconds())
}

func (p *Prometheus) ProtectedJobs(protected, escalated map[ProtectedSeries]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.shownProtected = replaceSeries(p.c.protectedJobs, p.shownProtected, protected, ProtectedSeries.labels)
	p.shownEscalated = replaceSeries(p.c.escalatedJobs, p.shownEscalated, escalated, ProtectedSeries.labels)
}

func (p *Prometheus) TopologyWaiting(waiting map[TopologySeries]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.shownTopology = replaceSeries(p.c.topologyWaiting, p.shownTopology, waiting, TopologySeries.labels)
}

func (s ProtectedSeries) labels() []string { return []string{s.Queue, s.Action} }
func (s TopologySeries) labels() []string  { return []string{s.Topology, s.Level} }

// replaceSeries sets gauge's series to counts and deletes those of shown it has none for; it
// returns the series now shown.
func replaceSeries[S comparable](gauge *prometheus.GaugeVec, shown map[S]bool, counts map[S]int, labels func(S) []string) map[S]bool {
	set := make(map[S]bool, len(counts))
	for s, n := range counts {
		gauge.WithLabelValues(labels(s)...).Set(float64(n))
		set[s] = true
	}
	for s := range shown {
		if !set[s] {
			gauge.DeleteLabelValues(labels(s)...)
		}
	}
	return set
}

func (p *Prometheus) QueueShares(shares map[QueueResource]QueueAmounts) {
	p.mu.Lock()
	defer p.mu.Unlock()
	set := make(map[QueueResource]bool, len(shares))
	for s, a := range shares {
		p.c.queueAllocated.WithLabelValues(s.Queue, s.Resource).Set(a.Allocated)
		p.c.queueDeserved.WithLabelValues(s.Queue, s.Resource).Set(a.Deserved)
		p.c.queueFairShare.WithLabelValues(s.Queue, s.Resource).Set(a.FairShare)
		set[s] = true
	}
	for s := range p.shownShares {
		if !set[s] {
			for _, g := range []*prometheus.GaugeVec{p.c.queueAllocated, p.c.queueDeserved, p.c.queueFairShare} {
				g.DeleteLabelValues(s.Queue, s.Resource)
			}
		}
	}
	p.shownShares = set
}

func (p *Prometheus) RunEnded(action string) { p.c.runsEnded.WithLabelValues(action).Inc() }

func (p *Prometheus) Bound()      { p.c.binds.Inc() }
func (p *Prometheus) BindFailed() { p.c.bindErrors.Inc() }

func (p *Prometheus) Evicted(action string, ran time.Duration, ranKnown bool) {
	p.c.evictions.WithLabelValues(action).Inc()
	if ranKnown {
		p.c.runtimeAtEviction.WithLabelValues(action).Observe(ran.Seconds())
	}
}

func (p *Prometheus) StaleGangEvicted() { p.c.staleGangEvictions.Inc() }

func (p *Prometheus) StatusWritten(kind string, failed bool) {
	p.c.statusWrites.WithLabelValues(kind, result(failed)).Inc()
}

func (p *Prometheus) StatusWritesGivenUp(kind string, n int) {
	p.c.statusWritesGivenUp.WithLabelValues(kind).Add(float64(n))
}

func (p *Prometheus) DecisionDropped(call, cause string) {
	p.c.decisionsDropped.WithLabelValues(call, cause).Inc()
}
