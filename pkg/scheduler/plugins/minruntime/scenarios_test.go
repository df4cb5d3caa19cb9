package minruntime_test

import (
	"fmt"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/metrics"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

var _ = Describe("Protection over virtual time", func() {
	It("blocks a reclaim while the victim is protected, and reclaims in the first cycle after", func() {
		h := New(withMinRuntime(`defaultReclaimMinRuntime: 5m`)).
			Nodes(Node("n1").GPUs(4)).
			Queues(Queue("owner").GPUQuota(4), Queue("borrower").GPUQuota(0).ReclaimMinRuntime(30*time.Second)).
			Jobs(Job("borrowed").Queue("borrower").MinMember(4).Pods(4).GPUs(1).
				Running("n1", "n1", "n1", "n1").StartedAt(Epoch.Add(-10*time.Second)),
				Job("owned").Queue("owner").MinMember(4).Pods(4).GPUs(1))
		expiry := Epoch.Add(20 * time.Second)

		rounds := h.RunUntil(ctx, Epoch.Add(25*time.Second))
		Expect(rounds[0].Reasons("owned")).To(ContainElement(
			"reclaim: victims are protected by min-runtime: ns/borrowed until " + expiry.Format(time.RFC3339) +
				" (30s from queue borrower); the first protection ends at " + expiry.Format(time.RFC3339)))
		Expect(rounds[0].ReasonCodes("owned")).To(ContainElement(model.ReasonMinRuntimeProtected))
		at := firstEviction(rounds)
		Expect(at).NotTo(Equal(-1), "the reclaim must happen once protection ends")
		Expect(rounds[at].Time).To(Equal(expiry), "the queue's 30s, not the 5m default, counted from the start stamp")
		Expect(rounds[at].EvictedPods()).To(Equal(map[string]int{"borrowed": 4}))
		Expect(rounds[at].Evictions[0].Reason.Note.Text).To(Equal(
			"it ran 30s; its reclaim min-runtime of 30s from queue borrower ended at 2026-01-01T00:00:20Z"))
		Expect(h.PodsIn("owned", model.Running)).To(Equal(4))
	})

	// Identical reclaimers are searched once (a second search would fail alike): every one
	// of them must still be told which protections hold it back, not only the first; and
	// where some victims are free, those reclaimers that get none are told too.
	It("tells every waiting reclaimer of one shape what protects its victims", func() {
		h := New(withMinRuntime(`defaultReclaimMinRuntime: 0s`)).
			Nodes(Node("n1").GPUs(4)).
			Queues(Queue("owner").GPUQuota(4), Queue("borrower").GPUQuota(0).ReclaimMinRuntime(30*time.Second))
		for i := range 4 {
			started := Epoch.Add(-10 * time.Second) // protected for 20 s more
			if i == 0 {
				started = Epoch.Add(-time.Minute) // free to take
			}
			h.Jobs(Job(fmt.Sprintf("borrowed-%d", i)).Queue("borrower").GPUs(1).Running("n1").StartedAt(started))
		}
		for i := range 4 {
			h.Jobs(Job(fmt.Sprintf("owned-%d", i)).Queue("owner").GPUs(1))
		}
		rounds, _ := h.RunRounds(ctx, 1)
		Expect(rounds[0].EvictedPods()).To(Equal(map[string]int{"borrowed-0": 1}))
		told := 0
		for i := range 4 {
			if slices.Contains(rounds[0].ReasonCodes(fmt.Sprintf("owned-%d", i)), model.ReasonMinRuntimeProtected) {
				told++
			}
		}
		Expect(told).To(Equal(3), "the three reclaimers left without a victim are each told of the protections")
	})

	It("blocks a preemption while the victim is protected, and preempts in the first cycle after", func() {
		h := New(withMinRuntime(`defaultPreemptMinRuntime: 30s`)).
			Nodes(Node("n1").GPUs(2)).
			Queues(Queue("team")).
			Jobs(Job("low").Queue("team").Priority(10).MinMember(2).Pods(2).GPUs(1).Running("n1", "n1").StartedAt(Epoch),
				Job("high").Queue("team").Priority(90).MinMember(2).Pods(2).GPUs(1))
		rounds := h.RunUntil(ctx, Epoch.Add(40*time.Second))
		at := firstEviction(rounds)
		Expect(at).NotTo(Equal(-1))
		Expect(rounds[at].Time).To(Equal(Epoch.Add(30 * time.Second)))
		Expect(rounds[at].Evictions[0].Reason.Action).To(BeEquivalentTo("preempt"))
		Expect(h.PodsIn("high", model.Running)).To(Equal(2))
	})

	It("keeps protecting a job whose start stamp was edited to a later time, from its pods' real start", func() {
		h := New(withMinRuntime(`defaultPreemptMinRuntime: 30s`)).
			Nodes(Node("n1").GPUs(1)).
			Queues(Queue("team")).
			Jobs(Job("low").Queue("team").Priority(10).GPUs(1).Running("n1").
				PodsStartedAt(Epoch.Add(-time.Minute)).StartedAt(Epoch.Add(time.Hour)),
				Job("high").Queue("team").Priority(90).GPUs(1))
		Expect(h.RunCycle(ctx).EvictedPods()).To(Equal(map[string]int{"low": 1}),
			"the pod ran a minute ago: 30s of protection are over, whatever the annotation says")
	})
})

var _ = Describe("LCA and queue resolution on the design's tree", func() {
	// A → B (600s) → {C, D (60s)}, C → {leaf1 (0s), leaf2 (180s)}, D → leaf3. leaf3 deserves
	// the GPUs that leaf1 borrows.
	build := func(method string) *Harness {
		return New(withMinRuntime(`reclaimResolveMethod: `+method)).
			Nodes(Node("n1").GPUs(2)).
			Queues(Queue("a").GPUQuota(2), Queue("b").Parent("a").GPUQuota(2).ReclaimMinRuntime(600*time.Second),
				Queue("c").Parent("b").GPUQuota(0), Queue("d").Parent("b").GPUQuota(2).ReclaimMinRuntime(60*time.Second),
				Queue("leaf1").Parent("c").GPUQuota(0).ReclaimMinRuntime(0), Queue("leaf2").Parent("c").GPUQuota(0).ReclaimMinRuntime(180*time.Second),
				Queue("leaf3").Parent("d").GPUQuota(2)).
			Jobs(Job("victim").Queue("leaf1").MinMember(2).Pods(2).GPUs(1).Running("n1", "n1").StartedAt(Epoch.Add(-100*time.Second)),
				Job("reclaimer").Queue("leaf3").MinMember(2).Pods(2).GPUs(1))
	}

	It("with lca protects leaf1's job by C's inherited 600s", func() {
		round := build("lca").RunCycle(ctx)
		Expect(round.Evictions).To(BeEmpty())
		Expect(round.Reasons("reclaimer")).To(ContainElement(ContainSubstring(
			Epoch.Add(500 * time.Second).Format(time.RFC3339))))
	})

	It("with queue uses leaf1's own 0s and reclaims at once", func() {
		Expect(build("queue").RunCycle(ctx).EvictedPods()).To(Equal(map[string]int{"victim": 2}))
	})
})

var _ = Describe("Elastic jobs", func() {
	It("lose only their surplus pods while protected", func() {
		h := New(withMinRuntime(`defaultPreemptMinRuntime: 1h`)).
			Nodes(Node("n1").GPUs(4)).
			Queues(Queue("team")).
			Jobs(Job("elastic").Queue("team").Priority(10).MinMember(2).Pods(4).GPUs(1).
				Running("n1", "n1", "n1", "n1").StartedAt(Epoch),
				Job("urgent-a").Queue("team").Priority(90).MinMember(2).Pods(2).GPUs(1),
				Job("urgent-b").Queue("team").Priority(90).GPUs(1).CreatedAt(Epoch.Add(time.Second)))
		rounds, stable := h.RunRounds(ctx, 10)
		Expect(stable).To(BeTrue())
		Expect(rounds[0].EvictedPods()).To(Equal(map[string]int{"elastic": 2}))
		Expect(h.PodsIn("elastic", model.Running)).To(Equal(2), "its gang of 2 is protected")
		Expect(h.PodsIn("urgent-a", model.Running)).To(Equal(2))
		Expect(rounds[len(rounds)-1].Reasons("urgent-b")).To(ContainElement(ContainSubstring("protected by min-runtime")))
	})

	It("lose their whole gang when not protected (the contrast)", func() {
		h := New(withMinRuntime(`defaultPreemptMinRuntime: 0s`)).
			Nodes(Node("n1").GPUs(4)).
			Queues(Queue("team")).
			Jobs(Job("elastic").Queue("team").Priority(10).MinMember(2).Pods(4).GPUs(1).
				Running("n1", "n1", "n1", "n1").StartedAt(Epoch),
				Job("urgent-a").Queue("team").Priority(90).MinMember(2).Pods(2).GPUs(1),
				Job("urgent-b").Queue("team").Priority(90).GPUs(1).CreatedAt(Epoch.Add(time.Second)))
		h.RunRounds(ctx, 10)
		Expect(h.PodsIn("elastic", model.Running)).To(Equal(0))
		Expect(h.PodsIn("urgent-b", model.Running)).To(Equal(1))
	})
})

var _ = Describe("Protected elastic jobs with sub-groups", func() {
	// MinMember 3; sub-group b (min 1) runs 3 pods, sub-group a (min 2) runs 1 and waits for
	// 1. Evicting one pod of b keeps the gang (3) and b (2 >= 1) whole; a was short before and
	// loses nothing. The pod is the job's to lose even while protected.
	It("gives a preemptor a surplus pod of a sub-group that stays above its minimum", func() {
		h := New(withMinRuntime(`defaultPreemptMinRuntime: 1h`)).
			Nodes(Node("n1").GPUs(4)).
			Queues(Queue("team")).
			Jobs(Job("elastic").Queue("team").Priority(10).MinMember(3).GPUs(1).
				SubGroup("b", 1, 3).SubGroup("a", 2, 2).Running("n1", "n1", "n1", "n1").StartedAt(Epoch),
				Job("urgent").Queue("team").Priority(90).GPUs(1))
		round := h.RunCycle(ctx)
		Expect(round.EvictedPods()).To(Equal(map[string]int{"elastic": 1}))
		evicted := round.Evictions[0].Pod
		Expect(evicted).To(Equal("ns/elastic-2"), "the last pod of sub-group b, not a's only running pod")
		Expect(round.Evictions[0].Reason.Note.Text).To(Equal("it ran 0s; its preempt min-runtime of 1h0m0s from the default " +
			"protects it until 2026-01-01T01:00:00Z, so it keeps its minimum"))
		Expect(round.PipelinedPods()).To(Equal(map[string]int{"urgent": 1}))
	})

	It("refuses the second pod, which would take the gang below its minimum, and says which group", func() {
		h := New(withMinRuntime(`defaultPreemptMinRuntime: 1h`)).
			Nodes(Node("n1").GPUs(4)).
			Queues(Queue("team")).
			Jobs(Job("elastic").Queue("team").Priority(10).MinMember(3).GPUs(1).
				SubGroup("b", 1, 3).SubGroup("a", 2, 2).Running("n1", "n1", "n1", "n1").StartedAt(Epoch),
				Job("urgent").Queue("team").Priority(90).MinMember(2).Pods(2).GPUs(1))
		round := h.RunCycle(ctx)
		Expect(round.Evictions).To(BeEmpty())
		Expect(round.Reasons("urgent")).To(ContainElement(ContainSubstring(
			"job ns/elastic is protected until 2026-01-01T01:00:00Z: these evictions would leave 2 pods where its gang needs 3")))
	})
})

var _ = Describe("Counting refusals", func() {
	// The victim search asks about the protected elastic job once for every unit and node it
	// tries; the count is of victims refused, so one job refused to one preemptor is one.
	It("counts a protected victim once per preemptor and cycle, however often the search asks", func() {
		// elastic runs its minimum of 3, one pod per node (a 4th waits): on each of the three
		// nodes the preemptor's pod would need the whole job, and is refused three times.
		h := New(withMinRuntime(`defaultPreemptMinRuntime: 1h`)).
			Nodes(Node("n1").GPUs(1), Node("n2").GPUs(1), Node("n3").GPUs(1)).
			Queues(Queue("team")).
			Jobs(Job("elastic").Queue("team").Priority(10).MinMember(3).Pods(4).GPUs(1).
				Running("n1", "n2", "n3").StartedAt(Epoch),
				Job("urgent").Queue("team").Priority(90).GPUs(1))
		round := h.RunCycle(ctx)
		Expect(round.Evictions).To(BeEmpty())
		Expect(round.ProtectedRefusals).To(Equal(map[framework.ActionType]int{framework.Preempt: 1}))
		Expect(h.Metrics.Recorded().MinRuntimeRefusals).To(Equal(map[string]int{"preempt": 1}),
			"the metric counts what the cycle counts, by the route every plugin measure takes (the session's recorder)")
	})
})

var _ = Describe("Telling when its answers change", func() {
	// A cycle on an unchanged cluster decides the same until a protection that refused a
	// victim ends: the cycle reports the earliest such end, so that a simulator (or a quiet
	// scheduler) knows when to look again.
	It("reports the earliest end among the protections that refused victims", func() {
		h := New(withMinRuntime(`defaultPreemptMinRuntime: 1h`)).
			Nodes(Node("n1").GPUs(2)).
			Queues(Queue("team")).
			Jobs(Job("older").Queue("team").Priority(10).GPUs(1).Running("n1").StartedAt(Epoch.Add(-40*time.Minute)),
				Job("newer").Queue("team").Priority(10).GPUs(1).Running("n1").StartedAt(Epoch.Add(-10*time.Minute)),
				Job("urgent").Queue("team").Priority(90).GPUs(1))
		round := h.RunCycle(ctx)
		Expect(round.Evictions).To(BeEmpty())
		Expect(round.ProtectedRefusals).To(Equal(map[framework.ActionType]int{framework.Preempt: 2}))
		Expect(round.AnswersChangeAt).To(Equal(Epoch.Add(20 * time.Minute)))
	})

	It("reports nothing when no answer depends on the time", func() {
		h := New(withMinRuntime(`defaultPreemptMinRuntime: 1h`)).
			Nodes(Node("n1").GPUs(1)).
			Queues(Queue("team")).
			Jobs(Job("old").Queue("team").Priority(10).GPUs(1).Running("n1").StartedAt(Epoch.Add(-2*time.Hour)),
				Job("urgent").Queue("team").Priority(90).GPUs(1))
		round := h.RunCycle(ctx)
		Expect(round.Evictions).To(HaveLen(1))
		Expect(round.AnswersChangeAt).To(BeZero())
	})

	It("reports when a start stamp in the future starts to count", func() {
		// The stamp is ignored while it lies ahead, so the pods' start (2h ago) counts and the
		// job may go; from the stamp's time on it would be protected instead.
		stamp := Epoch.Add(5 * time.Minute)
		h := New(withMinRuntime(`defaultPreemptMinRuntime: 1h`)).
			Nodes(Node("n1").GPUs(1)).
			Queues(Queue("team")).
			Jobs(Job("skewed").Queue("team").Priority(10).GPUs(1).Running("n1").
				PodsStartedAt(Epoch.Add(-2*time.Hour)).StartedAt(stamp),
				Job("urgent").Queue("team").Priority(90).GPUs(1))
		round := h.RunCycle(ctx)
		Expect(round.Evictions).To(HaveLen(1))
		Expect(round.AnswersChangeAt).To(Equal(stamp))
	})
})

var _ = Describe("Naming the protected victims", func() {
	It("names the three earliest protections, where each value was set, and counts the rest", func() {
		// Five borrowed jobs, started a minute apart, protected against reclaim by 30m set on
		// their queue (two of them by the default 10m instead, in a queue that sets none).
		h := New(withMinRuntime(`defaultReclaimMinRuntime: 10m`)).
			Nodes(Node("n1").GPUs(5)).
			Queues(Queue("owner").GPUQuota(5), Queue("lender").GPUQuota(0).ReclaimMinRuntime(30*time.Minute),
				Queue("plain").GPUQuota(0))
		for i, queue := range []string{"lender", "lender", "plain", "lender", "plain"} {
			h.Jobs(Job(fmt.Sprintf("b%d", i)).Queue(queue).GPUs(1).Running("n1").
				StartedAt(Epoch.Add(-time.Duration(5-i) * time.Minute)))
		}
		h.Jobs(Job("owned").Queue("owner").MinMember(5).Pods(5).GPUs(1))
		round := h.RunCycle(ctx)
		Expect(round.Evictions).To(BeEmpty())
		// Ends: b2 at 0:07 (10m), b4 at 0:09 (10m), b0 at 0:25, b1 at 0:26, b3 at 0:28 (30m).
		Expect(round.Reasons("owned")).To(ContainElement(
			"reclaim: victims are protected by min-runtime: " +
				"ns/b2 until 2026-01-01T00:07:00Z (10m0s from the default), " +
				"ns/b4 until 2026-01-01T00:09:00Z (10m0s from the default), " +
				"ns/b0 until 2026-01-01T00:25:00Z (30m0s from queue lender) and 2 more; " +
				"the first protection ends at 2026-01-01T00:07:00Z"))
		Expect(round.AnswersChangeAt).To(Equal(Epoch.Add(7 * time.Minute)))
		// The reason also carries the longest protection that refused the job, named or
		// not: the most it can be held back.
		reasons := round.PendingReasons[model.NewJobID(Namespace, "owned")]
		Expect(reasons).To(ContainElement(HaveField("LongestMinRuntime", 30*time.Minute)))
	})
})

var _ = Describe("The protected-jobs metric", func() {
	It("counts, per queue and action, the running jobs protected now", func() {
		// fresh started 10 minutes ago, old 2 hours ago; team protects 30m against preempt
		// and 1h against reclaim. A pending job has an old stamp from an earlier run: it runs
		// nothing, so it is not counted.
		h := New(withMinRuntime(`defaultPreemptMinRuntime: 30m, defaultReclaimMinRuntime: 1h`)).
			Nodes(Node("n1").GPUs(4)).
			Queues(Queue("team").GPUQuota(4), Queue("other").GPUQuota(0).ReclaimMinRuntime(5*time.Minute)).
			Jobs(Job("fresh").Queue("team").Priority(10).GPUs(1).Running("n1").StartedAt(Epoch.Add(-10*time.Minute)),
				Job("old").Queue("team").Priority(10).GPUs(1).Running("n1").StartedAt(Epoch.Add(-2*time.Hour)),
				Job("borrowed").Queue("other").Priority(10).GPUs(1).Running("n1").StartedAt(Epoch.Add(-10*time.Minute)),
				Job("waiting").Queue("team").Priority(10).GPUs(8).StartedAt(Epoch.Add(-time.Minute)))
		h.RunCycle(ctx)
		Expect(h.Metrics.Recorded().ProtectedJobs).To(Equal(map[metrics.ProtectedSeries]int{
			{Queue: "team", Action: "preempt"}: 1, {Queue: "team", Action: "reclaim"}: 1,
			{Queue: "other", Action: "preempt"}: 1, // other's reclaim: its own 5m is over
		}))

		// An hour later nothing is protected: no series is left, rather than each at its
		// last value.
		h.Clock.SetTime(Epoch.Add(time.Hour))
		h.RunCycle(ctx)
		Expect(h.Metrics.Recorded().ProtectedJobs).To(BeEmpty())
	})
})

var _ = Describe("The protection a running job's status shows", func() {
	It("shows the start, the preempt end and the reclaim end per level, changes only when they do, and goes with the run", func() {
		h := New(withMinRuntime(`defaultPreemptMinRuntime: 1m, defaultReclaimMinRuntime: 5m`)).
			Nodes(Node("n1").GPUs(2)).
			Queues(Queue("dept").GPUQuota(2).ReclaimMinRuntime(time.Hour),
				Queue("team").Parent("dept").GPUQuota(2).ReclaimMinRuntime(2*time.Minute).PreemptMinRuntime(10*time.Minute),
				Queue("lab").Parent("dept"), Queue("ops")). // reclaimers may sit beside team and beside dept
			Jobs(Job("train").Queue("team").Priority(10).GPUs(1).Running("n1").StartedAt(Epoch.Add(-2*time.Minute)),
				Job("serve").Queue("team").Priority(100).GPUs(1).Running("n1").StartedAt(Epoch.Add(-2*time.Minute)),
				Job("urgent").Queue("team").Priority(50).GPUs(1))

		first := h.RunCycle(ctx)
		Expect(first.ProtectionChanges).To(Equal([]model.ProtectionChange{{Job: "ns/train", Protection: model.Protection{
			Start:   Epoch.Add(-2 * time.Minute),
			Preempt: model.MinRuntime{Duration: 10 * time.Minute, SetBy: "team", Path: []string{"team"}},
			Reclaim: []model.ReclaimLevel{
				{Outside: "dept", MinRuntime: model.MinRuntime{Duration: time.Hour, SetBy: "dept", Path: []string{"dept"}}},
				{Outside: "team", MinRuntime: model.MinRuntime{Duration: 2 * time.Minute, SetBy: "team", Path: []string{"team"}}},
			},
		}}}), "serve is non-preemptible and urgent is not running: neither has a protection to show")
		Expect(first.ProtectionChanges[0].Protection.Earliest()).To(Equal(Epoch),
			"lab, team's sibling, could reclaim train once its 2m are over")

		rounds := h.RunUntil(ctx, Epoch.Add(9*time.Minute))
		at := firstEviction(rounds)
		Expect(at).NotTo(Equal(-1), "urgent preempts train once its 10m are over")
		for _, r := range rounds[:at] {
			Expect(r.ProtectionChanges).To(BeEmpty(), "nothing changed at %s: nothing to write", r.Time)
		}
		Expect(rounds[at].ProtectionChanges).To(Equal([]model.ProtectionChange{{Job: "ns/train", None: true}}),
			"an evicted job no longer runs: its status stops showing a protection")
	})
})

// The columns of kubectl get pg (Preempt-Until, Reclaim-Until) and protectedUntil, as the
// status the scheduler computes for a running job shows them: each side only where its
// min-runtime protects, never the start for a min-runtime of 0s, and nothing at all for a
// job no min-runtime protects. The job started at 23:58 and team has a sibling, other,
// from which a reclaimer could come.
var _ = DescribeTable("What kubectl get pg shows of a running job's protection",
	func(preempt, reclaim time.Duration, preemptUntil, reclaimUntil, protectedUntil string) {
		h := New(withMinRuntime(``)).
			Nodes(Node("n1").GPUs(2)).
			Queues(Queue("team").GPUQuota(1).PreemptMinRuntime(preempt).ReclaimMinRuntime(reclaim), Queue("other").GPUQuota(1)).
			Jobs(Job("train").Queue("team").Priority(10).GPUs(1).Running("n1").StartedAt(Epoch.Add(-2 * time.Minute)))
		changes := h.RunCycle(ctx).ProtectionChanges
		if protectedUntil == "" {
			Expect(changes).To(BeEmpty(), "a job no min-runtime protects shows no status")
			return
		}
		Expect(changes).To(HaveLen(1))
		s := changes[0].Protection.Status()
		printed := func(t *metav1.Time) string {
			if t == nil {
				return ""
			}
			return t.UTC().Format(time.RFC3339)
		}
		Expect(printed(s.Preempt.Until)).To(Equal(preemptUntil), "Preempt-Until")
		Expect(printed(s.ReclaimUntil)).To(Equal(reclaimUntil), "Reclaim-Until")
		Expect(printed(s.ProtectedUntil)).To(Equal(protectedUntil), "protectedUntil")
	},
	Entry("reclaim only (the usual setup): no preempt end, not the start", time.Duration(0), 30*time.Minute,
		"", "2026-01-01T00:28:00Z", "2026-01-01T00:28:00Z"),
	Entry("preempt only: no reclaim end", 10*time.Minute, time.Duration(0),
		"2026-01-01T00:08:00Z", "", "2026-01-01T00:08:00Z"),
	Entry("both: each side its own end, protectedUntil the earlier", 10*time.Minute, 30*time.Minute,
		"2026-01-01T00:08:00Z", "2026-01-01T00:28:00Z", "2026-01-01T00:08:00Z"),
	Entry("neither: no status, so no end at all", time.Duration(0), time.Duration(0), "", "", ""),
)

var _ = Describe("Protected elastic jobs counted in sub-groups (minSubGroup)", func() {
	// The borrower runs 4 replicas of 8 pods, one per node, and needs 3 (minSubGroup 3); it
	// is protected against reclaim for an hour. The owner's queue deserves every GPU and asks
	// for two gangs of 8: the first takes one whole replica, the second would take the job to
	// 2 ready replicas and is refused, saying so.
	It("keeps 3 replicas against reclaim and gives up the fourth", func() {
		h := New(withMinRuntime(`defaultReclaimMinRuntime: 1h`)).
			Nodes(Node("n1").GPUs(8), Node("n2").GPUs(8), Node("n3").GPUs(8), Node("n4").GPUs(8)).
			Queues(Queue("owner").GPUQuota(32), Queue("borrower").GPUQuota(0))
		borrowed := Job("borrowed").Queue("borrower").MinSubGroup(3).Replicas("prefill", 4, 8).GPUs(1).StartedAt(Epoch)
		var nodes []string
		for n := range 4 {
			for range 8 {
				nodes = append(nodes, fmt.Sprintf("n%d", n+1))
			}
		}
		h.Jobs(borrowed.Running(nodes...),
			Job("owned-a").Queue("owner").MinMember(8).Pods(8).GPUs(1),
			Job("owned-b").Queue("owner").MinMember(8).Pods(8).GPUs(1).CreatedAt(Epoch.Add(time.Second)))
		rounds, _ := h.RunRounds(ctx, 6)
		Expect(h.PodsIn("borrowed", model.Running)).To(Equal(24))
		ready := 0
		perReplica := map[string]int{}
		for _, p := range h.JobNamed("borrowed").Pods {
			if p.Status == model.Running {
				perReplica[p.SubGroup]++
			}
		}
		for _, n := range perReplica {
			if n == 8 {
				ready++
			}
		}
		Expect(ready).To(Equal(3), "three whole replicas, not pods taken from each: %v", perReplica)
		Expect(h.PodsIn("owned-a", model.Running)).To(Equal(8))
		Expect(h.PodsIn("owned-b", model.Running)).To(Equal(0))
		Expect(rounds[len(rounds)-1].Reasons("owned-b")).To(ContainElement(ContainSubstring(
			"job ns/borrowed is protected until 2026-01-01T01:00:00Z: these evictions would leave 2 ready sub-groups where its gang needs 3")))
	})
})

var _ = Describe("Unprotected gangs counted in sub-groups (minSubGroup)", func() {
	// The borrower needs 1 of its 2 replicas of 4: r-0 runs whole, r-1 runs one pod of its 4
	// (surplus: not a ready replica). The reclaimer needs 6 of the node's 8 GPUs, more than
	// the surplus frees: the whole job goes, and no pod of it is left running with no ready
	// replica. (The property suite's seeds 66, 108 and 234 cover the search's finer paths to
	// the same end.)
	It("evicts the whole gang, its surplus pods with it", func() {
		h := New(withMinRuntime(`defaultReclaimMinRuntime: 0s`)).
			Nodes(Node("n1").GPUs(8)).
			Queues(Queue("owner").GPUQuota(8), Queue("borrower").GPUQuota(0))
		h.Jobs(Job("borrowed").Queue("borrower").MinSubGroup(1).SubGroup("r-0", 4, 4).SubGroup("r-1", 4, 1).GPUs(1).
			Running("n1", "n1", "n1", "n1", "n1").StartedAt(Epoch.Add(-time.Hour)),
			Job("owned").Queue("owner").MinMember(6).Pods(6).GPUs(1))
		round := h.RunCycle(ctx)
		Expect(round.EvictedPods()).To(Equal(map[string]int{"borrowed": 5}), "no pod of the gang is left running")
	})
})
