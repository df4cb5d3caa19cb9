package status

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// Every cycle hands the updater the reasons of every waiting job; for a job whose condition
// already shows them, finding that out must cost nothing. Building a key of each job's
// messages for the comparison was a fifth of all the bytes a simulated day allocated.
func TestAnUnchangedWaitingJobCostsNoAllocation(t *testing.T) {
	u := NewUpdater(nil, nil, clocktesting.NewFakeClock(time.Unix(1_800_000_000, 0)))
	reasons := map[model.JobID][]model.PendingReason{
		"team/a": {{Reason: "Unschedulable", Message: "reclaim: proportion: queue \"a\" is at or above its fair share (holds 8 GPUs, fair share 8)"}},
		"team/b": {{Reason: "MinRuntimeProtected", Message: "victims are protected until 2026-01-01T04:00:03Z"}, {Reason: "Unschedulable", Message: "gang of 2 pods does not fit"}},
	}
	for job, r := range reasons {
		u.written[job] = writtenCondition{reasons: r, shape: reasonsShape(r), at: u.Clock.Now()}
	}
	pods := map[model.JobID][]string{}
	if allocs := testing.AllocsPerRun(100, func() { u.SetPending(reasons, pods) }); allocs != 0 {
		t.Errorf("SetPending of reasons the conditions already show allocated %.0f times", allocs)
	}
	if len(u.pending) != 0 {
		t.Errorf("reasons already shown were queued for a write: %v", u.pending)
	}
}
