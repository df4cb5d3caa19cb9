package allocate_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

// allocateOnly runs the allocate action alone with the plugins of the default configuration.
const allocateOnly = `
actions: allocate
tiers:
- plugins:
  - name: priority
  - name: predicates
  - name: nodeplacement
`

var ctx = context.Background()

var _ = Describe("Gang allocation", func() {
	It("binds a gang that fits, all of it, and stamps its start", func() {
		h := New(allocateOnly).
			Nodes(Node("n1").GPUs(4), Node("n2").GPUs(4)).
			Queues(Queue("default")).
			Jobs(Job("train").MinMember(4).Pods(4).GPUs(2))
		round := h.RunCycle(ctx)
		Expect(round.BoundPods()).To(Equal(map[string]int{"train": 4}))
		Expect(round.Started).To(ConsistOf(Start{Job: "ns/train", At: Epoch}))
		Expect(h.JobNamed("train").LastStartTimestamp).To(HaveValue(Equal(Epoch)))
	})

	It("binds nothing of a gang that does not fit, and says why", func() {
		h := New(allocateOnly).
			Nodes(Node("n1").GPUs(4), Node("n2").GPUs(4)).
			Queues(Queue("default")).
			Jobs(Job("train").MinMember(3).Pods(3).GPUs(4))
		round := h.RunCycle(ctx)
		Expect(round.Binds).To(BeEmpty())
		Expect(round.Pipelined).To(BeEmpty())
		Expect(round.Started).To(BeEmpty())
		Expect(round.Reasons("train")).To(ConsistOf(And(
			ContainSubstring("gang of 3 pods does not fit"),
			ContainSubstring("(0/2 nodes are available: 2 Insufficient nvidia.com/gpu.)"))))
		Expect(h.PodsIn("train", model.Pending)).To(Equal(3))
	})

	It("leaves room for the next job when a gang does not fit", func() {
		h := New(allocateOnly).
			Nodes(Node("n1").GPUs(4)).
			Queues(Queue("default")).
			Jobs(
				Job("big").Priority(90).MinMember(2).Pods(2).GPUs(4),
				Job("small").Priority(10).MinMember(2).Pods(2).GPUs(2),
			)
		round := h.RunCycle(ctx)
		Expect(round.BoundPods()).To(Equal(map[string]int{"small": 2}))
	})

	It("needs every sub-group's minimum, not just the job's", func() {
		h := New(allocateOnly).
			Nodes(Node("n1").GPUs(3)).
			Queues(Queue("default")).
			Jobs(Job("serve").MinMember(2).SubGroup("leader", 1, 1).SubGroup("workers", 3, 3).GPUs(1))
		round := h.RunCycle(ctx)
		Expect(round.Binds).To(BeEmpty(), "2 pods would satisfy minMember but not the workers' minimum of 3")

		h = New(allocateOnly).
			Nodes(Node("n1").GPUs(4)).
			Queues(Queue("default")).
			Jobs(Job("serve").MinMember(2).SubGroup("leader", 1, 1).SubGroup("workers", 3, 3).GPUs(1))
		Expect(h.RunCycle(ctx).BoundPods()).To(Equal(map[string]int{"serve": 4}))
	})
})

var _ = Describe("Elastic growth", func() {
	It("grows a job beyond its gang one pod at a time while resources last", func() {
		h := New(allocateOnly).
			Nodes(Node("n1").GPUs(4)).
			Queues(Queue("default")).
			Jobs(Job("elastic").MinMember(2).Pods(6).GPUs(1))
		round := h.RunCycle(ctx)
		Expect(round.BoundPods()).To(Equal(map[string]int{"elastic": 4}))
		Expect(round.Started).To(HaveLen(1), "one start, not one per pod")
		Expect(h.PodsIn("elastic", model.Pending)).To(Equal(2))
	})

	It("shares surplus capacity between elastic jobs in turns", func() {
		h := New(allocateOnly).
			Nodes(Node("n1").GPUs(6)).
			Queues(Queue("default")).
			Jobs(
				Job("a").MinMember(1).Pods(6).GPUs(1).CreatedAt(Epoch),
				Job("b").MinMember(1).Pods(6).GPUs(1).CreatedAt(Epoch.Add(time.Second)),
			)
		Expect(h.RunCycle(ctx).BoundPods()).To(Equal(map[string]int{"a": 3, "b": 3}))
	})

	It("does not re-stamp a running job that grows", func() {
		started := Epoch.Add(-time.Hour)
		h := New(allocateOnly).
			Nodes(Node("n1").GPUs(4)).
			Queues(Queue("default")).
			Jobs(Job("elastic").MinMember(2).Pods(4).GPUs(1).Running("n1", "n1").StartedAt(started))
		round := h.RunCycle(ctx)
		Expect(round.BoundPods()).To(Equal(map[string]int{"elastic": 2}))
		Expect(round.Started).To(BeEmpty())
		Expect(h.JobNamed("elastic").LastStartTimestamp).To(HaveValue(Equal(started)))
	})

	It("stamps a fresh start when a fully evicted job starts again", func() {
		firstStart := Epoch.Add(-time.Hour)
		h := New(allocateOnly).
			Nodes(Node("n1").GPUs(2)).
			Queues(Queue("default")).
			Jobs(Job("train").MinMember(2).Pods(2).GPUs(1).Running("n1", "n1").StartedAt(firstStart))
		for _, pod := range h.JobNamed("train").Pods {
			pod.Status = model.Releasing // evicted; terminates before the next round
		}
		rounds, stable := h.RunRounds(ctx, 5)
		Expect(stable).To(BeTrue())
		Expect(h.PodsIn("train", model.Running)).To(Equal(2))
		restarted := Epoch.Add(DefaultPeriod)
		Expect(rounds[1].Started).To(ConsistOf(Start{Job: "ns/train", At: restarted}))
		Expect(h.JobNamed("train").LastStartTimestamp).To(HaveValue(Equal(restarted)))
	})
})
