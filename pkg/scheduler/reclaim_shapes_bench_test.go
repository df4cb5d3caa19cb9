package scheduler_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

// reclaimShape is one of upstream KAI-Scheduler's reclaim benchmark shapes
// (pkg/scheduler/actions/integration_tests/reclaim there): n nodes of 8 GPUs full of 8n
// running single-GPU jobs in a borrower queue that deserves nothing (over-quota weight 0),
// and in an owner queue that deserves all 8n GPUs either 8n pending single-GPU jobs (many)
// or one gang of n/2 pods of 8 GPUs (large). With minRuntime, the borrower queue has a 30s
// reclaim min-runtime that the victims, started a minute earlier, have served: protection
// is checked and protects nothing. With protected, the min-runtime is an hour: every victim
// is refused, and every reclaimer told which protections hold it back.
type reclaimShape struct {
	large, minRuntime, protected bool
	// halfProtected protects every other borrowed job (started 10 s ago, 30 s of
	// min-runtime): reclaimers that find victims and reclaimers refused them alternate.
	halfProtected bool
}

func (s reclaimShape) build(n int) *Harness {
	borrower := Queue("borrower").GPUQuota(0).GPUWeight(0)
	switch {
	case s.protected:
		borrower = borrower.ReclaimMinRuntime(time.Hour)
	case s.minRuntime, s.halfProtected:
		borrower = borrower.ReclaimMinRuntime(30 * time.Second)
	}
	h := New("").Queues(Queue("owner").GPUQuota(float64(8*n)), borrower)
	for i := range n {
		h.Nodes(Node(fmt.Sprintf("node-%04d", i)).GPUs(8))
	}
	started := Epoch.Add(-time.Minute)
	for i := range 8 * n {
		start := started
		if s.halfProtected && i%2 == 0 {
			start = Epoch.Add(-10 * time.Second)
		}
		h.Jobs(Job(fmt.Sprintf("borrowed-%05d", i)).Queue("borrower").GPUs(1).
			Running(fmt.Sprintf("node-%04d", i%n)).StartedAt(start).PodsStartedAt(start))
	}
	if s.large {
		return h.Jobs(Job("large").Queue("owner").MinMember(int32(n / 2)).Pods(n / 2).GPUs(8))
	}
	for i := range 8 * n {
		h.Jobs(Job(fmt.Sprintf("owned-%05d", i)).Queue("owner").GPUs(1))
	}
	return h
}

// reclaimers and victims are what a cycle on the shape must do: every owner pod placed
// (pipelined onto GPUs being freed), and as many borrowed pods releasing as the owner pods
// need GPUs.
func (s reclaimShape) want(n int) (reclaimers, victims int) {
	if s.large {
		return n / 2, n / 2 * 8
	}
	return 8 * n, 8 * n
}

// BenchmarkReclaimShapes times one whole cycle (session, allocate, reclaim, preempt) of the
// default configuration on each shape and size; building the snapshot is setup and not
// timed. Every iteration checks that the cycle did the work.
func BenchmarkReclaimShapes(b *testing.B) {
	for _, shape := range []struct {
		name  string
		shape reclaimShape
	}{
		{"many", reclaimShape{}},
		{"many-minruntime", reclaimShape{minRuntime: true}},
		{"large", reclaimShape{large: true}},
	} {
		for _, n := range []int{10, 50, 100, 200, 500, 1000} {
			b.Run(fmt.Sprintf("%s/nodes=%d", shape.name, n), func(b *testing.B) {
				wantPlaced, wantVictims := shape.shape.want(n)
				benchCycles(b, shape.shape.build(n), func(snapshot *model.Snapshot) error {
					if placed, victims := countOwnerPlaced(snapshot), countReleasing(snapshot); placed != wantPlaced || victims != wantVictims {
						return fmt.Errorf("%d owner pods placed and %d victims releasing, want %d and %d", placed, victims, wantPlaced, wantVictims)
					}
					return nil
				})
			})
		}
	}
}

func countOwnerPlaced(s *model.Snapshot) int {
	n := 0
	for _, j := range s.Jobs {
		if j.Queue != "owner" {
			continue
		}
		for _, p := range j.Pods {
			if p.Status == model.Pipelined || p.Status.IsActive() {
				n++
			}
		}
	}
	return n
}
