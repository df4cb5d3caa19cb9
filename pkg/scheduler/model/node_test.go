package model

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

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
	if got := node.Bindable().Get(GPU) / MilliGPU; got != 4 {
		t.Fatalf("bindable %d GPUs, want 4: 6 idle less a's 2 (b's victim covers b)", got)
	}
	if got, future := node.Bindable().Get(GPU)/MilliGPU, node.FutureIdle().Get(GPU)/MilliGPU; got > future {
		t.Fatalf("bindable %d exceeds the %d the node will have", got, future)
	}
	pods[2].EvictedFor = "" // the same pod terminating for another reason covers nobody
	if got := node.Bindable().Get(GPU) / MilliGPU; got != 2 {
		t.Fatalf("bindable %d GPUs, want 2: both promises claim idle resources", got)
	}
}

// Bindable runs for every node with a promise each time a pod is tried there: with a full
// node's worth of promises and victims (8 preemptors of one GPU each, half their victims still
// terminating) it must allocate nothing.
func TestBindableAllocatesNothing(t *testing.T) {
	gpu := NewResources(0, 0, 1)
	node := &NodeInfo{Name: "n1", Allocatable: NewResources(0, 0, 8)}
	for i := range 8 {
		pods := []*PodInfo{{Namespace: "ns", Name: fmt.Sprint("p-", i), Job: JobID(fmt.Sprint("ns/p-", i)), Request: gpu, Status: Pipelined, NodeName: "n1"}}
		if i%2 == 0 {
			pods = append(pods, &PodInfo{Namespace: "ns", Name: fmt.Sprint("v-", i), Job: JobID(fmt.Sprint("ns/v-", i)), Request: gpu,
				Status: Releasing, NodeName: "n1", EvictedFor: JobID(fmt.Sprint("ns/p-", i))})
		}
		for _, p := range pods {
			node.addPod(p)
			insertPod(&node.Pods, p)
		}
	}
	if got := node.Bindable().Get(GPU) / MilliGPU; got != 0 {
		t.Fatalf("bindable %d GPUs, want 0: the 4 idle ones are promised to the preemptors whose victims are gone", got)
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = node.Bindable() }); allocs != 0 {
		t.Fatalf("Bindable allocates %.0f times per call, want 0", allocs)
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

// Whoever reads the moved nodes, whenever: every node whose version moved since the
// reader's mark is listed, and a node moved again and again between two reads (by anyone)
// is listed once, not once per move (evicting a large job moves its nodes once per pod).
func TestNodesMovedSinceListsEveryMovedNode(t *testing.T) {
	gpu := NewResources(0, 0, 1).With(Pods, 1)
	var nodes []*NodeInfo
	for i := range 6 {
		nodes = append(nodes, &NodeInfo{Name: fmt.Sprintf("n%d", i), Allocatable: NewResources(0, 0, 8).With(Pods, 110)})
	}
	var jobs []*JobInfo
	for j := range 4 {
		job := &JobInfo{ID: JobID(fmt.Sprintf("ns/j%d", j)), Namespace: "ns", Name: fmt.Sprintf("j%d", j), MinMember: 1}
		for p := range 6 {
			job.AddPod(&PodInfo{Namespace: "ns", Name: fmt.Sprintf("j%d-%d", j, p), Job: job.ID, Request: gpu,
				Status: Running, NodeName: fmt.Sprintf("n%d", (j+p)%6)})
		}
		jobs = append(jobs, job)
	}
	s, err := NewSnapshot(nodes, jobs, nil)
	if err != nil {
		t.Fatal(err)
	}
	type reader struct {
		mark     int
		versions []uint64
		reads    int // everyone's reads when this reader last read
	}
	versions := func() []uint64 {
		var v []uint64
		for _, n := range s.Nodes {
			v = append(v, n.Version())
		}
		return v
	}
	readers := []*reader{{versions: versions()}, {versions: versions()}, {versions: versions()}}
	rng := rand.New(rand.NewPCG(3, 5))
	moves, reads := 0, 0
	statuses := []PodStatus{Running, Releasing, Bound, Pipelined}
	for step := range 2000 {
		job := jobs[rng.IntN(len(jobs))]
		pod := job.Pods[rng.IntN(len(job.Pods))]
		if err := s.SetPodStatus(pod, statuses[rng.IntN(len(statuses))], fmt.Sprintf("n%d", rng.IntN(6))); err != nil {
			t.Fatal(err)
		}
		moves++
		r := readers[rng.IntN(len(readers))]
		if rng.IntN(4) > 0 {
			continue
		}
		moved, next := s.NodesMovedSince(r.mark)
		listed := map[int]bool{}
		for _, i := range moved {
			listed[i] = true
		}
		now := versions()
		for i := range now {
			if now[i] != r.versions[i] && !listed[i] {
				t.Fatalf("step %d: node n%d moved since the reader's mark but is not listed", step, i)
			}
		}
		if limit := len(s.Nodes) * (reads - r.reads + 1); len(moved) > limit {
			t.Fatalf("step %d: %d entries since the reader's mark, more than %d (each node once between reads)", step, len(moved), limit)
		}
		reads++
		r.mark, r.versions, r.reads = next, now, reads
	}
	if moves < 1000 {
		t.Fatalf("only %d moves", moves)
	}
}

// Promises are kept first come, first served. On a 4-GPU node with one GPU used: a's promise
// (the earliest) has lost its victim, whose GPU is idle; c's victims, a gang of two, release
// one GPU more than c was promised here; b, promised in the same cycle as c, was placed onto
// that surplus. a may bind its idle GPU now — b waits for the surplus it counts on, and c for
// its own victims — while b may not take a's GPU, and nobody promised nothing may take any.
func TestAnEarlierPromiseIsNotHeldBackByALaterOneCountingOnSurplus(t *testing.T) {
	gpus := func(n int64) Resources { return NewResources(0, 0, n) }
	early, late := time.Date(2026, 1, 1, 0, 14, 0, 0, time.UTC).Unix(), time.Date(2026, 1, 1, 0, 14, 10, 0, time.UTC).Unix()
	node := &NodeInfo{Name: "n1", Allocatable: gpus(4)}
	a := &PodInfo{Namespace: "ns", Name: "a-0", Job: "ns/a", Request: gpus(1), Status: Pipelined, NodeName: "n1", PromisedAt: early}
	b := &PodInfo{Namespace: "ns", Name: "b-0", Job: "ns/b", Request: gpus(1), Status: Pipelined, NodeName: "n1", PromisedAt: late}
	pods := []*PodInfo{a, b,
		{Namespace: "ns", Name: "c-0", Job: "ns/c", Request: gpus(1), Status: Pipelined, NodeName: "n1", PromisedAt: late},
		{Namespace: "ns", Name: "v-0", Job: "ns/v", Request: gpus(1), Status: Releasing, NodeName: "n1", EvictedFor: "ns/c"},
		{Namespace: "ns", Name: "v-1", Job: "ns/v", Request: gpus(1), Status: Releasing, NodeName: "n1", EvictedFor: "ns/c"},
		{Namespace: "ns", Name: "other", Job: "ns/other", Request: gpus(1), Status: Running, NodeName: "n1"},
	}
	for _, p := range pods {
		node.addPod(p)
		insertPod(&node.Pods, p)
	}
	if got := node.Bindable().Get(GPU) / MilliGPU; got > 0 {
		t.Errorf("a pod promised nothing may bind %d GPUs, want none: the idle one is a's", got)
	}
	withdrawn := func(p *PodInfo, ask func() Resources) int64 { // as the promise's keeping withdraws its own pods first
		node.removePod(p)
		p.Status = Pending
		defer func() { p.Status = Pipelined; node.addPod(p) }()
		return ask().Get(GPU) / MilliGPU
	}
	if got := withdrawn(a, func() Resources { return node.BindableToPromise("ns/a", early) }); got != 1 {
		t.Errorf("a may bind %d GPUs, want 1: its victim's, which b's need does not take while c's surplus covers it", got)
	}
	if got := withdrawn(b, func() Resources { return node.BindableToPromise("ns/b", late) }); got > 0 {
		t.Errorf("b may bind %d GPUs, want none: the idle one is a's, the earlier promise", got)
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = node.BindableToPromise("ns/a", early) }); allocs != 0 {
		t.Errorf("BindableToPromise allocates %.0f times per call, want 0", allocs)
	}
}

