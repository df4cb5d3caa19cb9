package sim_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/internal/simtest"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// eventsOf lists the run's events of one type and job, in time order.
func eventsOf(r *report.Result, typ, podGroup string) []report.Event {
	var found []report.Event
	for _, e := range r.Events {
		if e.Type == typ && e.PodGroup == podGroup {
			found = append(found, e)
		}
	}
	return found
}

// The documented example: the 4-GPU job waits for the trainings' hour of protection, then one
// training is moved (an Evict event of action consolidation for the job) and bound again on
// the other node, and the job gets the node it left. With consolidation off, it waits for a
// training to complete.
func TestConsolidationMovesAJobOnceItsProtectionEnds(t *testing.T) {
	config := string(simtest.Example(t, "consolidation.conf.yaml"))
	r := simulateWith(t, simtest.Example(t, "consolidation.yaml"), sim.Options{Config: []byte(config)})

	evicted := eventsOf(r, report.EventEvict, "team/train-1")
	if len(evicted) != 1 {
		t.Fatalf("train-1 evicted %d times, want once: %+v", len(evicted), r.Events)
	}
	move := evicted[0]
	if move.Action != "consolidation" || move.Preemptor != "team/big" || move.Time != time.Hour.Seconds() {
		t.Fatalf("the move: %+v, want action consolidation for team/big at 1:00, when the protection ends", move)
	}
	binds := eventsOf(r, report.EventBind, "team/train-1")
	if len(binds) != 2 || binds[1].Time <= move.Time || binds[1].Node == move.Node {
		t.Fatalf("train-1's binds %+v: want it bound again, after the move, on the other node", binds)
	}
	big := eventsOf(r, report.EventBind, "team/big")
	if len(big) != 1 || big[0].Node != move.Node || len(big[0].GPUDevices) != 4 {
		t.Fatalf("big's binds %+v: want the 4 GPUs of %s, the node train-1 left", big, move.Node)
	}
	if n := len(eventsOf(r, report.EventEvict, "team/train-4")); n != 0 {
		t.Fatalf("train-4 evicted %d times: one move is enough", n)
	}

	off := 0
	r = simulateWith(t, simtest.Example(t, "consolidation.yaml"), sim.Options{Config: []byte(config), MaxConsolidationPreemptees: &off})
	for _, e := range r.Events {
		if e.Type == report.EventEvict {
			t.Fatalf("consolidation off, yet %+v", e)
		}
	}
	if big := eventsOf(r, report.EventBind, "team/big"); len(big) != 1 || big[0].Time < 3*time.Hour.Seconds() {
		t.Fatalf("consolidation off: big's binds %+v, want it bound once a training completes (3:00)", big)
	}
}

// A share moves to another device of its own node: two half-GPU notebooks, one on each
// device of a 2-GPU node, leave no whole GPU for a training; one notebook moves beside the
// other, and the training gets the device it left.
func TestConsolidationMovesAShareToAnotherDevice(t *testing.T) {
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
`
	job := func(name, at, annotations, resources string) string {
		return `---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: ` + name + `, namespace: ml, annotations: {sim.kai.scheduler/duration: 2h, sim.kai.scheduler/submit-at: ` + at + `}}
spec: {minMember: 1, queue: team}
---
apiVersion: v1
kind: Pod
metadata: {name: ` + name + `-0, namespace: ml, annotations: {pod-group-name: ` + name + annotations + `}}
spec: {schedulerName: kai-scheduler, containers: [{name: main, resources: ` + resources + `}]}
`
	}
	// Spread puts the second notebook on the empty device; the training arrives later.
	scenario += job("notebook-a", "0s", `, gpu-fraction: "0.5"`, `{requests: {cpu: "1"}}`) +
		job("notebook-b", "10s", `, gpu-fraction: "0.5"`, `{requests: {cpu: "1"}}`) +
		job("train", "1m", "", `{limits: {nvidia.com/gpu: "1"}}`)
	config := strings.Replace(string(simtest.Example(t, "consolidation.conf.yaml")), "- name: nodeplacement",
		"- name: nodeplacement\n    arguments: {gpu: spread}", 1)
	r := simulateWith(t, []byte(scenario), sim.Options{Config: []byte(config)})

	first := eventsOf(r, report.EventBind, "ml/notebook-a")[0].GPUDevices
	second := eventsOf(r, report.EventBind, "ml/notebook-b")
	if len(second) == 0 || second[0].GPUDevices[0] == first[0] {
		t.Fatalf("notebooks bound %v and %+v: the scenario needs them on two devices", first, second)
	}
	var moved []report.Event
	for _, name := range []string{"ml/notebook-a", "ml/notebook-b"} {
		moved = append(moved, eventsOf(r, report.EventEvict, name)...)
	}
	if len(moved) != 1 || moved[0].Action != "consolidation" {
		t.Fatalf("moves %+v: want one notebook moved by consolidation", moved)
	}
	rebound := eventsOf(r, report.EventBind, moved[0].PodGroup)
	other := "ml/notebook-a"
	if moved[0].PodGroup == other {
		other = "ml/notebook-b"
	}
	stays := eventsOf(r, report.EventBind, other)[0].GPUDevices
	if len(rebound) != 2 || rebound[1].GPUDevices[0] != stays[0] {
		t.Fatalf("the moved notebook's binds %+v: want it bound again on device %d, beside the other", rebound, stays[0])
	}
	train := eventsOf(r, report.EventBind, "ml/train")
	if len(train) != 1 || train[0].GPUDevices[0] == stays[0] {
		t.Fatalf("train's binds %+v: want the device the notebook left", train)
	}
}
