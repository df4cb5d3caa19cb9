package minruntime

import (
	"fmt"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// The preemption delay is min-runtime's other side. Min-runtime protects a running job's
// progress from the jobs that would evict it; the delay keeps a newly created (or newly
// evicted) job from evicting others at once, so that a job that could have waited a little
// for capacity to free up does not throw out work to start. Both guard against thrash with a
// window read from the session's frozen now, so both live here, and both hold: a delayed
// job waits for its own window, then for its victims' min-runtime, whichever ends first.

// Keys of the delay's pending reasons: one of each per job, whatever the action asking.
const (
	delayReasonKey   = Name + "/preemption-delay"
	invalidReasonKey = Name + "/invalid-preemption-delay"
)

// mayEvictFor refuses every eviction for a job inside its preemption delay, which is
// measured from the later of its creation and its last eviction. The job is told until when,
// the end is noted as a time the answer changes (so that the scheduler wakes for it, as for a
// victim's protection ending), and the refusal is counted. A job whose delay annotation was
// unusable has no delay and is told so: the event alone scrolls away.
func (s *session) mayEvictFor(action framework.ActionType, preemptor *model.JobInfo) framework.Status {
	if preemptor.PreemptionDelayProblem != "" {
		s.ssn.SetPendingReason(preemptor.ID, invalidReasonKey, model.PendingReason{Reason: model.ReasonInvalidPreemptionDelay,
			Message: "preemption delay ignored: " + preemptor.PreemptionDelayProblem})
		return framework.Status{}
	}
	end, ok := preemptor.PreemptionDelayEnd()
	if !ok || !s.ssn.Now().Before(end) {
		return framework.Status{}
	}
	s.ssn.NoteAnswerChangesAt(end)
	s.ssn.Metrics().PreemptionDelayHeld(string(action), 1)
	message := delayMessage(preemptor, end)
	s.ssn.SetPendingReason(preemptor.ID, delayReasonKey, model.PendingReason{Reason: model.ReasonPreemptionDelayNotElapsed, Message: message})
	return framework.NewStatus(framework.Unschedulable, message)
}

// delayMessage says which delay holds the job and when it ends.
func delayMessage(job *model.JobInfo, end time.Time) string {
	_, since := job.PreemptionDelayFrom()
	return fmt.Sprintf("preemption delay of %s from %s has not elapsed: the job takes free capacity but evicts no job before %s",
		job.PreemptionDelay, since, model.FormatEnd(end))
}