// A preemptor promised nothing on a node, whose victim terminates there (its gang placed
// elsewhere), releases a surplus: a later promise placed onto it does not hold back an earlier
// one kept here. On a 2-GPU node with one GPU idle, a (earlier) and b (later, onto c's victim)
// are promised one GPU each: a may bind the idle one.
func TestAVictimOfAPreemptorPromisedElsewhereIsSurplus(t *testing.T) {
	gpus := func(n int64) Resources { return NewResources(0, 0, n) }
	early, late := time.Date(2026, 1, 1, 0, 3, 0, 0, time.UTC).Unix(), time.Date(2026, 1, 1, 0, 3, 10, 0, time.UTC).Unix()
	node := &NodeInfo{Name: "n2", Allocatable: gpus(2)}
	a := &PodInfo{Namespace: "ns", Name: "a-0", Job: "ns/a", Request: gpus(1), Status: Pending, PromisedAt: early}
	for _, p := range []*PodInfo{
		{Namespace: "ns", Name: "b-0", Job: "ns/b", Request: gpus(1), Status: Pipelined, NodeName: "n2", PromisedAt: late},
		{Namespace: "ns", Name: "v-0", Job: "ns/v", Request: gpus(1), Status: Releasing, NodeName: "n2", EvictedFor: "ns/c"},
	} {
		node.addPod(p)
		insertPod(&node.Pods, p)
	}
	if got := node.BindableToPromise(a.Job, a.PromisedAt).Get(GPU) / MilliGPU; got != 1 {
		t.Errorf("a, its pod withdrawn, may bind %d GPUs, want the idle 1: b counts on c's victim", got)
	}
	if got := node.Bindable().Get(GPU) / MilliGPU; got != 0 {
		t.Errorf("a pod promised nothing may bind %d GPUs, want none: b's need counts in full", got)
	}
}
