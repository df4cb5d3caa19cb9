package sim_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim/internal/simtest"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// Upstream KAI's documented topology example runs in kai-sim as upstream documents it: a
// 3-pod job with required zone and preferred rack goes to the zone with fewer free GPUs,
// filling rack A1 before A2; a required-rack pair takes one rack; a gang no rack can hold and a
// job naming a topology that does not exist wait, each told why.
func TestTopologyExampleInTheSimulator(t *testing.T) {
	r := simulate(t, simtest.Example(t, "topology.yaml"), "")
	nodes := map[string][]string{}
	for _, e := range r.Events {
		if e.Type == report.EventBind {
			nodes[e.PodGroup] = append(nodes[e.PodGroup], e.Node)
		}
	}
	for job, want := range map[string][]string{"default/train": {"a1", "a1", "a2"}, "default/pair": {"b1", "b1"}} {
		got := slices.Sorted(slices.Values(nodes[job]))
		if !slices.Equal(got, want) {
			t.Errorf("%s bound on %v, want %v", job, got, want)
		}
	}
	for _, j := range r.Jobs {
		waiting := strings.Join(j.Waiting, "; ")
		switch j.PodGroup {
		case "default/wide":
			if j.FirstStart != nil || !strings.Contains(waiting, "gang of 3 pods does not fit in one rack of topology dc") {
				t.Errorf("wide: started %v, told %q; want it waiting, told no rack holds it", j.FirstStart, waiting)
			}
		case "default/typo":
			if j.FirstStart != nil || !strings.Contains(waiting, `names topology "dc-typo", which does not exist`) {
				t.Errorf("typo: started %v, told %q; want it waiting, told its topology does not exist", j.FirstStart, waiting)
			}
		}
	}
}
