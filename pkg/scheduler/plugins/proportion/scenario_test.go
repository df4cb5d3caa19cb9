package proportion_test

import (
	"context"
	"testing"

	. "github.com/kai-minruntime/kai-scheduler/pkg/scheduler/scenario"
)

// Idle GPUs above quotas are shared by over-quota weight: allocation serves the queue
// furthest below its fair share first, so two elastic jobs settle at their shares.
func TestOverQuotaCapacityFollowsWeights(t *testing.T) {
	h := New("").
		Nodes(Node("n1").GPUs(8)).
		Queues(Queue("light").GPUQuota(0).GPUWeight(1), Queue("heavy").GPUQuota(0).GPUWeight(3)).
		Jobs(Job("l").Queue("light").MinMember(1).Pods(8).GPUs(1),
			Job("h").Queue("heavy").MinMember(1).Pods(8).GPUs(1))
	got := h.RunCycle(context.Background()).BoundPods()
	if got["l"] != 2 || got["h"] != 6 {
		t.Fatalf("bound %v, want light 2 and heavy 6 (weights 1:3 of 8 GPUs)", got)
	}
}

// A higher-priority queue gets over-quota capacity before a lower one, whatever the weights.
func TestOverQuotaCapacityGoesToHigherPriorityFirst(t *testing.T) {
	h := New("").
		Nodes(Node("n1").GPUs(8)).
		Queues(Queue("low").GPUQuota(0).GPUWeight(10), Queue("high").GPUQuota(0).Priority(200)).
		Jobs(Job("l").Queue("low").MinMember(1).Pods(8).GPUs(1),
			Job("h").Queue("high").MinMember(1).Pods(8).GPUs(1))
	got := h.RunCycle(context.Background()).BoundPods()
	if got["h"] != 8 || got["l"] != 0 {
		t.Fatalf("bound %v, want all 8 GPUs to the priority-200 queue", got)
	}
}
