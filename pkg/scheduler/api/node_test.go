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

// A node's version moves when what it holds changes, and when a job running there changes
// anywhere (its state decides whether its pods here may be victims); it stays put for
// changes that cannot matter to it.
func TestNodeVersionMovesWithTheJobsRunningThere(t *testing.T) {
	gpu := NewResources(0, 0, 1).With(Pods, 1)
	nodes := []*NodeInfo{{Name: "n1", Allocatable: NewResources(0, 0, 8).With(Pods, 110)},
		{Name: "n2", Allocatable: NewResources(0, 0, 8).With(Pods, 110)},
		{Name: "n3", Allocatable: NewResources(0, 0, 8).With(Pods, 110)}}
	victim := &JobInfo{ID: "ns/v", Namespace: "ns", Name: "v", MinMember: 1}
	victim.AddPod(&PodInfo{Namespace: "ns", Name: "v-0", Job: victim.ID, Request: gpu, Status: Running, NodeName: "n1"})
	victim.AddPod(&PodInfo{Namespace: "ns", Name: "v-1", Job: victim.ID, Request: gpu, Status: Running, NodeName: "n2"})
	other := &JobInfo{ID: "ns/o", Namespace: "ns", Name: "o", MinMember: 1}
	other.AddPod(&PodInfo{Namespace: "ns", Name: "o-0", Job: other.ID, Request: gpu, Status: Pending})
	s, err := NewSnapshot(nodes, []*JobInfo{victim, other}, nil)
	if err != nil {
		t.Fatal(err)
	}
	v1, v2, v3 := s.Node("n1").Version(), s.Node("n2").Version(), s.Node("n3").Version()
	if err := s.SetPodStatus(victim.Pods[0], Releasing, "n1"); err != nil {
		t.Fatal(err)
	}
	if s.Node("n1").Version() == v1 || s.Node("n2").Version() == v2 {
		t.Fatal("evicting the victim's pod on n1 must move n1 (it holds less) and n2 (the victim running there changed)")
	}
	if s.Node("n3").Version() != v3 {
		t.Fatal("n3 holds nothing of the victim: its version must stay")
	}
	v2 = s.Node("n2").Version()
	if err := s.SetPodStatus(other.Pods[0], Allocated, "n3"); err != nil {
		t.Fatal(err)
	}
	if s.Node("n2").Version() != v2 || s.Node("n3").Version() == v3 {
		t.Fatal("placing another job's pod on n3 moves n3 only")
	}
}
