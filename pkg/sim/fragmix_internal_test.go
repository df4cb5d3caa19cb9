package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
)

// A scheduler's bind that the node's devices cannot honour — here a second share of 0.6 put
// in the GPU group of a device holding 0.6 — is kept as the run's error, which Run returns
// after the cycle: the fragmentation benchmark fails on a share placed where it does not fit
// instead of reporting a cluster fuller than a real one could be.
func TestASchedulerBindTheDevicesCannotHonourIsTheRunsError(t *testing.T) {
	scenario := `
apiVersion: v1
kind: Node
metadata: {name: gpu-1}
status: {allocatable: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "1"}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team}
spec: {resources: {gpu: {quota: -1, limit: -1, overQuotaWeight: 1}}}`
	for _, name := range []string{"a", "b"} {
		scenario += `
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: ` + name + `, namespace: ml}
spec: {minMember: 1, queue: team}
---
apiVersion: v1
kind: Pod
metadata: {name: ` + name + `-0, namespace: ml, annotations: {pod-group-name: ` + name + `, gpu-fraction: "0.6"}}
spec: {schedulerName: kai-scheduler, containers: [{name: main, resources: {requests: {cpu: "1"}}}]}`
	}
	sc, err := input.Parse([]byte(scenario))
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Period: time.Second}
	e := testEngine(t, sc, opts)
	e.submit(e.clock.Now())
	for _, js := range e.jobs {
		pod := js.pods[0]
		pod.Labels = map[string]string{scheduling.GPUGroupLabel: "group-1"} // both in one group, as a buggy binder would
		e.onBind(pod, "gpu-1")
	}
	if e.deviceErr == nil || !strings.Contains(e.deviceErr.Error(), "pod ml/b-0 was bound to gpu-1 for 0.6 of device 0, which holds 0.6 already") {
		t.Fatalf("the over-full device was not the run's error: %v", e.deviceErr)
	}
}
