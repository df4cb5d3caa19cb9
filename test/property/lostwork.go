package property

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// lostWorkStream seeds the lost-work family; its scenarios share no draw with Generate's.
const lostWorkStream = 0x6c6f7374 // "lost"

// GenerateLostWork builds a scenario of interchangeable victims, where what orders them is
// how much work each would lose (L1), and which Generate's varied jobs seldom produce: a
// borrower queue (quota 0) fills one to three nodes with one-pod training jobs that all ask
// the same, each with its own startup, checkpoint interval and, for about half, a checkpoint
// claim; an owner queue that deserves the whole cluster submits one to three jobs later, which
// reclaim; now and then a higher-priority borrower job preempts. Min-runtimes are drawn as
// Generate draws them. The same seed always gives the same scenario.
func GenerateLostWork(seed uint64) *Scenario {
	r := rand.New(rand.NewPCG(seed^lostWorkStream, ^seed^lostWorkStream))
	s := &Scenario{Seed: seed}
	gpus := 1 + r.IntN(2) // per pod, for every job
	for i := range 1 + r.IntN(3) {
		s.Nodes = append(s.Nodes, Node{Name: fmt.Sprintf("node-%d", i), GPUs: gpus * (2 + r.IntN(3))})
	}
	total := s.totalGPUs()
	s.Queues = []*Queue{
		{Name: "owner", Quota: float64(total), Limit: -1, Weight: 1, Leaf: true, ReclaimMinRuntime: optionalMinRuntime(r)},
		{Name: "borrower", Limit: -1, Weight: r.IntN(2), Leaf: true, PreemptMinRuntime: optionalMinRuntime(r), ReclaimMinRuntime: optionalMinRuntime(r)},
	}
	s.DefaultPreempt, s.DefaultReclaim = optionalMinRuntime(r), optionalMinRuntime(r)
	s.Method = []string{"", "lca", "queue"}[r.IntN(3)]
	s.Period = []time.Duration{time.Second, 2 * time.Second, 5 * time.Second}[r.IntN(3)]
	job := func(queue, class string, pods int, submitAt, duration time.Duration) *Job {
		j := &Job{Name: fmt.Sprintf("j%02d", len(s.Jobs)), Queue: queue, PriorityClass: class, Priority: classPriority[class],
			MinMember: pods, GPUs: gpus, SubmitAt: submitAt, Duration: duration}
		for k := range pods {
			j.Pods = append(j.Pods, Pod{Name: fmt.Sprintf("%s-%d", j.Name, k), Grace: r.IntN(31)})
		}
		s.Jobs = append(s.Jobs, j)
		return j
	}
	// Enough borrowers to fill the cluster and a few to wait, submitted over the first minute
	// so that their starts, and so their checkpoints, differ.
	for range total/gpus + r.IntN(3) {
		j := job("borrower", "train", 1, time.Duration(r.IntN(7))*10*time.Second, time.Duration(30+r.IntN(91))*10*time.Second)
		if r.IntN(2) == 0 {
			j.Startup = time.Duration(1+r.IntN(6)) * 10 * time.Second
		}
		if r.IntN(3) != 0 {
			j.Checkpoint = time.Duration(3+r.IntN(16)) * 10 * time.Second
		}
		if r.IntN(2) == 0 {
			j.CheckpointClaim = drawClaim(r, j.SubmitAt)
		}
	}
	for range 1 + r.IntN(3) {
		pods := 1 + r.IntN(min(3, total/gpus))
		job("owner", "train", pods, time.Duration(12+r.IntN(109))*10*time.Second, time.Duration(6+r.IntN(25))*10*time.Second)
	}
	if r.IntN(2) == 0 {
		job("borrower", "build-preemptible", 1, time.Duration(12+r.IntN(109))*10*time.Second, time.Duration(6+r.IntN(25))*10*time.Second)
	}
	s.Horizon = s.horizon()
	return s
}
