package sim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// at is the run's sample in force at t seconds: the latest at or before it.
func at(t *testing.T, r *report.Result, seconds float64) report.Sample {
	t.Helper()
	var s *report.Sample
	for i := range r.Series {
		if r.Series[i].Time <= seconds {
			s = &r.Series[i]
		}
	}
	if s == nil {
		t.Fatalf("no sample at or before %vs", seconds)
	}
	return *s
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// The room a share leaves on a device is stranded while no waiting pod's share fits it, and
// stops being stranded the moment one that fits waits: the measure follows the waiting
// pods, not the device alone. One 1-GPU node: a (0.6) runs, b (0.5) waits for the 0.4 left;
// c (0.3) arrives, fits, and leaves 0.1 that b still cannot use; when a ends, b fits.
func TestTheRoomASharesLeavesIsStrandedWhileNoWaitingShareFitsIt(t *testing.T) {
	scenario := shareCluster + shareJob("a", `gpu-fraction: "0.6"`, "0s") + shareJob("b", `gpu-fraction: "0.5"`, "1s") +
		shareJob("c", `gpu-fraction: "0.3"`, "10m")
	result := runScenario(t, scenario, 3*time.Hour)
	for _, tt := range []struct {
		what                string
		seconds             float64
		allocated, stranded float64
	}{
		{"a runs, nothing waits: the 0.4 left is idle, not stranded", 0, 0.6, 0},
		{"b waits for 0.5 of a device with 0.4 left", 1, 0.6, 0.4},
		{"c took 0.3 of it; b cannot use the 0.1 left", 600, 0.9, 0.1},
		{"a ended: b fits in the 0.7 left, so nothing is stranded before it binds", 3600, 0.3, 0},
		{"b runs beside c", 3601, 0.8, 0},
	} {
		s := at(t, result, tt.seconds)
		if !near(s.Allocated, tt.allocated) || !near(s.Stranded, tt.stranded) {
			t.Errorf("%s (%vs): allocated %v, stranded %v; want %v and %v", tt.what, tt.seconds, s.Allocated, s.Stranded, tt.allocated, tt.stranded)
		}
	}
	g := result.Totals.GPUs
	if g == nil || g.Capacity != 1 || g.Allocated != 0 || g.Stranded != 0 {
		t.Fatalf("every job ended: nothing allocated or stranded at the end, of 1 GPU; got %+v", g)
	}
	// 0.4 stranded from 1s to 600s and 0.1 from 600s to 3600s (of 1 GPU), over the run up
	// to b's end.
	if want := (0.4*599 + 0.1*3000) / result.Totals.SimulatedSeconds; math.Abs(g.MeanStrandedFraction-want) > 1e-6 {
		t.Errorf("mean stranded %v, want %v", g.MeanStrandedFraction, want)
	}
}

// Free whole GPUs split over nodes are stranded for a pod that needs them on one: two 1-GPU
// pods spread over two 2-GPU nodes leave a GPU free on each, which a 2-GPU pod cannot use.
// Packed on one node they leave the other whole, and the 2-GPU pod runs. The summary says
// so in JSON and text; the plot draws the line.
func TestWholeGPUsSplitOverNodesAreStrandedForAPodNeedingThemOnOne(t *testing.T) {
	scenario := `
apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {allocatable: {cpu: "16", memory: 64Gi, nvidia.com/gpu: "2"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-b}
status: {allocatable: {cpu: "16", memory: 64Gi, nvidia.com/gpu: "2"}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team}
spec: {resources: {gpu: {quota: -1, limit: -1, overQuotaWeight: 1}, cpu: {quota: -1, limit: -1, overQuotaWeight: 1}, memory: {quota: -1, limit: -1, overQuotaWeight: 1}}}` +
		wholeJob("one", "0s") + wholeJob("two", "0s") + gpusJob("pair", 2, "1s")
	sc, err := input.Parse([]byte(scenario))
	if err != nil {
		t.Fatal(err)
	}
	conf := func(gpu string) []byte {
		return []byte("actions: allocate\ntiers:\n- plugins:\n  - name: proportion\n  - name: predicates\n  - name: nodeplacement\n    arguments: {gpu: " + gpu + "}\n")
	}
	for _, tt := range []struct {
		gpu      string
		stranded float64
		text     string
	}{
		{"spread", 2, "GPUs at the end: 2 of 4 allocated (50.0%), 2 stranded (50.0%)"},
		{"binpack", 0, "GPUs at the end: 4 of 4 allocated (100.0%), 0 stranded (0.0%)"},
	} {
		result, err := sim.Run(context.Background(), sc, sim.Options{Config: conf(tt.gpu), Until: 10 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Totals struct {
				GPUs map[string]float64 `json:"gpus"`
			} `json:"totals"`
		}
		var js bytes.Buffer
		if err := report.WriteJSON(&js, result); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(js.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		if g := out.Totals.GPUs; g["capacity"] != 4 || g["stranded"] != tt.stranded || !near(g["strandedFraction"], tt.stranded/4) {
			t.Errorf("%s: totals.gpus %v, want 2 of 4 GPUs stranded with spread, none with binpack", tt.gpu, g)
		}
		var text bytes.Buffer
		if err := report.WriteText(&text, result); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text.String(), tt.text) {
			t.Errorf("%s: the summary lacks %q:\n%s", tt.gpu, tt.text, text.String())
		}
	}
}

// A pod asking shares of two devices can use a device's room only where the node has two
// with that room: on a 2-GPU node with 0.6 held on one device, a pod asking 0.5 of each of 2
// devices fits nowhere, and both the 0.4 and the free device are stranded for it.
func TestSharesOfSeveralDevicesNeedThatManyDevicesWithRoom(t *testing.T) {
	scenario := strings.Replace(shareCluster, `nvidia.com/gpu: "1"`, `nvidia.com/gpu: "2"`, 1) +
		shareJob("held", `gpu-fraction: "0.6"`, "0s") + shareJob("pair", `gpu-fraction: "0.5", gpu-fraction-num-devices: "2"`, "1s")
	result := runScenario(t, scenario, 10*time.Minute)
	if s := at(t, result, 1); !near(s.Allocated, 0.6) || !near(s.Stranded, 1.4) {
		t.Errorf("allocated %v, stranded %v; want 0.6 held and the 1.4 left stranded for the pair", s.Allocated, s.Stranded)
	}
}

// A cluster without GPUs reports none: no gpus object in JSON, no GPU line in the text.
func TestAClusterWithoutGPUsReportsNoGPUs(t *testing.T) {
	scenario := `
apiVersion: v1
kind: Node
metadata: {name: cpu-only}
status: {allocatable: {cpu: "8", memory: 32Gi}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team}
spec: {resources: {cpu: {quota: -1, limit: -1, overQuotaWeight: 1}, memory: {quota: -1, limit: -1, overQuotaWeight: 1}}}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: job, namespace: ml, annotations: {sim.kai.scheduler/duration: 1h}}
spec: {minMember: 1, queue: team}
---
apiVersion: v1
kind: Pod
metadata: {name: job-0, namespace: ml, annotations: {pod-group-name: job}}
spec: {schedulerName: kai-scheduler, containers: [{name: main, resources: {requests: {cpu: "1"}}}]}
`
	result := runScenario(t, scenario, 2*time.Hour)
	var js, text bytes.Buffer
	if err := report.WriteJSON(&js, result); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteText(&text, result); err != nil {
		t.Fatal(err)
	}
	if result.Totals.GPUs != nil || strings.Contains(js.String(), `"gpus": {`) || strings.Contains(text.String(), "GPUs at the end") {
		t.Errorf("GPUs reported for a cluster without any:\n%s\n%s", js.String(), text.String())
	}
}
