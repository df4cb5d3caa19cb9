package scheduler_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

const (
	benchBlockLabel = "example.com/block"
	benchRackLabel  = "example.com/rack"
)

// rackGangShape is reclaim of rack-sized gangs: n nodes of 8 GPUs in racks of 16 nodes and
// blocks of 4 racks, full of 8n single-GPU jobs of a borrower queue that deserves nothing,
// and an owner queue that deserves half the GPUs with n/32 pending gangs of 16 pods of 8
// GPUs — a rack each. With constrained, each gang must run in one rack (requiredTopologyLevel
// rack), as upstream's topology reclaim tests ask; without, the same gangs go anywhere. Half
// the borrowed jobs are protected by min-runtime (every other one), so that most racks cannot
// be freed and a search must find those that can.
type rackGangShape struct {
	constrained bool
}

func (s rackGangShape) build(n int) *Harness {
	h := New("").
		Topology("dc", benchBlockLabel+"=block", benchRackLabel+"=rack").
		Queues(Queue("owner").GPUQuota(float64(4*n)), Queue("borrower").GPUQuota(0).GPUWeight(0).ReclaimMinRuntime(30*time.Second))
	for i := range n {
		h.Nodes(Node(fmt.Sprintf("node-%04d", i)).GPUs(8).
			Label(benchBlockLabel, fmt.Sprintf("b%02d", i/64)).Label(benchRackLabel, fmt.Sprintf("r%03d", i/16)))
	}
	for i := range 8 * n {
		node := i % n
		start := Epoch.Add(-time.Minute)
		if (node/16)%2 == 1 && i/n == 0 {
			start = Epoch.Add(-10 * time.Second) // one protected job on each node of every other rack
		}
		h.Jobs(Job(fmt.Sprintf("borrowed-%05d", i)).Queue("borrower").GPUs(1).
			Running(fmt.Sprintf("node-%04d", node)).StartedAt(start).PodsStartedAt(start))
	}
	for g := range n / 32 {
		job := Job(fmt.Sprintf("gang-%03d", g)).Queue("owner").MinMember(16).Pods(16).GPUs(8)
		if s.constrained {
			job = job.InTopology("dc", "rack", "")
		}
		h.Jobs(job)
	}
	return h
}

// BenchmarkReclaimTopology times one whole cycle of the default configuration reclaiming
// for rack-sized gangs, with and without their rack constraint; building the snapshot is
// setup. Every iteration checks that every gang was placed, and, constrained, each in one rack.
func BenchmarkReclaimTopology(b *testing.B) {
	for _, constrained := range []bool{false, true} {
		name := "anywhere"
		if constrained {
			name = "rack"
		}
		for _, n := range []int{100, 500, 1000} {
			b.Run(fmt.Sprintf("%s/nodes=%d", name, n), func(b *testing.B) {
				shape := rackGangShape{constrained: constrained}
				benchCycles(b, shape.build(n), func(snapshot *model.Snapshot) error {
					return checkRackGangs(snapshot, n/32, constrained)
				})
			})
		}
	}
}

// checkRackGangs checks that every gang's 16 pods were placed, each gang in one rack when
// constrained.
func checkRackGangs(s *model.Snapshot, gangs int, constrained bool) error {
	placed := 0
	for _, j := range s.Jobs {
		if j.Queue != "owner" {
			continue
		}
		racks := map[string]bool{}
		for _, p := range j.Pods {
			if p.Status == model.Pipelined || p.Status.IsActive() {
				placed++
				racks[s.Node(p.NodeName).Labels[benchRackLabel]] = true
			}
		}
		if constrained && len(racks) > 1 {
			return fmt.Errorf("gang %s spans racks %v", j.Name, racks)
		}
	}
	if placed != 16*gangs {
		return fmt.Errorf("%d owner pods placed, want %d", placed, 16*gangs)
	}
	return nil
}
