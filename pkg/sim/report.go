package sim

import (
	"fmt"
	"sort"
)

// report sums up the jobs, queues and pools.
func (e *engine) report() *Result {
	r := e.result
	type queueKey struct{ pool, queue string }
	byQueue := map[queueKey]*QueueReport{}
	var keys []queueKey
	waits := map[queueKey][]float64{}
	queueNames := map[string]bool{}
	for _, js := range e.jobs {
		key := queueKey{js.pool, js.queue}
		q := byQueue[key]
		if q == nil {
			q = &QueueReport{Queue: js.queue, Pool: js.pool}
			byQueue[key] = q
			keys = append(keys, key)
		}
		if !queueNames[js.queue] {
			queueNames[js.queue] = true
			r.Queues = append(r.Queues, js.queue)
		}
		jr := JobReport{PodGroup: js.name(), Queue: js.queue, Pool: js.pool, Submitted: js.spec.SubmitAt.Seconds(),
			Evictions: js.evictions, WastedGPUSeconds: js.wastedGPUSeconds}
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
				jr.Protection = ProtectionOf(group.Status.MinRuntime, Start)
			}
		}
		r.Jobs = append(r.Jobs, jr)
		q.Jobs++
		q.Evictions += js.evictions
		q.WastedGPUSeconds += js.wastedGPUSeconds
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
		if w := waits[key]; len(w) > 0 {
			var sum float64
			for _, v := range w {
				sum += v
			}
			q.MeanWaitSeconds = sum / float64(len(w))
		}
		r.Totals.Queues = append(r.Totals.Queues, *q)
		r.Totals.Jobs += q.Jobs
		r.Totals.Completed += q.Completed
		r.Totals.Evictions += q.Evictions
		r.Totals.WastedGPUSeconds += q.WastedGPUSeconds
	}
	r.Pools = e.reportPools()
	// The JSON contract has arrays, empty or not: tools should not meet null.
	if r.Events == nil {
		r.Events = []Event{}
	}
	if r.Jobs == nil {
		r.Jobs = []JobReport{}
	}
	if r.Totals.Queues == nil {
		r.Totals.Queues = []QueueReport{}
	}
	if r.Problems == nil {
		r.Problems = []Problem{}
	}
	r.Warnings = append(repeatedEvictions(r.Events), e.poolsWithoutNodes(r.Pools)...)
	return r
}

// maxEvictionsPerPreemptor is how often a job may be evicted for one preemptor before the
// simulation warns: with the promise made to a preemptor, one eviction for it is the rule (a
// gang evicted over a few cycles aside).
const maxEvictionsPerPreemptor = 3

// repeatedEvictions warns about every job evicted more than maxEvictionsPerPreemptor times
// for the same preemptor: the thrash min-runtime and promises exist to prevent. Pods of one
// job evicted at the same time count as one eviction.
func repeatedEvictions(events []Event) []string {
	type pair struct{ victim, preemptor string }
	times := map[pair][]float64{}
	var order []pair
	for _, e := range events {
		if e.Type != EventEvict || e.Preemptor == "" {
			continue
		}
		p := pair{e.PodGroup, e.Preemptor}
		seen := times[p]
		if len(seen) == 0 {
			order = append(order, p)
		}
		if len(seen) == 0 || seen[len(seen)-1] != e.Time {
			times[p] = append(seen, e.Time)
		}
	}
	warnings := []string{}
	for _, p := range order {
		if at := times[p]; len(at) > maxEvictionsPerPreemptor {
			warnings = append(warnings, fmt.Sprintf("job %s was evicted %d times for job %s (first at %s, last at %s): "+
				"the resources freed for the preemptor did not reach it", p.victim, len(at), p.preemptor,
				clockTime(at[0]), clockTime(at[len(at)-1])))
		}
	}
	return warnings
}
