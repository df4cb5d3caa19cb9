package stalegang_test

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/conf"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

var ctx = context.Background()

// withStaleness runs the built-in default configuration plus stalegangeviction; extra is
// added at the top level (globalDefaultStalenessGracePeriod).
func withStaleness(extra string) string {
	const actions = `actions: "allocate, reclaim, preempt"`
	config := strings.Replace(string(conf.DefaultYAML()), actions, `actions: "allocate, reclaim, preempt, stalegangeviction"`+"\n"+extra, 1)
	if !strings.Contains(string(conf.DefaultYAML()), actions) {
		panic("the built-in default's actions are not " + actions)
	}
	return config
}

// shortGang is a gang of 4 with one pod gone: three run, none waits.
func shortGang() *JobBuilder {
	return Job("train").MinMember(4).Pods(3).GPUs(1).Running("n1", "n1", "n1").StartedAt(Epoch.Add(-time.Hour))
}

func evictedAt(rounds []Round) []time.Time {
	var at []time.Time
	for _, r := range rounds {
		if len(r.Evictions) > 0 {
			at = append(at, r.Time)
		}
	}
	return at
}

var _ = Describe("Stale gang eviction", func() {
	It("keeps a gang below its minimum within its grace period and evicts all of it after", func() {
		h := New(withStaleness("")).Nodes(Node("n1").GPUs(4)).Queues(Queue("default")).
			Jobs(shortGang(), Job("whole").MinMember(1).Pods(1).GPUs(1).Running("n1"))
		first := h.RunCycle(ctx)
		Expect(first.Evictions).To(BeEmpty())
		Expect(first.AnswersChangeAt).To(Equal(Epoch.Add(60*time.Second)), "the loop wakes when the grace period ends")

		rounds := h.RunUntil(ctx, Epoch.Add(60*time.Second))
		Expect(evictedAt(rounds)).To(Equal([]time.Time{Epoch.Add(60 * time.Second)}))
		last := rounds[len(rounds)-1]
		Expect(last.EvictedPods()).To(Equal(map[string]int{"train": 3}), "the whole gang, and no other job")
		for _, e := range last.Evictions {
			Expect(e.Reason.Action).To(Equal(framework.StaleGangEviction))
			Expect(e.Reason.Preemptor).To(BeEmpty())
			Expect(e.Reason.Note.Text).To(And(ContainSubstring("its gang has had 3 of the 4 pods it needs"), ContainSubstring("staleness grace period 1m0s")))
		}
		Expect(h.Metrics.Recorded().StaleGangEvictions).To(Equal(1))
	})

	It("says what a gang counted in sub-groups lacks: ready sub-groups, not pods", func() {
		// Replica r-1 lost one of its two pods: one of the two replicas the job needs is ready.
		short := Job("infer").MinSubGroup(2).SubGroup("r-0", 2, 2).SubGroup("r-1", 2, 1).GPUs(1).
			Running("n1", "n1", "n1").StartedAt(Epoch.Add(-time.Hour))
		h := New(withStaleness("")).Nodes(Node("n1").GPUs(4)).Queues(Queue("default")).Jobs(short)
		rounds := h.RunUntil(ctx, Epoch.Add(60*time.Second))
		last := rounds[len(rounds)-1]
		Expect(last.EvictedPods()).To(Equal(map[string]int{"infer": 3}))
		Expect(last.Evictions[0].Reason.Note.Text).To(ContainSubstring(
			"its gang needs 2 of its 2 sub-groups ready (at least 4 pods): 1 are (sub-group r-1 needs 2 pods: 1 placed)"))
	})

	It("takes its default grace period from globalDefaultStalenessGracePeriod", func() {
		h := New(withStaleness("globalDefaultStalenessGracePeriod: 5s")).Nodes(Node("n1").GPUs(4)).
			Queues(Queue("default")).Jobs(shortGang())
		Expect(evictedAt(h.RunUntil(ctx, Epoch.Add(10*time.Second)))).To(Equal([]time.Time{Epoch.Add(5 * time.Second)}))
	})

	It("lets the job's own period win over the default", func() {
		h := New(withStaleness("")).Nodes(Node("n1").GPUs(4)).
			Queues(Queue("default")).Jobs(shortGang().StalenessGracePeriod(3 * time.Second))
		Expect(evictedAt(h.RunUntil(ctx, Epoch.Add(10*time.Second)))).To(Equal([]time.Time{Epoch.Add(3 * time.Second)}))
	})

	It("never evicts a job whose grace period is negative", func() {
		h := New(withStaleness("globalDefaultStalenessGracePeriod: 1s")).Nodes(Node("n1").GPUs(4)).
			Queues(Queue("default")).Jobs(shortGang().StalenessGracePeriod(-time.Second))
		rounds := h.RunUntil(ctx, Epoch.Add(time.Hour/12))
		Expect(evictedAt(rounds)).To(BeEmpty())
		Expect(rounds[0].AnswersChangeAt).To(BeZero(), "nothing to wake for")
	})

	It("never evicts anything when the default is negative and the job sets none", func() {
		h := New(withStaleness("globalDefaultStalenessGracePeriod: -1s")).Nodes(Node("n1").GPUs(4)).
			Queues(Queue("default")).Jobs(shortGang())
		Expect(evictedAt(h.RunUntil(ctx, Epoch.Add(2*time.Minute)))).To(BeEmpty())
	})

	It("counts from a pod's failure, which a restarted scheduler still reads", func() {
		jobs := func() *JobBuilder { return shortGang().PodFailedAt(Epoch.Add(-50 * time.Second)) }
		h := New(withStaleness("")).Nodes(Node("n1").GPUs(4)).Queues(Queue("default")).Jobs(jobs())
		Expect(h.RunCycle(ctx).AnswersChangeAt).To(Equal(Epoch.Add(10 * time.Second)))
		// A new scheduler (a new policy, nothing remembered) sees the same failure.
		restarted := New(withStaleness("")).Nodes(Node("n1").GPUs(4)).Queues(Queue("default")).Jobs(jobs())
		Expect(evictedAt(restarted.RunUntil(ctx, Epoch.Add(20*time.Second)))).To(Equal([]time.Time{Epoch.Add(10 * time.Second)}))
	})

	It("counts from the creation of a replacement pod still waiting", func() {
		h := New(withStaleness("")).Nodes(Node("n1").GPUs(3)).Queues(Queue("default")).
			Jobs(Job("train").MinMember(4).Pods(4).GPUs(1).Running("n1", "n1", "n1").StartedAt(Epoch.Add(-time.Hour)))
		h.JobNamed("train").Pods[3].CreationTime = Epoch.Add(-40 * time.Second)
		Expect(evictedAt(h.RunUntil(ctx, Epoch.Add(30*time.Second)))).To(Equal([]time.Time{Epoch.Add(20 * time.Second)}))
	})

	It("evicts a stale gang that min-runtime protects, and counts it as no preemption or reclaim", func() {
		h := New(withStaleness("")).Nodes(Node("n1").GPUs(4)).
			Queues(Queue("default").PreemptMinRuntime(24 * time.Hour).ReclaimMinRuntime(24 * time.Hour)).
			Jobs(shortGang().StartedAt(Epoch))
		rounds := h.RunUntil(ctx, Epoch.Add(60*time.Second))
		Expect(evictedAt(rounds)).To(Equal([]time.Time{Epoch.Add(60 * time.Second)}))
		recorded := h.Metrics.Recorded()
		Expect(recorded.MinRuntimeRefusals).To(BeEmpty())
		for _, r := range rounds {
			Expect(r.ProtectedRefusals).To(BeEmpty())
		}
	})

	It("evicts a job whose sub-group lost its pod, though the job has its overall minimum", func() {
		h := New(withStaleness("globalDefaultStalenessGracePeriod: 2s")).Nodes(Node("n1").GPUs(4)).Queues(Queue("default")).
			Jobs(Job("train").MinMember(3).SubGroup("lead", 2, 3).SubGroup("work", 1, 0).GPUs(1).Running("n1", "n1", "n1"))
		rounds := h.RunUntil(ctx, Epoch.Add(5*time.Second))
		Expect(evictedAt(rounds)).To(Equal([]time.Time{Epoch.Add(2 * time.Second)}))
		Expect(rounds[2].Evictions[0].Reason.Note.Text).To(ContainSubstring("its sub-group work has had 0 of the 1 pods it needs"))
	})

	It("leaves alone a complete gang, an elastic job above its minimum and a job with nothing running", func() {
		h := New(withStaleness("globalDefaultStalenessGracePeriod: 1s")).Nodes(Node("n1").GPUs(8)).Queues(Queue("default")).
			Jobs(Job("whole").MinMember(2).Pods(2).GPUs(1).Running("n1", "n1"),
				Job("elastic").MinMember(2).Pods(3).GPUs(1).Running("n1", "n1", "n1"),
				Job("waiting").MinMember(9).Pods(9).GPUs(1))
		Expect(evictedAt(h.RunUntil(ctx, Epoch.Add(10*time.Second)))).To(BeEmpty())
	})
})
