package api

import "testing"

// Two promises on one 8-GPU node: a's victims are gone, b's victim still terminates. Idle
// resources go to a's promise first; b's is covered by its own victim, so others may bind
// only what is left (4), and never more than the node will have once all is released.
func TestBindableLeavesEachPromiseWhatItsOwnVictimsFreed(t *testing.T) {
	gpus := func(n int64) Resources { return NewResources(0, 0, n) }
	node := &NodeInfo{Name: "n1", Allocatable: gpus(8)}
	pods := []*PodInfo{
		{Namespace: "ns", Name: "a-0", Job: "ns/a", Request: gpus(2), Status: Pipelined, NodeName: "n1"},
		{Namespace: "ns", Name: "b-0", Job: "ns/b", Request: gpus(2), Status: Pipelined, NodeName: "n1"},
		{Namespace: "ns", Name: "v-0", Job: "ns/v", Request: gpus(2), Status: Releasing, NodeName: "n1", EvictedFor: "ns/b"},
	}
	for _, p := range pods {
		node.addPod(p)
		insertPod(&node.Pods, p)
	}
	if got := node.Bindable().Get(GPU); got != 4 {
		t.Fatalf("bindable %d GPUs, want 4: 6 idle less a's 2 (b's victim covers b)", got)
	}
	if got, future := node.Bindable().Get(GPU), node.FutureIdle().Get(GPU); got > future {
		t.Fatalf("bindable %d exceeds the %d the node will have", got, future)
	}
	pods[2].EvictedFor = "" // the same pod terminating for another reason covers nobody
	if got := node.Bindable().Get(GPU); got != 2 {
		t.Fatalf("bindable %d GPUs, want 2: both promises claim idle resources", got)
	}
}
