package podgrouper

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	jobKind     = schema.GroupKind{Group: "batch", Kind: "Job"}
	cronJobKind = schema.GroupKind{Group: "batch", Kind: "CronJob"}
)

func init() { register(batchJob, jobKind, cronJobKind) }

// batchJob groups a batch Job, and each Job of a CronJob, into one gang: the pods the Job
// runs at once, min(parallelism, completions), since the Job controller never runs more.
// kai.scheduler/batch-min-member may ask for another gang.
func batchJob(w *Workload) (Gang, error) {
	job := w.Nearest(jobKind)
	if job == nil { // a CronJob's pod without its Job: grouped by the CronJob alone
		return Gang{Object: w.Top(), MinMember: 1, DefaultPriority: TrainPriority, BatchMinMember: true}, nil
	}
	parallelism, err := countOr(job, 1, "spec", "parallelism")
	if err != nil {
		return Gang{}, err
	}
	gang := max(parallelism, 1)
	completions, set, err := count(job, "spec", "completions")
	if err != nil {
		return Gang{}, err
	}
	if set && completions > 0 {
		gang = min(gang, completions)
	}
	return Gang{Object: job, MinMember: gang, DefaultPriority: TrainPriority, BatchMinMember: true}, nil
}
