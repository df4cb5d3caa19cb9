package e2e

import (
	"bytes"
	"context"
	"regexp"
	"sort"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/kubectlkai"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

const snapshotConfig = `actions: "allocate, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: proportion
  - name: minruntime
  - name: predicates
  - name: nodeplacement
`

var _ = Describe("kubectl kai snapshot", func() {
	It("writes a cluster on which kai-sim's first cycle decides as the scheduler did: the same victim evicted, the same refused, the same protection ends", func() {
		const ns = "snapshot"
		createNamespace(ns)
		opts := schedulerOptionsWith(snapshotConfig)
		createNode("snap-n1", 4)
		createNode("snap-n2", 4)
		// Research borrows every GPU in two queues: one protects its jobs for 10 minutes
		// against reclaim, the other not at all. prod owns the GPUs and wants them back.
		// prod protects what it runs for 5 minutes, so that the job it runs after the
		// reclaim shows the start stamp the scheduler wrote; a job with no min-runtime at
		// all shows no protection.
		create(builders.MakeQueue("snap-prod").GPUQuota(8).ReclaimMinRuntime(5 * time.Minute).Obj())
		create(builders.MakeQueue("snap-free").GPUQuota(0).ReclaimMinRuntime(0).Obj())
		create(builders.MakeQueue("snap-held").GPUQuota(0).ReclaimMinRuntime(10 * time.Minute).Obj())
		// Jobs the scheduler placed before it restarted: their pods are on their nodes already.
		createJob(builders.MakePodGroup(ns, "free").Queue("snap-free").PriorityClass("train"), 1, 4, onNode("snap-n1"))
		createJob(builders.MakePodGroup(ns, "held").Queue("snap-held").PriorityClass("train"), 1, 4, onNode("snap-n2"))
		Eventually(runningPods(ns, "free")).Should(Equal(1))
		Eventually(runningPods(ns, "held")).Should(Equal(1))
		// A few seconds of running, so that a snapshot that lost how long a job has run
		// would show its protection ending that much later.
		Eventually(ranFor(ns, "held-0")).Should(BeNumerically(">=", 3*time.Second))
		createJob(builders.MakePodGroup(ns, "first").Queue("snap-prod").PriorityClass("train"), 1, 4)
		createJob(builders.MakePodGroup(ns, "second").Queue("snap-prod").PriorityClass("train"), 1, 4)

		By("snapshotting the cluster before the scheduler has seen it, and running kai-sim's first cycle on it")
		at, scenario := takeSnapshot()
		simulated := firstCycle(scenario, opts.NodePoolLabelKey)

		By("running the scheduler on the cluster")
		DeferCleanup(startScheduler(opts))
		Eventually(pendingMessage(ns, "second")).Should(ContainSubstring("victims are protected by min-runtime"))
		Eventually(podGone(ns, "free-0")).Should(BeTrue(), "reclaim evicts the unprotected job for first")
		Expect(podGone(ns, "held-0")()).To(BeFalse())

		Expect(simulated.evicted).To(Equal([]string{ns + "/free free-0 for " + ns + "/first"}),
			"kai-sim evicts what the scheduler evicted, for the same job")
		Expect(simulated.waiting[ns+"/second"]).To(Equal(relativeReasons(ns, "second", at)),
			"kai-sim refuses second the protected victim the scheduler refused it, until the same moment")
		Expect(simulated.protection[ns+"/held"]).To(Equal(relativeProtection(ns, "held", at)),
			"held's protection ends as long after the snapshot in kai-sim as on the cluster")

		By("snapshotting again once first runs: the first cycle changes nothing, as the scheduler changes nothing")
		Eventually(runningPods(ns, "first")).Should(Equal(1))
		Eventually(minRuntimeStatus(ns, "first")).ShouldNot(BeNil())
		at, scenario = takeSnapshot()
		simulated = firstCycle(scenario, opts.NodePoolLabelKey)
		Expect(simulated.evicted).To(BeEmpty())
		Expect(simulated.waiting[ns+"/second"]).To(Equal(relativeReasons(ns, "second", at)))
		for _, job := range []string{"held", "first"} {
			shown := relativeProtection(ns, job, at)
			// The scheduler stamped first's start itself, to the nanosecond: its status shows
			// the start rounded down, the snapshot counts from it rounded up. The ends agree.
			Expect(simulated.protection[ns+"/"+job].Start).To(BeNumerically("~", shown.Start, 1))
			simulated.protection[ns+"/"+job].Start = shown.Start
			Expect(simulated.protection[ns+"/"+job]).To(Equal(shown), "the protection of %s", job)
		}
	})
})

// onNode puts a pod on a node, as if bound by a scheduler before this one: KWOK runs it.
func onNode(node string) func(*builders.PodWrapper) {
	return func(p *builders.PodWrapper) { p.Node(node) }
}

// takeSnapshot runs kubectl kai snapshot and returns the moment it is of (the next whole
// second) and what it wrote.
func takeSnapshot() (time.Time, string) {
	now := time.Now()
	at := model.ShownEnd(now) // the next whole second
	var stdout, stderr bytes.Buffer
	connect := func(string, string) (client.Reader, string, error) { return k8sClient, "default", nil }
	code := kubectlkai.Run(suiteCtx, []string{"snapshot"}, &stdout, &stderr, connect, clocktesting.NewFakePassiveClock(now))
	Expect(code).To(BeZero(), stderr.String())
	Expect(stdout.String()).To(HavePrefix("# kai-sim scenario: a snapshot at " + at.UTC().Format(time.RFC3339)))
	return at, stdout.String()
}

// simulatedCycle is what kai-sim's first cycle decided: evictions ("job pod for preemptor"),
// the reasons each waiting job gives, and each running job's protection.
type simulatedCycle struct {
	evicted    []string
	waiting    map[string][]string
	protection map[string]*report.Protection
}

func firstCycle(scenario, poolKey string) simulatedCycle {
	sc, err := input.Parse([]byte(scenario))
	Expect(err).NotTo(HaveOccurred(), scenario)
	result, err := sim.Run(context.Background(), sc, sim.Options{Config: []byte(snapshotConfig), Until: time.Second / 2, NodePoolLabelKey: poolKey})
	Expect(err).NotTo(HaveOccurred())
	c := simulatedCycle{evicted: []string{}, waiting: map[string][]string{}, protection: map[string]*report.Protection{}}
	for _, e := range result.Events {
		if e.Type == report.EventEvict {
			c.evicted = append(c.evicted, e.PodGroup+" "+e.Pod+" for "+e.Preemptor)
		}
	}
	for _, j := range result.Jobs {
		if len(j.Waiting) > 0 {
			c.waiting[j.PodGroup] = relativeTimes(j.Waiting, sim.Start)
		}
		c.protection[j.PodGroup] = j.Protection
	}
	return c
}

// relativeReasons are the reasons a job's PodGroup gives on the cluster, with every time
// written as seconds from the snapshot.
func relativeReasons(namespace, name string, at time.Time) []string {
	pg := &v2alpha2.PodGroup{}
	Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: namespace, Name: name}, pg)).To(Succeed())
	var reasons []string
	for _, c := range pg.Status.SchedulingConditions {
		for _, r := range c.Reasons {
			reasons = append(reasons, r.Message)
		}
	}
	return relativeTimes(reasons, at)
}

