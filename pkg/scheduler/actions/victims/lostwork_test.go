package victims_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

// Least lost work first: among victims priority, fair share and the kind of unit leave
// equal, the one whose work is saved the latest goes first.
var _ = Describe("Among equal victims", func() {
	// victim is a one-pod job on its own 1-GPU node, started at start (stamp and pods), with
	// a checkpoint at checkpoint unless nil.
	type victim struct {
		start      time.Duration // from Epoch
		checkpoint *time.Duration
	}
	at := func(d time.Duration) *time.Duration { return &d }
	// reclaimFrom builds two borrowed victims a (on n1) and b (on n2) and an owner that needs
	// one of their nodes. Name order alone would evict a.
	reclaimFrom := func(a, b victim) *Harness {
		h := New("").
			Nodes(Node("n1").GPUs(1), Node("n2").GPUs(1)).
			Queues(Queue("owner").GPUQuota(1), Queue("borrower").GPUQuota(0))
		for _, v := range []struct {
			name, node string
			victim
		}{{"a", "n1", a}, {"b", "n2", b}} {
			start := Epoch.Add(v.start)
			job := Job(v.name).Queue("borrower").GPUs(1).Running(v.node).StartedAt(start).PodsStartedAt(start)
			if v.checkpoint != nil {
				job.CheckpointedAt(Epoch.Add(*v.checkpoint))
			}
			h.Jobs(job)
		}
		return h.Jobs(Job("own").Queue("owner").GPUs(1))
	}

	DescribeTable("reclaim evicts the one that loses least",
		func(a, b victim, evicted string) {
			h := reclaimFrom(a, b)
			Expect(h.RunCycle(ctx).EvictedPods()).To(Equal(map[string]int{evicted: 1}))
		},
		Entry("without checkpoints, the later start, as before checkpoints were read",
			victim{start: -2 * time.Hour}, victim{start: -time.Hour}, "b"),
		Entry("the later checkpoint, though the other started later and sorts first by name",
			victim{start: -time.Hour, checkpoint: at(-30 * time.Minute)}, victim{start: -2 * time.Hour, checkpoint: at(-10 * time.Minute)}, "b"),
		Entry("a checkpoint beats a start before it",
			victim{start: -time.Hour}, victim{start: -2 * time.Hour, checkpoint: at(-10 * time.Minute)}, "b"),
		Entry("a start beats a checkpoint before it",
			victim{start: -10 * time.Minute}, victim{start: -2 * time.Hour, checkpoint: at(-time.Hour)}, "a"),
		Entry("a checkpoint of an earlier run saves nothing of this one: it counts as the run's start, later than the other's",
			victim{start: -2 * time.Hour}, victim{start: -time.Hour, checkpoint: at(-3 * time.Hour)}, "b"),
		Entry("two checkpoints in the future both count as now: the name decides, not which claims more",
			victim{start: -time.Hour, checkpoint: at(time.Hour)}, victim{start: -time.Hour, checkpoint: at(2 * time.Hour)}, "a"),
		Entry("a checkpoint in the future counts as now: later than any past one",
			victim{start: -time.Hour, checkpoint: at(-time.Minute)}, victim{start: -time.Hour, checkpoint: at(time.Hour)}, "b"),
	)

	It("preempt evicts the one that loses least, too", func() {
		h := New("").Nodes(Node("n1").GPUs(1), Node("n2").GPUs(1)).Queues(Queue("default"))
		start := Epoch.Add(-2 * time.Hour)
		h.Jobs(Job("a").GPUs(1).Running("n1").StartedAt(start).PodsStartedAt(start).CheckpointedAt(Epoch.Add(-time.Hour)),
			Job("b").GPUs(1).Running("n2").StartedAt(start).PodsStartedAt(start).CheckpointedAt(Epoch.Add(-time.Minute)),
			Job("urgent").Priority(75).GPUs(1))
		Expect(h.RunCycle(ctx).EvictedPods()).To(Equal(map[string]int{"b": 1}))
	})

	It("never outweighs priority: a higher-priority job that saved more recently stays", func() {
		h := New("").Nodes(Node("n1").GPUs(1), Node("n2").GPUs(1)).Queues(Queue("default"))
		start := Epoch.Add(-2 * time.Hour)
		h.Jobs(Job("low").Priority(40).GPUs(1).Running("n1").StartedAt(start).PodsStartedAt(start),
			Job("mid").Priority(50).GPUs(1).Running("n2").StartedAt(start).PodsStartedAt(start).CheckpointedAt(Epoch.Add(-time.Second)),
			Job("urgent").Priority(75).GPUs(1))
		Expect(h.RunCycle(ctx).EvictedPods()).To(Equal(map[string]int{"low": 1}))
	})

	It("are chosen the same however much later the same cluster is scheduled", func() {
		// a started later, b saved later: cycles hours and days apart agree on b.
		a := victim{start: -time.Hour, checkpoint: at(-50 * time.Minute)}
		b := victim{start: -3 * time.Hour, checkpoint: at(-30 * time.Minute)}
		for _, later := range []time.Duration{0, time.Minute, 6 * time.Hour, 30 * 24 * time.Hour} {
			h := reclaimFrom(a, b)
			h.Clock.Step(later)
			Expect(h.RunCycle(ctx).EvictedPods()).To(Equal(map[string]int{"b": 1}), "%s later", later)
		}
	})

	It("keeps its promise to the reclaimer when the other victim reports a later checkpoint", func() {
		h := reclaimFrom(victim{start: -time.Hour, checkpoint: at(-30 * time.Minute)}, victim{start: -time.Hour, checkpoint: at(-time.Minute)})
		Expect(h.RunCycle(ctx).EvictedPods()).To(Equal(map[string]int{"b": 1}))
		// b still terminates; a now saved later than b did, and would be ranked first.
		h.Clock.Step(time.Second)
		now := h.Clock.Now()
		h.JobNamed("a").LastCheckpoint = &now
		waiting := h.RunCycle(ctx)
		Expect(waiting.Evictions).To(BeEmpty(), "the reclaimer waits for b's GPU, promised to it")
		Expect(h.PodsIn("own", model.Pipelined)).To(Equal(1))
		Expect(h.JobNamed("own").Pods[0].NodeName).To(Equal("n2"))
	})
})
