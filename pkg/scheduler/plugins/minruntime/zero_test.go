package minruntime_test

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

const withoutMinRuntime = `
actions: "allocate, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: proportion
  - name: predicates
  - name: nodeplacement
`

var _ = Describe("Min-runtime of zero", func() {
	// busy is a cluster where reclaim and preempt both have work: three queues over two
	// levels, elastic and gang jobs of several priorities, some queues saying 0s explicitly.
	// edits, when given, change every job alike.
	busy := func(config string, edits ...func(*JobBuilder) *JobBuilder) *Harness {
		h := New(config).Queues(Queue("dept"),
			Queue("a").Parent("dept").GPUQuota(12).ReclaimMinRuntime(0).PreemptMinRuntime(0),
			Queue("b").Parent("dept").GPUQuota(4), Queue("c").GPUQuota(8).PreemptMinRuntime(0))
		for n := range 3 {
			h.Nodes(Node(fmt.Sprintf("n%d", n)).GPUs(8))
		}
		edit := func(b *JobBuilder) *JobBuilder {
			for _, e := range edits {
				b = e(b)
			}
			return b
		}
		for i := range 20 {
			queue := []string{"b", "c", "a"}[i%3]
			h.Jobs(edit(Job(fmt.Sprintf("run-%02d", i)).Queue(queue).Priority(int32(10+i%4*10)).
				MinMember(int32(1+i%2)).Pods(1+i%3).GPUs(1).
				Running(fmt.Sprintf("n%d", i%3), fmt.Sprintf("n%d", (i+1)%3), fmt.Sprintf("n%d", (i+2)%3)).
				StartedAt(Epoch.Add(-time.Duration(i) * time.Second))))
		}
		return h.Jobs(edit(Job("a-gang").Queue("a").MinMember(3).Pods(3).GPUs(4)),
			edit(Job("b-high").Queue("b").Priority(90).GPUs(2)),
			edit(Job("c-high").Queue("c").Priority(95).MinMember(2).Pods(3).GPUs(2)))
	}

	It("changes no decision compared with the plugin disabled", func() {
		without, stable := busy(withoutMinRuntime).RunRounds(ctx, 30)
		Expect(stable).To(BeTrue())
		evictions := 0
		for _, r := range without {
			evictions += len(r.Evictions)
		}
		Expect(evictions).To(BeNumerically(">", 0), "the comparison must cover evictions")

		with, _ := busy(withMinRuntime(`defaultPreemptMinRuntime: 0s, defaultReclaimMinRuntime: "0", reclaimResolveMethod: lca`)).RunRounds(ctx, 30)
		// The plugin explains each eviction (no min-runtime applied) and writes no protection:
		// a status saying "protected for nothing" would cost a write per running job. The
		// decisions are the same.
		for k := range with {
			r := &with[k]
			Expect(r.ProtectionChanges).To(BeEmpty(), "round %d writes protections of nothing", k)
			for i := range r.Evictions {
				Expect(r.Evictions[i].Reason.Note.Text).To(ContainSubstring("min-runtime applied (0s from "))
				r.Evictions[i].Reason.Note = framework.EvictionNote{}
			}
		}
		Expect(with).To(Equal(without))
	})

	// The delay is only ever a refusal: a delay of 0s leaves every decision as without it,
	// and so does one that ended before the cycle, until an eviction re-arms it for the
	// victims (after which they wait, as they should).
	It("changes no decision with preemption delays of 0s or already ended", func() {
		created := func(b *JobBuilder) *JobBuilder { return b.CreatedAt(Epoch.Add(-time.Hour)) }
		delayed := func(d time.Duration) func(*JobBuilder) *JobBuilder {
			return func(b *JobBuilder) *JobBuilder { return b.PreemptionDelay(d) }
		}
		config := withMinRuntime(``)
		without, stable := busy(config, created).RunRounds(ctx, 30)
		Expect(stable).To(BeTrue())
		Expect(without[0].Evictions).NotTo(BeEmpty(), "the comparison must cover evictions")

		zero, _ := busy(config, created, delayed(0)).RunRounds(ctx, 30)
		Expect(zero).To(Equal(without))
		ended, _ := busy(config, created, delayed(time.Minute)).RunRounds(ctx, 1)
		Expect(ended[0]).To(Equal(without[0]))
	})
})
