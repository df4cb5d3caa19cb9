package scheduler_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	. "github.com/kai-minruntime/kai-scheduler/pkg/scheduler/scenario"
)

// busyCluster is a full cluster under pressure: 1000 nodes of 8 GPUs, 8000 running single-GPU
// training jobs spread over 100 leaf queues (10 departments of 10 teams, 80 GPUs of quota
// each), and 2000 pending jobs of mixed gang sizes, half of them of higher priority so that
// preemption has work to do.
func busyCluster() *Harness {
	h := New("")
	for d := range 10 {
		h.Queues(Queue(fmt.Sprintf("dept-%d", d)).GPUQuota(800))
		for t := range 10 {
			h.Queues(Queue(fmt.Sprintf("team-%d-%d", d, t)).Parent(fmt.Sprintf("dept-%d", d)).GPUQuota(80))
		}
	}
	leaf := func(i int) string { return fmt.Sprintf("team-%d-%d", i%10, (i/10)%10) }
	for n := range 1000 {
		h.Nodes(Node(fmt.Sprintf("node-%04d", n)).GPUs(8))
	}
	for i := range 8000 {
		h.Jobs(Job(fmt.Sprintf("run-%05d", i)).Queue(leaf(i)).Priority(50).GPUs(1).
			Running(fmt.Sprintf("node-%04d", i%1000)).StartedAt(Epoch))
	}
	for i := range 2000 {
		pods := 1 + i%4
		priority := int32(50)
		if i%2 == 0 {
			priority = 75
		}
		h.Jobs(Job(fmt.Sprintf("pend-%05d", i)).Queue(leaf(i)).Priority(priority).
			MinMember(int32(pods)).Pods(pods).GPUs(int64(1 + i%8)))
	}
	return h
}

// BenchmarkFullCycle times one whole cycle (session, allocate, reclaim, preempt) of the
// default configuration on busyCluster; building the snapshot is setup and not timed.
func BenchmarkFullCycle(b *testing.B) {
	policy, _, err := scheduler.LoadPolicy(nil)
	if err != nil {
		b.Fatal(err)
	}
	h := busyCluster()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		snapshot := h.Snapshot()
		b.StartTimer()
		scheduler.RunCycle(context.Background(), snapshot, h.Clock, policy, Discard{})
		b.StopTimer()
		if evicted := countReleasing(snapshot); evicted == 0 {
			b.Fatal("the cycle evicted nothing; the benchmark does not exercise preemption")
		}
		b.StartTimer()
	}
}

func countReleasing(s *api.Snapshot) int {
	n := 0
	for _, j := range s.Jobs {
		for _, p := range j.Pods {
			if p.Status == api.Releasing {
				n++
			}
		}
	}
	return n
}
