package reclaim_test

import (
	"context"
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// TestLargeJobReclaimEvictsWholeNodes checks the benchmark's scenario does what it measures:
// the gang of 10 eight-GPU pods reclaims exactly ten whole nodes (80 single-GPU jobs) and is
// pipelined onto them.
func TestLargeJobReclaimEvictsWholeNodes(t *testing.T) {
	h := largeJobReclaim(100)
	round := h.RunCycle(context.Background())
	if got := len(round.Evictions); got != 80 {
		t.Fatalf("%d evictions, want 80", got)
	}
	nodes := map[string]int{}
	for _, e := range round.Evictions {
		nodes[e.Node]++
	}
	if len(nodes) != 10 {
		t.Fatalf("evictions on %d nodes, want 10 whole nodes: %v", len(nodes), nodes)
	}
	if got := round.PipelinedPods()["large"]; got != 10 {
		t.Fatalf("%d gang pods pipelined, want 10", got)
	}
	if h.PodsIn("large", model.Pipelined) != 10 {
		t.Fatal("the gang waits for the victims to terminate, holding the promise of their nodes")
	}
}
