package sim

import (
	"sort"

	"github.com/kai-minruntime/kai-scheduler/pkg/podgrouper"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// summarize sums up the jobs, queues and pools into the result.
func (e *engine) summarize() *report.Result {
	r := e.result
	type queueKey struct{ pool, queue string }
	byQueue := map[queueKey]*report.QueueReport{}
	var keys []queueKey
	waits := map[queueKey][]float64{}
	queueNames := map[string]bool{}
	for _, js := range e.jobs {
		key := queueKey{js.pool, js.queue}
		q := byQueue[key]
		if q == nil {
			q = &report.QueueReport{Queue: js.queue, Pool: js.pool}
			byQueue[key] = q
			keys = append(keys, key)
		}
		if !queueNames[js.queue] {
			queueNames[js.queue] = true
			r.Queues = append(r.Queues, js.queue)
		}
		jr := report.JobReport{PodGroup: js.name(), Workload: js.spec.Group.Annotations[podgrouper.WorkloadAnnotation], Queue: js.queue, Pool: js.pool, Submitted: js.spec.SubmitAt.Seconds(),
			Evictions: js.evictions, WastedGPUSeconds: js.wastedGPUSeconds, PreemptionDelayed: js.delayed,
			RunsEnded: js.seen.runsEnded, EscalatedRuns: js.seen.escalatedRuns, LongestProtectionMetSeconds: js.seen.longestMet.Seconds()}
		if js.delayed {
			r.Totals.DelayedJobs++
		}
		if js.firstStart != nil {
			s := e.seconds(*js.firstStart)
			jr.FirstStart = &s
			if !js.spec.Running {
				// A job running at the start waited before it: no run of the scenario
				// changes that wait, which would only dilute the difference between runs.
				waits[key] = append(waits[key], s-jr.Submitted)
			}
		}
		if js.completed != nil {
			c := e.seconds(*js.completed)
			jr.Completed = &c
			q.Completed++
		} else if js.submitted {
			group := e.cluster.Group(js.groupKey())
			jr.Waiting = waitingReasons(group)
			if group != nil && js.running {
				jr.Protection = report.ProtectionOf(group.Status.MinRuntime, Start)
			}
		}
		r.Jobs = append(r.Jobs, jr)
		q.Jobs++
		q.Evictions += js.evictions
		q.WastedGPUSeconds += js.wastedGPUSeconds
		q.RunsEnded += jr.RunsEnded
		q.MostRunsEnded = max(q.MostRunsEnded, jr.RunsEnded)
		q.EscalatedRuns += jr.EscalatedRuns
		q.LongestProtectionMetSeconds = max(q.LongestProtectionMetSeconds, jr.LongestProtectionMetSeconds)
	}
	sort.Strings(r.Queues)
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].pool != keys[j].pool {
			return keys[i].pool < keys[j].pool
		}
		return keys[i].queue < keys[j].queue
	})
	r.Totals.SimulatedSeconds = e.seconds(e.clock.Now())
	for _, key := range keys {
		q := byQueue[key]
		q.Started = len(waits[key])
		q.GPUFairShare, q.GPUDeserved = e.shareRanges[shareKey(key)], e.deservedRanges[shareKey(key)]
		if w := waits[key]; len(w) > 0 {
			var sum float64
			for _, v := range w {
				sum += v
				q.MaxWaitSeconds = max(q.MaxWaitSeconds, v)
			}
			q.MeanWaitSeconds = sum / float64(len(w))
		}
		r.Totals.Queues = append(r.Totals.Queues, *q)
		r.Totals.Jobs += q.Jobs
		r.Totals.Completed += q.Completed
		r.Totals.Evictions += q.Evictions
		r.Totals.WastedGPUSeconds += q.WastedGPUSeconds
		r.Totals.RunsEnded += q.RunsEnded
		r.Totals.MostRunsEnded = max(r.Totals.MostRunsEnded, q.MostRunsEnded)
		r.Totals.EscalatedRuns += q.EscalatedRuns
	}
	r.Pools = e.reportPools()
	r.Totals.GPUs = e.gpuReport(r.Series, r.Totals.SimulatedSeconds)
	// The JSON contract has arrays, empty or not: tools should not meet null.
	if r.Events == nil {
		r.Events = []report.Event{}
	}
	if r.Jobs == nil {
		r.Jobs = []report.JobReport{}
	}
	if r.Totals.Queues == nil {
		r.Totals.Queues = []report.QueueReport{}
	}
	if r.Problems == nil {
		r.Problems = []report.Problem{}
	}
	r.Warnings = append(report.RepeatedEvictions(r.Events), e.poolsWithoutNodes(r.Pools)...)
	return r
}

// gpuReport sums the samples' allocated and stranded GPUs up: their values at the end, and
// their fractions of capacity averaged over time, each sample holding until the next (the
// last until end). Nil for a cluster without GPUs.
func (e *engine) gpuReport(series []report.Sample, end float64) *report.GPUReport {
	if e.capacity == 0 || len(series) == 0 {
		return nil
	}
	last := series[len(series)-1]
	capacity := float64(e.capacity)
	g := &report.GPUReport{Capacity: e.capacity, Allocated: last.Allocated, AllocatedFraction: last.Allocated / capacity,
		Stranded: last.Stranded, StrandedFraction: last.Stranded / capacity, Shared: e.sawShares}
	g.MeanAllocatedFraction, g.MeanStrandedFraction = g.AllocatedFraction, g.StrandedFraction
	if span := end - series[0].Time; span > 0 {
		var allocated, stranded float64
		for k, s := range series {
			until := end
			if k+1 < len(series) {
				until = series[k+1].Time
			}
			if s.Capacity > 0 {
				allocated += s.Allocated / float64(s.Capacity) * (until - s.Time)
				stranded += s.Stranded / float64(s.Capacity) * (until - s.Time)
			}
		}
		g.MeanAllocatedFraction, g.MeanStrandedFraction = allocated/span, stranded/span
	}
	return g
}
