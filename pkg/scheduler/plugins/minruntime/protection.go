package minruntime

import (
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// EffectiveStart is when the job's current run began, as far as the scheduler can trust it.
//
// The start stamp (the kai.scheduler/last-start-timestamp annotation) is written by the
// scheduler, but anyone who may edit the PodGroup may rewrite it to extend the job's
// protection. So the stamp only counts when it is not in the future, and the start times of
// the job's active pods — reported by the kubelet in pod status, which workload owners cannot
// write — cap it: the effective start is the earliest of the two. Editing the annotation can
// therefore shorten protection, never lengthen it. Without a usable stamp the pods' start
// alone counts; with neither, the job has not run yet and has no work to protect.
//
// The second result is false when there is no start at all. The third tells why the stamp
// was not used as written, for reporting; empty when it was.
func EffectiveStart(job *model.JobInfo, now time.Time) (time.Time, bool, string) {
	start, known, _ := job.CurrentRun()
	stamp := job.LastStartTimestamp
	switch {
	case stamp == nil:
		return start, known, ""
	case stamp.After(now):
		return start, known, "start stamp " + stamp.Format(time.RFC3339Nano) + " is in the future and is ignored"
	case job.StampOfEarlierRun():
		// The pods' own start is the truth.
		return start, known, "start stamp " + stamp.Format(time.RFC3339Nano) + " predates the job's pods and is ignored"
	case known && stamp.After(start.Add(model.PodTimePrecision)):
		return start, true, "start stamp " + stamp.Format(time.RFC3339Nano) + " is later than the job's pods started; their start counts"
	}
	return *stamp, true, ""
}

// IsElastic reports whether the job has more pods than its gang needs: such a job may lose
// surplus pods even while protected, down to its minimum.
func IsElastic(job *model.JobInfo) bool {
	var pods int32
	for _, p := range job.Pods {
		if p.Status != model.Succeeded && p.Status != model.Failed {
			pods++
		}
	}
	return pods > job.GangSize()
}
