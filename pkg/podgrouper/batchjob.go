package podgrouper

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	jobKind     = schema.GroupKind{Group: "batch", Kind: "Job"}
	cronJobKind = schema.GroupKind{Group: "batch", Kind: "CronJob"}
)

func init() { register(batchJob, jobKind, cronJobKind) }

// batchJob groups a batch Job, and each Job of a CronJob, into one gang (jobGang);
// kai.scheduler/batch-min-member may ask for another.
func batchJob(w *Workload) (Gang, error) {
	job := w.Nearest(jobKind)
	if job == nil { // a CronJob's pod without its Job: grouped by the CronJob alone
		return Gang{Object: w.Top(), MinMember: 1, DefaultPriority: TrainPriority, BatchMinMember: true}, nil
	}
	parallelism, err := countOr(job, 1, "spec", "parallelism")
	if err != nil {
		return Gang{}, err
	}
	completions, set, err := count(job, "spec", "completions")
	if err != nil {
		return Gang{}, err
	}
	return Gang{Object: job, MinMember: jobGang(parallelism, completions, set), DefaultPriority: TrainPriority, BatchMinMember: true}, nil
}

// jobGang is the gang of a Job's pods (a batch Job's, or a JobSet replica's): the pods it runs
// at once when they are one computation, and one when they are a queue of independent work.
//   - completions unset, or no more than parallelism: the Job starts min(parallelism,
//     completions) pods together and is done when they are, a gang of that many;
//   - completions above parallelism: the Job runs completions pods, parallelism at a time,
//     each replacing one that finished. Such pods are independent, and as a gang they would
//     deadlock at the tail: with 3 of 5 done, the Job makes 2 pods, which a gang of 4 would
//     hold for ever (upstream KAI's issue #1347). Each is a gang of one.
func jobGang(parallelism, completions int32, completionsSet bool) int32 {
	parallelism = max(parallelism, 1)
	switch {
	case !completionsSet || completions <= 0:
		return parallelism
	case completions > parallelism:
		return 1
	default:
		return completions
	}
}