func relativeProtection(namespace, name string, at time.Time) *report.Protection {
	return report.ProtectionOf(minRuntimeStatus(namespace, name)(), at)
}

var rfc3339 = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)

// relativeTimes rewrites the times in messages as durations from origin, and sorts them.
func relativeTimes(messages []string, origin time.Time) []string {
	out := make([]string, 0, len(messages))
	for _, m := range messages {
		out = append(out, rfc3339.ReplaceAllStringFunc(m, func(s string) string {
			t, err := time.Parse(time.RFC3339, s)
			Expect(err).NotTo(HaveOccurred())
			return "start+" + t.Sub(origin).String()
		}))
	}
	sort.Strings(out)
	return out
}

func podGone(namespace, name string) func() bool {
	return func() bool {
		pod := &v1.Pod{}
		err := k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: namespace, Name: name}, pod)
		if apierrors.IsNotFound(err) {
			return true
		}
		Expect(err).NotTo(HaveOccurred())
		return pod.DeletionTimestamp != nil
	}
}

// ranFor is how long a pod has run, by its reported start.
func ranFor(namespace, name string) func() time.Duration {
	return func() time.Duration {
		pod := &v1.Pod{}
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: namespace, Name: name}, pod)).To(Succeed())
		if pod.Status.StartTime == nil {
			return 0
		}
		return time.Since(pod.Status.StartTime.Time)
	}
}
