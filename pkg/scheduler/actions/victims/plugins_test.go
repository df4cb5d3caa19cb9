package victims_test

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

// guard is a fake plugin: it refuses victims by name through IsPreemptible and rejects, through
// a scenario filter, any candidate set that touches a job named in filtered.
type guard struct {
	refused, filtered map[string]bool
	asked             []framework.ActionType
}

func (g *guard) Name() string { return "guard" }
func (g *guard) OnSessionOpen(ssn *framework.Session) {
	ssn.AddIsPreemptibleFn("guard", func(action framework.ActionType, _, victim *model.JobInfo) framework.Status {
		if g.refused[victim.Name] {
			return framework.NewStatus(framework.Unschedulable, victim.Name+" is refused")
		}
		return framework.Status{}
	})
	ssn.AddScenarioFiltersFn("guard", func(action framework.ActionType, _ *model.JobInfo) []framework.ScenarioFilter {
		g.asked = append(g.asked, action)
		return []framework.ScenarioFilter{g}
	})
}
func (g *guard) OnSessionClose(*framework.Session) {}
func (g *guard) Allows(sc framework.Scenario) framework.Status {
	for _, job := range sc.VictimJobs() {
		if g.filtered[job.Name] {
			return framework.NewStatus(framework.Unschedulable, job.Name+" is protected")
		}
	}
	return framework.Status{}
}

var _ = Describe("Plugins deciding victims", func() {
	It("passes the action type to the scenario filters", func() {
		g := &guard{}
		h := New("").Plugins(g).
			Nodes(Node("n1").GPUs(2)).
			Queues(Queue("a").GPUQuota(2), Queue("b").GPUQuota(0)).
			Jobs(Job("borrower").Queue("b").GPUs(2).Running("n1"), Job("owner").Queue("a").GPUs(2))
		h.RunCycle(ctx)
		Expect(g.asked).To(ContainElement(framework.Reclaim))
	})

	It("finds another victim when a filter rejects the cheapest one on the same node", func() {
		g := &guard{filtered: map[string]bool{"protected": true}}
		h := New("").Plugins(g).
			Nodes(Node("n1").GPUs(4)).
			Queues(Queue("team")).
			Jobs(Job("protected").Queue("team").Priority(10).GPUs(2).Running("n1"),
				Job("other").Queue("team").Priority(20).GPUs(2).Running("n1"),
				Job("urgent").Queue("team").Priority(90).GPUs(2))
		round := h.RunCycle(ctx)
		Expect(round.EvictedPods()).To(Equal(map[string]int{"other": 1}))
	})

	It("finds another node when a filter rejects every victim on the cheapest one", func() {
		g := &guard{filtered: map[string]bool{"protected": true}}
		h := New("").Plugins(g).
			Nodes(Node("n1").GPUs(2), Node("n2").GPUs(2)).
			Queues(Queue("team")).
			Jobs(Job("protected").Queue("team").Priority(10).GPUs(2).Running("n1"),
				Job("other").Queue("team").Priority(20).GPUs(2).Running("n2"),
				Job("urgent").Queue("team").Priority(90).GPUs(2))
		round := h.RunCycle(ctx)
		Expect(round.EvictedPods()).To(Equal(map[string]int{"other": 1}))
		Expect(round.PipelinedPods()).To(Equal(map[string]int{"urgent": 1}))
	})

	It("says why when the only victims are refused", func() {
		g := &guard{filtered: map[string]bool{"protected": true}}
		h := New("").Plugins(g).
			Nodes(Node("n1").GPUs(2)).
			Queues(Queue("team")).
			Jobs(Job("protected").Queue("team").Priority(10).GPUs(2).Running("n1"),
				Job("urgent").Queue("team").Priority(90).GPUs(2))
		round := h.RunCycle(ctx)
		Expect(round.Evictions).To(BeEmpty())
		Expect(round.Reasons("urgent")).To(ContainElement(And(ContainSubstring("preempt:"), ContainSubstring("guard: protected is protected"))))
	})

	It("never evicts a victim that IsPreemptible refused, over many rounds of a busy cluster", func() {
		g := &guard{refused: map[string]bool{}}
		h := New("").Plugins(g).Queues(Queue("a").GPUQuota(16), Queue("b").GPUQuota(16))
		for n := range 4 {
			h.Nodes(Node(fmt.Sprintf("n%d", n)).GPUs(8))
		}
		for i := range 32 {
			name := fmt.Sprintf("b-%02d", i)
			if i%3 == 0 {
				g.refused[name] = true
			}
			h.Jobs(Job(name).Queue("b").Priority(int32(10 + i%3*10)).GPUs(1).Running(fmt.Sprintf("n%d", i%4)))
		}
		h.Jobs(Job("a-gang").Queue("a").MinMember(2).Pods(2).GPUs(4), Job("b-urgent").Queue("b").Priority(90).GPUs(4))
		rounds, stable := h.RunRounds(ctx, 20)
		Expect(stable).To(BeTrue())
		evicted := evictionsOf(rounds)
		Expect(evicted).NotTo(BeEmpty(), "the test must exercise evictions")
		for job := range evicted {
			Expect(g.refused).NotTo(HaveKey(job))
		}
		Expect(h.PodsIn("a-gang", model.Running)).To(Equal(2))
		Expect(h.PodsIn("b-urgent", model.Running)).To(Equal(1))
	})
})

var _ = Describe("Stable victim selection", func() {
	build := func() *Harness {
		h := New("").Queues(Queue("dept"), Queue("a").Parent("dept").GPUQuota(12), Queue("b").Parent("dept").GPUQuota(4), Queue("c").GPUQuota(8))
		for n := range 3 {
			h.Nodes(Node(fmt.Sprintf("n%d", n)).GPUs(8))
		}
		for i := range 20 {
			queue := []string{"b", "c"}[i%2]
			h.Jobs(Job(fmt.Sprintf("run-%02d", i)).Queue(queue).Priority(int32(10+i%4*10)).MinMember(1).Pods(1+i%2).GPUs(1).
				Running(fmt.Sprintf("n%d", i%3), fmt.Sprintf("n%d", (i+1)%3)).StartedAt(Epoch.Add(-time.Duration(i) * time.Minute)))
		}
		h.Jobs(Job("a-gang").Queue("a").MinMember(3).Pods(3).GPUs(4), Job("b-high").Queue("b").Priority(90).GPUs(2))
		return h
	}

	It("makes identical decisions on identical input and reaches a fixed point without ping-pong", func() {
		first, stable := build().RunRounds(ctx, 30)
		Expect(stable).To(BeTrue())
		second, _ := build().RunRounds(ctx, 30)
		Expect(second).To(Equal(first))
		evictedJobs := map[string]int{}
		for _, r := range first {
			for _, e := range r.Evictions {
				evictedJobs[strings.TrimPrefix(string(e.Job), "ns/")]++
			}
		}
		Expect(evictedJobs).NotTo(HaveKey("a-gang"), "a reclaimer is not evicted back")
		Expect(evictedJobs).NotTo(HaveKey("b-high"))
	})
})
