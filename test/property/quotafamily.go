package property

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// quotaStream seeds the quota family; its scenarios share no draw with Generate's.
const quotaStream = 0x71756f74 // "quot"

// GenerateQuota builds a scenario of owed quotas, where Q3 has owed jobs to judge and can
// judge them exactly: GPUs all alike (one GPU a pod, no placement rule, every job a gang of
// all its pods, no pod failing, no preemption delay), so that a job fits wherever as many
// GPUs are free. A borrower queue (quota 0) fills the cluster first; two to four owner queues,
// whose quotas often add up to more than the cluster (over-subscribed) and now and then are
// -1, want their quotas back later; the chart's default queues (quota 0, or -1 as the chart
// had them) get notebooks throughout. Min-runtimes, the resolve method and the period are
// drawn as Generate draws them. In a quarter of the scenarios the nodes are racks of a
// Topology and a third of the jobs ask for its domains. The same seed always gives the same
// scenario.
func GenerateQuota(seed uint64) *Scenario {
	r := rand.New(rand.NewPCG(seed^quotaStream, ^seed^quotaStream))
	s := &Scenario{Seed: seed, JudgeOwed: true}
	for i := range 1 + r.IntN(3) {
		s.Nodes = append(s.Nodes, Node{Name: fmt.Sprintf("node-%d", i), GPUs: 4 + r.IntN(5)})
	}
	total := s.totalGPUs()
	owners := 2 + r.IntN(3)
	for i := range owners {
		q := &Queue{Name: fmt.Sprintf("owner%d", i), Quota: float64(1 + r.IntN(total)), Limit: -1, Weight: r.IntN(3), Leaf: true,
			PreemptMinRuntime: optionalMinRuntime(r), ReclaimMinRuntime: optionalMinRuntime(r)}
		if r.IntN(6) == 0 {
			q.Quota = -1
		}
		s.Queues = append(s.Queues, q)
	}
	s.Queues = append(s.Queues, &Queue{Name: "borrower", Limit: -1, Weight: 1 + r.IntN(2), Leaf: true, ReclaimMinRuntime: optionalMinRuntime(r)})
	defaultQuota, noCPUMemory := 0.0, true
	if r.IntN(3) == 0 {
		defaultQuota, noCPUMemory = -1, false
	}
	s.Queues = append(s.Queues,
		&Queue{Name: defaultParentQueue, Quota: defaultQuota, Limit: -1, Weight: 1, NoCPUMemoryQuota: noCPUMemory},
		&Queue{Name: defaultQueue, Parent: defaultParentQueue, Quota: defaultQuota, Limit: -1, Weight: 1, NoCPUMemoryQuota: noCPUMemory, Leaf: true,
			ReclaimMinRuntime: optionalMinRuntime(r)})
	s.DefaultPreempt, s.DefaultReclaim = optionalMinRuntime(r), optionalMinRuntime(r)
	s.Method = []string{"", "lca", "queue"}[r.IntN(3)]
	s.Period = []time.Duration{time.Second, 2 * time.Second, 5 * time.Second}[r.IntN(3)]
	job := func(queue string, pods int, submitAt, duration time.Duration) {
		j := &Job{Name: fmt.Sprintf("j%02d", len(s.Jobs)), Queue: queue, PriorityClass: "train", Priority: classPriority["train"],
			MinMember: pods, GPUs: 1, SubmitAt: submitAt, Duration: duration}
		for range pods {
			j.Pods = append(j.Pods, Pod{Name: fmt.Sprintf("%s-%d", j.Name, len(j.Pods)), Grace: r.IntN(31)})
		}
		s.Jobs = append(s.Jobs, j)
	}
	// Borrowers fill the cluster over the first minute.
	for filled := 0; filled < total; {
		pods := min(1+r.IntN(3), total-filled)
		job("borrower", pods, time.Duration(r.IntN(7))*10*time.Second, time.Duration(30+r.IntN(91))*10*time.Second)
		filled += pods
	}
	// Owners want their quotas back later, in gangs each within its quota.
	for _, q := range s.Queues[:owners] {
		most := total
		if q.Quota >= 0 {
			most = int(q.Quota)
		}
		for range 1 + r.IntN(3) {
			job(q.Name, 1+r.IntN(min(4, most)), time.Duration(6+r.IntN(85))*10*time.Second, time.Duration(6+r.IntN(55))*10*time.Second)
		}
	}
	for range 1 + r.IntN(3) {
		job(defaultQueue, 1+r.IntN(2), time.Duration(r.IntN(91))*10*time.Second, time.Duration(12+r.IntN(169))*10*time.Second)
	}
	// In topologyShare of the scenarios, from a stream of its own so that every other draw
	// stays as it was: each node a rack, in zones of one to three, now and then one outside,
	// and a third of the jobs constrained as Generate's are, where Q3 judges a job with a
	// required level owed only when one domain can hold it.
	if t := rand.New(rand.NewPCG(seed^quotaStream, seed^topologyStream)); t.IntN(4) < topologyShare {
		s.labelDomains(t, true, 1)
		s.constrainTopology(t)
	}
	s.Horizon = s.horizon()
	return s
}
