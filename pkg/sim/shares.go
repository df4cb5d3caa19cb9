package sim

import (
	"maps"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// shareKey is one queue of one node pool's scheduler.
type shareKey struct{ pool, queue string }

// noteShares keeps, from one pool's cycle, every queue's GPU fair share (in GPUs) as the plot draws it,
// and the range of its deserved quota and fair share over the cycles in which it asked for
// GPUs, for the report: the numbers behind every "at or above its fair share".
func (e *engine) noteShares(pool string, shares map[string]model.QueueShare) {
	for queue, s := range shares {
		fairGPUs := s.FairShare[model.GPU] / model.MilliGPU
		e.fairShare[queue] = fairGPUs
		if s.Requested[model.GPU] <= 0 {
			continue
		}
		key := shareKey{pool, queue}
		fair, deserved := e.shareRanges[key], e.deservedRanges[key]
		e.shareRanges[key], e.deservedRanges[key] = widen(fair, fairGPUs), widen(deserved, s.Deserved[model.GPU]/model.MilliGPU)
	}
}

// widen is r grown to hold v; a nil r is the range of v alone.
func widen(r *report.Range, v float64) *report.Range {
	if r == nil {
		return &report.Range{Min: v, Max: v}
	}
	return &report.Range{Min: min(r.Min, v), Max: max(r.Max, v)}
}

// fairShares is a copy of every queue's latest GPU fair share, for a sample.
func (e *engine) fairShares() map[string]float64 { return maps.Clone(e.fairShare) }
