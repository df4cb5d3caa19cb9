package input

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// SyntheticDay is a scenario of a synthetic day: 100 nodes of 8 GPUs, four team queues with
// quotas and a reclaimMinRuntime of 20m, and 2000 jobs of 1–2 pods × 1–4 GPUs submitted over
// 24 hours, running 10 minutes to 2 hours with startups and (every other job) a checkpoint
// every 15 minutes, at the priorities of the default classes. Three teams own the GPUs; a
// fourth (infra) has no quota and borrows. Most jobs arrive in working hours, so the day is
// quiet at night and contended, with reclaims, at its peak.
//
// It is generated, from a fixed seed, rather than kept as a file of 2000 jobs: the same
// bytes every time, so that the benchmark (BenchmarkDayOf2000Jobs) and the measured outcomes
// (hack/outcomes, docs/minruntime.md) run the same day.
func SyntheticDay() []byte {
	rng := rand.New(rand.NewPCG(2026, 11))
	var b strings.Builder
	for n := range 100 {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Node\nmetadata: {name: node-%03d}\nstatus:\n  allocatable: {cpu: \"64\", memory: 512Gi, nvidia.com/gpu: \"8\"}\n", n)
	}
	teams := []string{"vision", "language", "speech", "infra"}
	for _, team := range teams {
		quota := 266
		if team == "infra" {
			quota = 0
		}
		fmt.Fprintf(&b, "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: %s}\nspec:\n  reclaimMinRuntime: 20m\n  resources:\n    gpu: {quota: %d, overQuotaWeight: 1, limit: -1}\n    cpu: {quota: -1, overQuotaWeight: 1, limit: -1}\n    memory: {quota: -1, overQuotaWeight: 1, limit: -1}\n", team, quota)
	}
	classes := []string{"train", "build-preemptible", "train", "inference"}
	for j := range 2000 {
		team := teams[rng.IntN(len(teams))]
		pods, gpus := 1+rng.IntN(2), 1+rng.IntN(4)
		checkpoint := ""
		if j%2 == 0 {
			checkpoint = "\n    " + CheckpointIntervalAnnotation + ": 15m"
		}
		submit := rng.IntN(24 * 3600)
		if rng.IntN(10) < 7 {
			submit = 9*3600 + rng.IntN(8*3600) // working hours
		}
		fmt.Fprintf(&b, "---\napiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata:\n  name: job-%04d\n  namespace: %s\n  annotations:\n    sim.kai.scheduler/submit-at: %ds\n    sim.kai.scheduler/duration: %dm\n    sim.kai.scheduler/startup: %dm%s\nspec: {minMember: %d, queue: %s, priorityClassName: %s}\n",
			j, team, submit, 10+rng.IntN(110), rng.IntN(10), checkpoint, pods, team, classes[rng.IntN(len(classes))])
		for p := range pods {
			fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: job-%04d-%d, namespace: %s, annotations: {pod-group-name: job-%04d}}\nspec:\n  terminationGracePeriodSeconds: 30\n  containers:\n  - name: main\n    image: worker\n    resources: {requests: {cpu: \"1\", nvidia.com/gpu: \"%d\"}}\n", j, p, team, j, gpus)
		}
	}
	return []byte(b.String())
}
