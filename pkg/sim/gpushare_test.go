package sim_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// A pod asking for a GPU share upstream KAI refuses (here a fraction of 1.5, and a share
// beside a whole GPU) never lands anywhere, though the node has room: it would run without
// the GPU it asked for. The run names the pod and the annotation as a problem, and its job
// waits saying why; a well-formed job beside it runs.
func TestABadGPUShareIsRefusedAndNamed(t *testing.T) {
	scenario := `
apiVersion: v1
kind: Node
metadata: {name: node-0}
status: {allocatable: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "2", pods: "110"}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team}
spec: {resources: {gpu: {quota: 2, limit: -1, overQuotaWeight: 1}, cpu: {quota: -1, limit: -1, overQuotaWeight: 1}, memory: {quota: -1, limit: -1, overQuotaWeight: 1}}}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: greedy, namespace: ml, annotations: {sim.kai.scheduler/duration: 1h}}
spec: {minMember: 1, queue: team}
---
apiVersion: v1
kind: Pod
metadata: {name: greedy-0, namespace: ml, annotations: {pod-group-name: greedy, gpu-fraction: "1.5"}}
spec: {schedulerName: kai-scheduler, containers: [{name: main, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: both, namespace: ml, annotations: {sim.kai.scheduler/duration: 1h}}
spec: {minMember: 1, queue: team}
---
apiVersion: v1
kind: Pod
metadata: {name: both-0, namespace: ml, annotations: {pod-group-name: both, gpu-fraction: "0.5"}}
spec: {schedulerName: kai-scheduler, containers: [{name: main, resources: {limits: {nvidia.com/gpu: "1"}}}]}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: fine, namespace: ml, annotations: {sim.kai.scheduler/duration: 1h}}
spec: {minMember: 1, queue: team}
---
apiVersion: v1
kind: Pod
metadata: {name: fine-0, namespace: ml, annotations: {pod-group-name: fine}}
spec: {schedulerName: kai-scheduler, containers: [{name: main, resources: {limits: {nvidia.com/gpu: "1"}}}]}
`
	sc, err := input.Parse([]byte(scenario))
	if err != nil {
		t.Fatal(err)
	}
	result, err := sim.Run(context.Background(), sc, sim.Options{Until: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	started := map[string]bool{}
	waiting := map[string]string{}
	for _, j := range result.Jobs {
		started[j.PodGroup] = j.FirstStart != nil
		waiting[j.PodGroup] = strings.Join(j.Waiting, "; ")
	}
	if !started["ml/fine"] {
		t.Error("the well-formed job never started")
	}
	for job, annotation := range map[string]string{"ml/greedy": `gpu-fraction="1.5"`, "ml/both": "also requests whole nvidia.com/gpu"} {
		if started[job] {
			t.Errorf("%s started, though its pod's GPU share is refused", job)
		}
		if !strings.Contains(waiting[job], annotation) {
			t.Errorf("%s waits with %q, want a reason saying %q", job, waiting[job], annotation)
		}
		pod := strings.TrimPrefix(job, "ml/") + "-0"
		if !slices.ContainsFunc(result.Problems, func(p report.Problem) bool {
			return p.Kind == "Pod" && strings.HasSuffix(p.Name, pod) && p.Reason == "InvalidGPUShare" && strings.Contains(p.Message, annotation)
		}) {
			t.Errorf("no InvalidGPUShare problem on pod %s naming %q; problems: %+v", pod, annotation, result.Problems)
		}
	}
}
