package sim_test

import (
	"fmt"
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

// A move is not a preemption: every job consolidation moves is bound again within moments of
// its pods' termination. Three 4-GPU nodes each run a 2-GPU training whose neighbour
// completed; two 4-GPU jobs arrive together. One training is moved; the second job does not
// count on the room the moved training still needs while it terminates (a later cycle's move
// once took it, and the training waited an hour).
func TestAMovedJobIsBoundAgainAtOnce(t *testing.T) {
	var b strings.Builder
	for _, n := range []string{"node-a", "node-b", "node-c"} {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Node\nmetadata: {name: %s}\nstatus: {allocatable: {cpu: \"32\", memory: 256Gi, nvidia.com/gpu: \"4\", pods: \"110\"}}\n", n)
	}
	b.WriteString("---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: team}\nspec: {resources: {gpu: {quota: 12, limit: -1, overQuotaWeight: 1}, cpu: {quota: -1, limit: -1, overQuotaWeight: 1}, memory: {quota: -1, limit: -1, overQuotaWeight: 1}}}\n")
	job := func(name string, gpus int, annotations string) {
		fmt.Fprintf(&b, "---\napiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: %s, namespace: team, annotations: {%s}}\nspec: {minMember: 1, queue: team}\n", name, annotations)
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s-0, namespace: team, annotations: {pod-group-name: %s}}\n"+
			"spec: {schedulerName: kai-scheduler, containers: [{name: main, resources: {requests: {cpu: \"2\", nvidia.com/gpu: \"%d\"}, limits: {nvidia.com/gpu: \"%d\"}}}]}\n", name, name, gpus, gpus)
	}
	for i := 1; i <= 6; i++ {
		duration := "3h"
		if i%2 == 0 {
			duration = "30m" // one of each node's two trainings
		}
		job(fmt.Sprintf("t%d", i), 2, "sim.kai.scheduler/duration: "+duration)
	}
	job("p1", 4, "sim.kai.scheduler/duration: 1h, sim.kai.scheduler/submit-at: 40m")
	job("p2", 4, "sim.kai.scheduler/duration: 1h, sim.kai.scheduler/submit-at: 40m")
	config := simtest.Example(t, "consolidation.conf.yaml")
	r := simulateWith(t, []byte(b.String()), sim.Options{Config: config})

	moved := 0
	for _, e := range r.Events {
		if e.Type != report.EventEvict {
			continue
		}
		if e.Action != "consolidation" {
			t.Fatalf("an eviction other than a move: %+v", e)
		}
		moved++
		var again []report.Event
		for _, bind := range eventsOf(r, report.EventBind, e.PodGroup) {
			if bind.Time > e.Time {
				again = append(again, bind)
			}
		}
		if len(again) == 0 || again[0].Time > e.Time+time.Minute.Seconds() {
			t.Errorf("%s was moved at %v s and bound again %+v: want within a minute (its 30 s of termination and a cycle)", e.PodGroup, e.Time, again)
		}
	}
	if moved == 0 {
		t.Fatal("nothing moved: the scenario no longer exercises consolidation")
	}
}
