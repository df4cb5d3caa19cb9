package scheduler_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework/frameworktest"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

// busyCluster is a full cluster under pressure: n nodes of 8 GPUs (1000 in the benchmark),
// 8n running single-GPU training jobs spread over 100 leaf queues (10 departments of 10
// teams, an even share of the GPUs as quota each), and 2n pending jobs of mixed gang sizes,
// half of them of higher priority so that preemption has work to do.
func busyCluster(n int) *Harness {
	h := busyNodesAndQueues(n)
	for i := range 8 * n {
		h.Jobs(Job(fmt.Sprintf("run-%05d", i)).Queue(busyLeaf(i)).Priority(50).GPUs(1).
			Running(fmt.Sprintf("node-%04d", i%n)).StartedAt(Epoch))
	}
	for i := range 2 * n {
		h.Jobs(busyPending(i).GPUs(int64(1 + i%8)))
	}
	return h
}

// busyNodesAndQueues are busyCluster's n nodes of 8 GPUs and its 100 leaf queues under 10
// departments, each with an even share of the GPUs as quota.
func busyNodesAndQueues(n int) *Harness {
	h := New("")
	for d := range 10 {
		h.Queues(Queue(fmt.Sprintf("dept-%d", d)).GPUQuota(float64(8 * n / 10)))
		for t := range 10 {
			h.Queues(Queue(fmt.Sprintf("team-%d-%d", d, t)).Parent(fmt.Sprintf("dept-%d", d)).GPUQuota(float64(8 * n / 100)))
		}
	}
	for k := range n {
		h.Nodes(Node(fmt.Sprintf("node-%04d", k)).GPUs(8))
	}
	return h
}

// busyLeaf is the leaf queue of busyCluster's i-th job.
func busyLeaf(i int) string { return fmt.Sprintf("team-%d-%d", i%10, (i/10)%10) }

// busyPending is busyCluster's i-th pending job, without its GPUs: a gang of 1 to 4 pods,
// every other one of the higher priority, so that preemption has work to do.
func busyPending(i int) *JobBuilder {
	pods := 1 + i%4
	priority := int32(50)
	if i%2 == 0 {
		priority = 75
	}
	return Job(fmt.Sprintf("pend-%05d", i)).Queue(busyLeaf(i)).Priority(priority).MinMember(int32(pods)).Pods(pods)
}

// sharedCluster is busyCluster with half its pods asking for half a GPU (GPU sharing): of its
// 8n running jobs, every other one runs on half a device (one to a device: every device is
// taken, half of it by a share, whose other half is room for a pending share), and its
// pending jobs of the lower priority ask for halves. It has busyCluster's pods, for the cost of a cycle with shares
// beside that of one without.
func sharedCluster(n int) *Harness {
	h := busyNodesAndQueues(n)
	for i := range 8 * n {
		node := fmt.Sprintf("node-%04d", i%n)
		job := Job(fmt.Sprintf("run-%05d", i)).Queue(busyLeaf(i)).Priority(50).Running(node).StartedAt(Epoch)
		if (i/n)%2 == 1 { // the node's odd devices: each node runs four shares and four whole GPUs
			job.Share(0.5, 1).OnDevice(fmt.Sprintf("%s-device-%d", node, i/n))
		} else {
			job.GPUs(1)
		}
		h.Jobs(job)
	}
	for i := range 2 * n {
		job := busyPending(i)
		if i%2 == 1 { // the lower-priority half: the others preempt as in busyCluster
			job.Share(0.5, 1)
		} else {
			job.GPUs(int64(1 + i%8))
		}
		h.Jobs(job)
	}
	return h
}

// BenchmarkFullCycleShares is BenchmarkFullCycle on sharedCluster: the cost of shares.
func BenchmarkFullCycleShares(b *testing.B) {
	benchCycles(b, sharedCluster(1000), func(snapshot *model.Snapshot) error {
		if countReleasing(snapshot) == 0 {
			return fmt.Errorf("the cycle evicted nothing; the benchmark does not exercise preemption")
		}
		return nil
	})
}

// BenchmarkFullCycle times one whole cycle (session, allocate, reclaim, preempt) of the
// default configuration on busyCluster; building the snapshot is setup and not timed.
func BenchmarkFullCycle(b *testing.B) {
	benchCycles(b, busyCluster(1000), func(snapshot *model.Snapshot) error {
		if countReleasing(snapshot) == 0 {
			return fmt.Errorf("the cycle evicted nothing; the benchmark does not exercise preemption")
		}
		return nil
	})
}

// benchCycles times whole cycles of the default configuration, each on a fresh snapshot of
// h built untimed, and fails unless check accepts what every cycle did.
func benchCycles(b *testing.B, h *Harness, check func(*model.Snapshot) error) {
	policy, _, err := scheduler.LoadPolicy(nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		snapshot := h.Snapshot()
		b.StartTimer()
		scheduler.RunCycle(context.Background(), snapshot, h.Clock, policy, frameworktest.Discard{})
		b.StopTimer()
		if err := check(snapshot); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

func countReleasing(s *model.Snapshot) int {
	n := 0
	for _, j := range s.Jobs {
		for _, p := range j.Pods {
			if p.Status == model.Releasing {
				n++
			}
		}
	}
	return n
}
