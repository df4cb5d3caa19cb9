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
	// Spread puts the second notebook on the empty device; the training arrives later.
	scenario := gpuCluster(2, 2, "node-0") +
		teamJob("notebook-a", "2h", `, gpu-fraction: "0.5"`, `{requests: {cpu: "1"}}`, "0s") +
		teamJob("notebook-b", "2h", `, gpu-fraction: "0.5"`, `{requests: {cpu: "1"}}`, "10s") +
		teamJob("train", "2h", "", `{limits: {nvidia.com/gpu: "1"}}`, "1m")
	config := strings.Replace(string(simtest.Example(t, "consolidation.conf.yaml")), "- name: nodeplacement",
		"- name: nodeplacement\n    arguments: {gpu: spread}", 1)
	r := simulateWith(t, []byte(scenario), sim.Options{Config: []byte(config)})

	first, second := eventsOf(r, report.EventBind, "ml/notebook-a"), eventsOf(r, report.EventBind, "ml/notebook-b")
	if len(first) == 0 || len(second) == 0 || second[0].GPUDevices[0] == first[0].GPUDevices[0] {
		t.Fatalf("notebooks bound %+v and %+v: the scenario needs them on two devices", first, second)
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
	if len(train) != 1 || train[0].GPUDevices[0] == stays[0] || train[0].Time > moved[0].Time+time.Minute.Seconds() {
		t.Fatalf("train's binds %+v: want the device the notebook left, once it is gone (moved at %v s), not at a completion",
			train, moved[0].Time)
	}
}

// A move is not a preemption: every job consolidation moves is bound again within moments of
// its pods' termination. Three 4-GPU nodes each run a 2-GPU training whose neighbour
// completed; two 4-GPU jobs arrive together. One training is moved; the second job does not
// count on the room the moved training still needs while it terminates (a later cycle's move
// once took it, and the training waited an hour).
func TestAMovedJobIsBoundAgainAtOnce(t *testing.T) {
	scenario := gpuCluster(4, 12, "node-a", "node-b", "node-c")
	gpus := func(n int) string {
		return fmt.Sprintf(`{requests: {cpu: "2", nvidia.com/gpu: "%d"}, limits: {nvidia.com/gpu: "%d"}}`, n, n)
	}
	for i := 1; i <= 6; i++ {
		duration := "3h"
		if i%2 == 0 {
			duration = "30m" // one of each node's two trainings
		}
		scenario += teamJob(fmt.Sprintf("t%d", i), duration, "", gpus(2), "0s")
	}
	scenario += teamJob("p1", "1h", "", gpus(4), "40m") + teamJob("p2", "1h", "", gpus(4), "40m")
	config := simtest.Example(t, "consolidation.conf.yaml")
	r := simulateWith(t, []byte(scenario), sim.Options{Config: config})

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
