package sim

import (
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
)

// Counting the allocated and stranded GPUs runs on every tick, over every pending pod and
// device of the cluster: it must not allocate once each pod's share has been read.
func TestCountingStrandedGPUsAllocatesNothing(t *testing.T) {
	scenario := `
apiVersion: v1
kind: Node
metadata: {name: gpu-2, labels: {nvidia.com/gpu.memory: "40000"}}
status: {allocatable: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "2"}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team}
spec: {resources: {gpu: {quota: -1, limit: -1, overQuotaWeight: 1}}}
`
	for i, request := range []struct{ annotations, resources string }{
		{`, gpu-fraction: "0.5"`, `requests: {cpu: "1"}`},
		{`, gpu-memory: "10000"`, `requests: {cpu: "1"}`},
		{`, gpu-fraction: "0.2", gpu-fraction-num-devices: "2"`, `requests: {cpu: "1"}`},
		{``, `limits: {nvidia.com/gpu: "1"}`},
	} {
		name := string(rune('a' + i))
		scenario += `
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: ` + name + `, namespace: ml}
spec: {minMember: 1, queue: team}
---
apiVersion: v1
kind: Pod
metadata: {name: ` + name + `-0, namespace: ml, annotations: {pod-group-name: ` + name + request.annotations + `}}
spec: {schedulerName: kai-scheduler, containers: [{name: main, resources: {` + request.resources + `}}]}`
	}
	sc, err := input.Parse([]byte(scenario))
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Period: time.Second}
	e := testEngine(t, sc, opts)
	e.submit(e.clock.Now()) // four pods pending, one of each kind of request
	if _, stranded := e.gpuUse(); stranded != 0 {
		t.Fatalf("free devices every waiting pod fits are stranded: %d", stranded)
	}
	if allocs := testing.AllocsPerRun(100, func() { e.gpuUse() }); allocs != 0 {
		t.Errorf("counting allocated and stranded GPUs allocates %v times a tick", allocs)
	}
}
