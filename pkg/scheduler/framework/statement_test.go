package framework_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	. "github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework/frameworktest"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

var _ = Describe("Statement", func() {
	var (
		cluster  *Harness
		snapshot *model.Snapshot
		effects  *Effects
		ssn      *framework.Session
		ctx      = context.Background()
	)

	BeforeEach(func() {
		cluster = New("").
			Nodes(Node("n1").GPUs(4), Node("n2").GPUs(4)).
			Queues(Queue("default")).
			Jobs(
				Job("running").MinMember(2).Pods(2).GPUs(2).Running("n1", "n1").StartedAt(Epoch),
				Job("pending").MinMember(2).Pods(2).GPUs(2),
			)
		snapshot = cluster.Snapshot()
		effects = &Effects{}
		ssn = framework.OpenSession(ctx, framework.SessionOptions{
			Snapshot: snapshot, Clock: clocktesting.NewFakePassiveClock(Epoch.Add(90e9)), Effects: effects,
		})
	})

	pod := func(job string, i int) *model.PodInfo {
		return snapshot.Job(model.NewJobID(Namespace, job)).Pods[i]
	}

	It("rolls back to a checkpoint and discards, leaving the snapshot exactly as it was", func() {
		pristine := cluster.Snapshot()
		st := ssn.NewStatement()
		Expect(st.Allocate(pod("pending", 0), "n2")).To(Succeed())
		cp := st.Checkpoint()
		afterFirst := cluster.Snapshot()
		Expect(afterFirst.SetPodStatus(afterFirst.Job("ns/pending").Pods[0], model.Allocated, "n2")).To(Succeed())

		Expect(st.Evict(pod("running", 0), framework.EvictionReason{Action: framework.Preempt})).To(Succeed())
		Expect(st.Pipeline(pod("pending", 1), "n1")).To(Succeed())
		Expect(snapshot.Node("n1").Releasing).To(Equal(model.NewResources(1000, 1<<30, 2).With(model.Pods, 1)))

		st.Rollback(cp)
		Expect(state(snapshot)).To(Equal(state(afterFirst)))
		st.Discard()
		Expect(state(snapshot)).To(Equal(state(pristine)))
		Expect(st.IsEmpty()).To(BeTrue())
		Expect(effects.Calls).To(BeEmpty(), "nothing was committed")
	})

	It("refuses decisions that break the accounting", func() {
		st := ssn.NewStatement()
		Expect(st.Allocate(pod("pending", 0), "n1")).To(MatchError(ContainSubstring("Insufficient nvidia.com/gpu on node n1")))
		Expect(st.Allocate(pod("running", 0), "n2")).To(MatchError(ContainSubstring("is Running, not pending")))
		Expect(st.Evict(pod("pending", 0), framework.EvictionReason{})).To(MatchError(ContainSubstring("only bound or running pods")))
		Expect(st.Allocate(pod("pending", 0), "nowhere")).To(MatchError(ContainSubstring(`unknown node "nowhere"`)))
		Expect(st.IsEmpty()).To(BeTrue())
		Expect(effects.Calls).To(BeEmpty())
	})

	It("commits evictions before binds before pipelines, then stamps the jobs that started", func() {
		st := ssn.NewStatement()
		reason := framework.EvictionReason{Action: framework.Preempt, Preemptor: "ns/pending"}
		Expect(st.Allocate(pod("pending", 0), "n2")).To(Succeed())
		Expect(st.Evict(pod("running", 0), reason)).To(Succeed())
		Expect(st.Allocate(pod("pending", 1), "n2")).To(Succeed())
		Expect(st.Commit(ctx)).To(Succeed())
		Expect(effects.Calls).To(Equal([]Call{
			Evicted(pod("running", 0), reason),
			Bound(pod("pending", 0), "n2"),
			Bound(pod("pending", 1), "n2"),
			Stamped(snapshot.Job("ns/pending"), Epoch.Add(90e9)),
		}))
		Expect(snapshot.Job("ns/pending").LastStartTimestamp).To(HaveValue(Equal(Epoch.Add(90e9))))
		Expect(snapshot.Job("ns/running").LastStartTimestamp).To(HaveValue(Equal(Epoch)), "not re-stamped")
		Expect(st.IsEmpty()).To(BeTrue())
	})

	It("keeps a failed bind's resources for the rest of the cycle and does not stamp the half-bound gang", func() {
		st := ssn.NewStatement()
		Expect(st.Allocate(pod("pending", 0), "n2")).To(Succeed())
		Expect(st.Allocate(pod("pending", 1), "n2")).To(Succeed())
		effects.Fail = func(c Call) error {
			if c.Method == "Bind" && c.Pod == pod("pending", 1).Key() {
				return errors.New("conflict")
			}
			return nil
		}
		Expect(st.Commit(ctx)).To(MatchError("conflict"))
		Expect(effects.Calls).To(Equal([]Call{Bound(pod("pending", 0), "n2"), Bound(pod("pending", 1), "n2")}))
		Expect(snapshot.Node("n2").Idle().Get(model.GPU)).To(BeZero(), "no other job may take the failed pod's GPUs this cycle")
		Expect(snapshot.Job("ns/pending").LastStartTimestamp).To(BeNil(), "half a gang has not started")
	})

	It("writes a promise before the evictions it is made of", func() {
		st := ssn.NewStatement()
		reason := framework.NewEvictionReason(framework.Preempt, "ns/pending")
		Expect(st.Evict(pod("running", 0), reason)).To(Succeed())
		Expect(st.Evict(pod("running", 1), reason)).To(Succeed())
		Expect(st.Nominate(pod("pending", 0), "n1")).To(Succeed())
		Expect(pod("running", 0).EvictedFor).To(BeEquivalentTo("ns/pending"))
		Expect(st.Commit(ctx)).To(Succeed())
		Expect(effects.Calls).To(Equal([]Call{
			Nominated(pod("pending", 0), "n1"),
			Evicted(pod("running", 0), reason),
			Evicted(pod("running", 1), reason),
		}))
	})

	It("forgets, on rollback, whom an eviction was for", func() {
		st := ssn.NewStatement()
		Expect(st.Evict(pod("running", 0), framework.NewEvictionReason(framework.Preempt, "ns/pending"))).To(Succeed())
		st.Discard()
		Expect(pod("running", 0).EvictedFor).To(BeEmpty())
		Expect(pod("running", 0).Status).To(Equal(model.Running))
		Expect(effects.Calls).To(BeEmpty())
	})

	It("marks a pod consolidation evicts as moved, and forgets it on rollback", func() {
		st := ssn.NewStatement()
		Expect(st.Evict(pod("running", 0), framework.NewEvictionReason(framework.Consolidation, "ns/pending"))).To(Succeed())
		Expect(st.Evict(pod("running", 1), framework.NewEvictionReason(framework.Reclaim, "ns/pending"))).To(Succeed())
		Expect(pod("running", 0).Moved).To(BeTrue(), "it is placed again elsewhere")
		Expect(pod("running", 1).Moved).To(BeFalse(), "reclaimed, it is taken")
		st.Discard()
		Expect(pod("running", 0).Moved).To(BeFalse())
		Expect(pod("running", 0).Status).To(Equal(model.Running))
	})

	It("tells about pipelined pods without binding or stamping them, and nominates only promised ones", func() {
		st := ssn.NewStatement()
		Expect(st.Pipeline(pod("pending", 0), "n2")).To(Succeed())
		Expect(st.Nominate(pod("pending", 1), "n2")).To(Succeed())
		Expect(st.Commit(ctx)).To(Succeed())
		Expect(effects.Calls).To(ConsistOf(Pipelined(pod("pending", 0), "n2"), Nominated(pod("pending", 1), "n2")))
		Expect(snapshot.Job("ns/pending").LastStartTimestamp).To(BeNil())
	})

	It("binds nobody into idle resources a pipelined pod was promised", func() {
		st := ssn.NewStatement()
		Expect(st.Evict(pod("running", 0), framework.EvictionReason{})).To(Succeed())
		Expect(st.Evict(pod("running", 1), framework.EvictionReason{})).To(Succeed())
		Expect(st.Pipeline(pod("pending", 0), "n1")).To(Succeed())
		Expect(st.Pipeline(pod("pending", 1), "n1")).To(Succeed())
		// The victims are gone: their 4 GPUs are idle, and all 4 are promised.
		for _, p := range []*model.PodInfo{pod("running", 0), pod("running", 1)} {
			Expect(snapshot.SetPodStatus(p, model.Pending, "")).To(Succeed())
		}
		Expect(snapshot.Node("n1").Idle().Get(model.GPU)).To(BeEquivalentTo(4 * model.MilliGPU))
		Expect(snapshot.Node("n1").Bindable().Get(model.GPU)).To(BeZero())
		Expect(st.Allocate(pod("running", 0), "n1")).To(MatchError(ContainSubstring("Insufficient nvidia.com/gpu on node n1")),
			"the victim, recreated pending, must not take back what was promised to its preemptor")
		Expect(effects.Calls).To(BeEmpty())
	})

	It("withdraws a promise: the pod is pending again, and only a pod left pending is told", func() {
		st := ssn.NewStatement()
		Expect(st.Pipeline(pod("pending", 0), "n2")).To(Succeed())
		Expect(st.Pipeline(pod("pending", 1), "n2")).To(Succeed())
		Expect(st.Commit(ctx)).To(Succeed())
		Expect(effects.Calls).To(ConsistOf(Pipelined(pod("pending", 0), "n2"), Pipelined(pod("pending", 1), "n2")))
		effects.Calls = nil

		st = ssn.NewStatement()
		Expect(st.Withdraw(pod("pending", 0))).To(Succeed())
		Expect(st.Withdraw(pod("pending", 1))).To(Succeed())
		Expect(st.Allocate(pod("pending", 1), "n2")).To(Succeed())
		Expect(snapshot.Node("n2").Pipelined).To(BeZero())
		Expect(st.Commit(ctx)).To(Succeed())
		Expect(effects.Calls).To(ConsistOf(Bound(pod("pending", 1), "n2"), Cancelled(pod("pending", 0)),
			Stamped(snapshot.Job("ns/pending"), Epoch.Add(90e9))))
		Expect(pod("pending", 0).Status).To(Equal(model.Pending))
		Expect(st.Withdraw(pod("running", 0))).To(MatchError(ContainSubstring("only pipelined pods hold a promise")))
	})
})

// state describes everything a decision changes in a snapshot: each node's accounting and
// pods, and each pod's status and node (nodes' versions, which only ever grow, aside).
func state(s *model.Snapshot) string {
	var b strings.Builder
	for _, n := range s.Nodes {
		fmt.Fprintf(&b, "%s used %s releasing %s pipelined %s pods", n.Name, n.Used, n.Releasing, n.Pipelined)
		for _, p := range n.Pods {
			fmt.Fprintf(&b, " %s", p.Key())
		}
		b.WriteByte('\n')
	}
	for _, j := range s.Jobs {
		for _, p := range j.Pods {
			fmt.Fprintf(&b, "%s %s@%s evicted-for %q\n", p.Key(), p.Status, p.NodeName, p.EvictedFor)
		}
	}
	return b.String()
}
