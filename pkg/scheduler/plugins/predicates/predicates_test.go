package predicates

import (
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
)

func TestMatchNodeSelector(t *testing.T) {
	pod := &api.PodInfo{NodeSelector: map[string]string{"zone": "a", "gpu": "h100", "pool": "train"}}
	matching := &api.NodeInfo{Labels: map[string]string{"zone": "a", "gpu": "h100", "pool": "train", "extra": "x"}}
	if err := MatchNodeSelector(pod, matching); err != nil {
		t.Fatalf("a node with every label refused: %v", err)
	}
	// Two labels are wrong: the reason names the first by key, every time, whatever the
	// map's iteration order.
	wrong := &api.NodeInfo{Labels: map[string]string{"zone": "b", "gpu": "a100", "pool": "train"}}
	for range 50 {
		if err := MatchNodeSelector(pod, wrong); err == nil || err.Error() != "node selector gpu=h100 does not match" {
			t.Fatalf("got %v, want the gpu label named", err)
		}
	}
}

// The check runs for every pod on every node: matching must not allocate.
func TestMatchNodeSelectorAllocatesNothing(t *testing.T) {
	pod := &api.PodInfo{NodeSelector: map[string]string{"zone": "a", "gpu": "h100"}}
	node := &api.NodeInfo{Labels: map[string]string{"zone": "a", "gpu": "h100"}}
	if allocs := testing.AllocsPerRun(100, func() { _ = MatchNodeSelector(pod, node) }); allocs != 0 {
		t.Fatalf("%v allocations per matching check, want 0", allocs)
	}
}
