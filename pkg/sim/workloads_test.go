package sim_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/internal/simtest"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// The documented example: a batch Job and a PyTorchJob written as for a cluster, with their
// pods and no PodGroup. The pod grouper makes the PyTorchJob one gang of its 4 pods, which
// waits while only 3 of them would fit and then starts whole; the Job is a gang of its 2.
func TestWorkloadsExampleRunsThePyTorchJobAsOneGang(t *testing.T) {
	sc, err := input.Parse(simtest.Example(t, "workloads.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var gangs []string
	for _, job := range sc.Jobs {
		var pods []string
		for _, pod := range job.Pods {
			if pod.Annotations[scheduling.PodGroupNameAnnotation] != job.Group.Name {
				t.Errorf("pod %s is annotated with PodGroup %q, want %q", pod.Name, pod.Annotations[scheduling.PodGroupNameAnnotation], job.Group.Name)
			}
			pods = append(pods, pod.Name+":"+pod.Labels[scheduling.SubGroupLabel])
		}
		gangs = append(gangs, fmt.Sprintf("%s %s gang %d queue %s submit %s duration %s pods %s", job.Key(), job.Group.Annotations["kai.scheduler/workload"],
			job.Group.Spec.MinMember, job.Group.Spec.Queue, job.SubmitAt, job.Duration, strings.Join(pods, ",")))
	}
	want := []string{
		"ml/pg-preprocess Job.batch/preprocess gang 2 queue research submit 0s duration 30m0s pods preprocess-4mz8q:,preprocess-x7k2d:",
		"ml/pg-train PyTorchJob.kubeflow.org/train gang 4 queue research submit 1m0s duration 2h0m0s " +
			"pods train-master-0:master,train-worker-0:worker,train-worker-1:worker,train-worker-2:worker",
	}
	if got := strings.Join(gangs, "\n"); got != strings.Join(want, "\n") {
		t.Fatalf("jobs:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}

	// Until preprocess is done, 6 GPUs are free: 3 of train's pods would fit, and none binds.
	early, err := sim.Run(context.Background(), sc, sim.Options{Until: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range early.Events {
		if e.PodGroup == "ml/pg-train" {
			t.Errorf("at %s, %s of %s: none of the gang's pods may bind while it does not fit whole", report.ClockTime(e.Time), e.Type, e.Pod)
		}
	}
	var waiting *report.JobReport
	for i, j := range early.Jobs {
		if j.PodGroup == "ml/pg-train" {
			waiting = &early.Jobs[i]
		}
	}
	if waiting == nil || waiting.Workload != "PyTorchJob.kubeflow.org/train" || len(waiting.Waiting) == 0 ||
		!strings.Contains(waiting.Waiting[0], "gang of 4 pods does not fit") {
		t.Errorf("train at 0:10:00: %+v, want it waiting as a gang of 4, by its workload's name", waiting)
	}
	var text strings.Builder
	if err := report.WriteText(&text, early); err != nil {
		t.Fatal(err)
	}
	if want := "\n  ml/pg-train (PyTorchJob.kubeflow.org/train): gang of 4 pods does not fit"; !strings.Contains(text.String(), want) {
		t.Errorf("the text lacks %q:\n%s", want, text.String())
	}

	sc, err = input.Parse(simtest.Example(t, "workloads.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	result, err := sim.Run(context.Background(), sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	binds := map[float64][]string{}
	for _, e := range result.Events {
		if e.PodGroup == "ml/pg-train" && e.Type == report.EventBind {
			binds[e.Time] = append(binds[e.Time], e.Pod)
		}
	}
	if got := binds[1801]; len(binds) != 1 || len(got) != 4 {
		t.Errorf("train's binds by time %v: want its 4 pods together at 0:30:01, a cycle after preprocess completes", binds)
	}
	for _, j := range result.Jobs {
		if j.Completed == nil || j.Evictions != 0 {
			t.Errorf("%s: completed %v, %d evictions: want both jobs done, none evicted", j.PodGroup, j.Completed, j.Evictions)
		}
	}
}
