package input_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/internal/simtest"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

func jobReport(t *testing.T, r *report.Result, name string) report.JobReport {
	t.Helper()
	for _, j := range r.Jobs {
		if j.PodGroup == name {
			return j
		}
	}
	t.Fatalf("no job %s in %+v", name, r.Jobs)
	return report.JobReport{}
}

// A job running when the simulation starts keeps the protection it has on its cluster,
// counted from its start before the simulation; a pod of another scheduler holds its GPUs.
func TestRunningJobsKeepTheirProtection(t *testing.T) {
	sc, err := input.Parse(simtest.Example(t, "running-jobs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	first, err := sim.Run(context.Background(), sc, sim.Options{Until: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Events) != 0 {
		t.Fatalf("the first cycle evicted or bound %+v; train is protected and short frees too little", first.Events)
	}
	eval := jobReport(t, first, "prod/eval")
	if want := "research/train until 2026-01-01T00:05:00Z (1h0m0s from queue research)"; !strings.Contains(strings.Join(eval.Waiting, "\n"), want) {
		t.Fatalf("eval waits for %q, want the reason to name %q: 55 minutes of its hour have run", eval.Waiting, want)
	}
	train := jobReport(t, first, "research/train")
	if p := train.Protection; p == nil || p.Start != -3300 || len(p.Reclaim) != 1 || p.Reclaim[0].Until == nil || *p.Reclaim[0].Until != 300 || p.Reclaim[0].SetBy != "research" {
		t.Fatalf("train's protection %+v: want its run from -3300 s protected from reclaim until 300 s by queue research", p)
	}
	if p := train.Protection; p.Preempt.Until != nil {
		t.Fatalf("train's preempt min-runtime %s ends at %v: a min-runtime of 0s protects nothing and has no end", p.Preempt.MinRuntime, *p.Preempt.Until)
	}
	if train.Submitted != -3600 || train.FirstStart == nil || *train.FirstStart != -3300 {
		t.Fatalf("train submitted at %v, started at %v: want -3600 and -3300 as its annotations say", train.Submitted, train.FirstStart)
	}

	whole, err := sim.Run(context.Background(), sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	evictions := simtest.EvictionTimes(whole)
	if len(evictions) != 1 || len(evictions["research/train"]) != 1 || evictions["research/train"][0] != 300 {
		t.Fatalf("evictions %v: want train once, at 300 s when its hour is up", evictions)
	}
	if short := jobReport(t, whole, "research/short"); short.Completed == nil || *short.Completed != 1800 {
		t.Fatalf("short completed at %v: want 1800 s, the half hour left of its 2h30m", short.Completed)
	}
	// train ran an hour on 4 GPUs without a checkpoint before its eviction.
	if got := jobReport(t, whole, "research/train").WastedGPUSeconds; got != 4*3600 {
		t.Fatalf("train wasted %v GPU-seconds, want %v", got, 4*3600)
	}
	for _, q := range whole.Totals.Queues {
		if q.Queue == "research" && q.Started != 0 {
			t.Errorf("research counts %d started jobs: both ran before the start, and their waits are history", q.Started)
		}
	}
	if evalRun := jobReport(t, whole, "prod/eval"); evalRun.FirstStart == nil || *evalRun.FirstStart != 301 {
		t.Fatalf("eval started at %v: want 301 s, after the 2 GPUs of the inference server stayed taken", evalRun.FirstStart)
	}
}

// A running job with fewer pods on nodes than its minMember is not running: it waits, and
// the pods that were on nodes start pending, not on their old nodes.
func TestRunningJobBelowItsMinimumWaits(t *testing.T) {
	scenario := inputHead + `spec:
  nodeName: n0
  containers: [{name: main, resources: {requests: {nvidia.com/gpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: job-1, annotations: {pod-group-name: job}}
spec: {containers: [{name: main, resources: {requests: {nvidia.com/gpu: "8"}}}]}
`
	scenario = strings.Replace(scenario, "metadata: {name: job}\nspec: {minMember: 1", "metadata: {name: job, annotations: {sim.kai.scheduler/running-for: 1h}}\nspec: {minMember: 2", 1)
	sc, err := input.Parse([]byte(scenario))
	if err != nil {
		t.Fatal(err)
	}
	r, err := sim.Run(context.Background(), sc, sim.Options{Until: 10})
	if err != nil {
		t.Fatal(err)
	}
	job := jobReport(t, r, "default/job")
	if job.FirstStart != nil || job.Protection != nil || len(job.Waiting) == 0 {
		t.Fatalf("job %+v: with 1 of its 2 pods on a node it is not running, and waits (job-1 fits nowhere)", job)
	}
}

// A running job counts in its sub-groups as the scheduler does, even without minSubGroup: with
// its workers on a node but its leader not, it has the pods its minMember asks for and still
// is not running (its leader sub-group lacks its one pod), so it waits.
func TestRunningJobWithASubGroupShortWaits(t *testing.T) {
	scenario := strings.Replace(inputHead, "metadata: {name: job-0, annotations: {pod-group-name: job}}",
		"metadata: {name: job-0, annotations: {pod-group-name: job}, labels: {kai.scheduler/subgroup-name: workers}}", 1) + `spec:
  nodeName: n0
  containers: [{name: main, resources: {requests: {nvidia.com/gpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: job-1, annotations: {pod-group-name: job}, labels: {kai.scheduler/subgroup-name: leader}}
spec: {containers: [{name: main, resources: {requests: {nvidia.com/gpu: "8"}}}]}
`
	scenario = strings.Replace(scenario, "metadata: {name: job}\nspec: {minMember: 1, queue: q}",
		"metadata: {name: job, annotations: {sim.kai.scheduler/running-for: 1h}}\n"+
			"spec: {minMember: 1, queue: q, subGroups: [{name: leader, minMember: 1}, {name: workers, minMember: 1}]}", 1)
	sc, err := input.Parse([]byte(scenario))
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Jobs) != 1 || !sc.Jobs[0].Running || len(sc.Jobs[0].Group.Spec.SubGroups) != 2 {
		t.Fatalf("the scenario did not make a running job of two sub-groups: %+v", sc.Jobs)
	}
	r, err := sim.Run(context.Background(), sc, sim.Options{Until: 10})
	if err != nil {
		t.Fatal(err)
	}
	job := jobReport(t, r, "default/job")
	if job.FirstStart != nil || len(job.Waiting) == 0 {
		t.Fatalf("job %+v: with its leader sub-group not on a node it is not running, and waits (job-1 fits nowhere)", job)
	}
}

func TestParseRefusesRunningJobMistakes(t *testing.T) {
	for want, change := range map[string][2]string{
		`Pod default/job-0: spec.nodeName "n0": only the pods of a running job (PodGroup annotation sim.kai.scheduler/running-for) start on a node`: {
			"", "spec: {nodeName: n0, containers: [{name: main}]}"},
		`Pod default/job-0: spec.nodeName names node "n9", which the file does not define`: {
			"sim.kai.scheduler/running-for: 1h", "spec: {nodeName: n9, containers: [{name: main}]}"},
		`Pod default/job-0: a pod of another scheduler (default-scheduler) only holds resources on the node it names: set spec.nodeName`: {
			"", "spec: {schedulerName: default-scheduler, containers: [{name: main}]}"},
		`document 3 (PodGroup job): metadata.annotations.sim.kai.scheduler/submit-at: -30m is after the job started (sim.kai.scheduler/running-for 1h): a running job was submitted at -1h0m0s or before`: {
			"sim.kai.scheduler/running-for: 1h, sim.kai.scheduler/submit-at: -30m", "spec: {containers: [{name: main}]}"},
		`document 3 (PodGroup job): metadata.annotations.kai.scheduler/last-start-timestamp: a scenario says how long a running job has run with sim.kai.scheduler/running-for instead`: {
			"kai.scheduler/last-start-timestamp: '2026-01-01T00:00:00Z'", "spec: {containers: [{name: main}]}"},
		`document 3 (PodGroup job): metadata.annotations.sim.kai.scheduler/running-for: must not be negative, got "-1h"`: {
			"sim.kai.scheduler/running-for: -1h", "spec: {containers: [{name: main}]}"},
	} {
		scenario := strings.Replace(inputHead, "metadata: {name: job}", "metadata: {name: job, annotations: {"+change[0]+"}}", 1) + change[1] + "\n"
		_, err := input.Parse([]byte(scenario))
		if err == nil || err.Error() != want {
			t.Errorf("got %v\nwant %s", err, want)
		}
	}
}
