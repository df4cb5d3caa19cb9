package sim

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// seenProtection is what the scheduler told of a job's protection over the simulation, for
// the report: how often it lost its run, how many of its runs escalation protected longer,
// and the longest protection that held it back while it waited.
type seenProtection struct {
	// runsEnded is its PodGroup's status.evictions.total as last written.
	runsEnded int
	// escalatedRuns counts the runs whose status showed an escalated min-runtime;
	// escalatedStart is the start of the last of them, so that a run is counted once
	// however often its status is rewritten.
	escalatedRuns  int
	escalatedStart time.Time
	// longestMet is the longest min-runtime among the protections that refused it a victim.
	longestMet time.Duration
}

// onGroupStatus reads what the scheduler wrote in a PodGroup's status: the eviction count,
// and whether the protection of the current run is escalated. Read as written, since a
// completed job's PodGroup is gone by the time the report is made.
func (e *engine) onGroupStatus(group *v2alpha2.PodGroup) {
	js := e.jobByName[types.NamespacedName{Namespace: group.Namespace, Name: group.Name}]
	if js == nil {
		return
	}
	seen := &js.seen
	if c := group.Status.Evictions; c != nil {
		seen.runsEnded = int(c.Total)
	}
	if m := group.Status.MinRuntime; m != nil && escalated(m) && !m.Start.Time.Equal(seen.escalatedStart) {
		seen.escalatedRuns++
		seen.escalatedStart = m.Start.Time
	}
}

// escalated reports whether escalation lengthened any of a protection's min-runtimes.
func escalated(m *v2alpha2.MinRuntimeStatus) bool {
	if m.Preempt.EscalatedFrom != nil {
		return true
	}
	for _, r := range m.Reclaim {
		if r.EscalatedFrom != nil {
			return true
		}
	}
	return false
}

// noteProtected keeps, for each job a cycle left waiting on protected victims, the longest
// protection that refused it. Maxima: the map's order decides nothing.
func (e *engine) noteProtected(pending map[model.JobID][]model.PendingReason) {
	e.eachReason(pending, model.ReasonMinRuntimeProtected, func(js *jobState, r model.PendingReason) {
		js.seen.longestMet = max(js.seen.longestMet, r.LongestMinRuntime)
	})
}
