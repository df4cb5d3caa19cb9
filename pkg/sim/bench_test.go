package sim_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
)

// dayTrace is a synthetic day: 100 nodes of 8 GPUs, four team queues with quotas, and 2000
// jobs of 1–2 pods × 1–4 GPUs submitted over 24 hours, running 10 minutes to 2 hours with
// startups and (for half of them) checkpoints, at the priorities of the default classes.
// Three teams own the GPUs; a fourth (infra) has no quota and borrows. Most jobs arrive in
// working hours, so the day is quiet at night and contended, with reclaims, at its peak.
func dayTrace() string {
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
			checkpoint = "\n    sim.kai.scheduler/checkpoint-interval: 15m"
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
	return b.String()
}

// benchHorizon is the virtual time the benchmark simulates.
var benchHorizon = 24 * time.Hour

// BenchmarkDayOf2000Jobs simulates the day trace for 24 hours of virtual time with the
// built-in configuration. Parsing is setup and not timed.
func BenchmarkDayOf2000Jobs(b *testing.B) {
	trace := []byte(dayTrace())
	b.ReportAllocs()
	for range b.N {
		b.StopTimer()
		sc, err := input.Parse(trace)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		result, err := sim.Run(context.Background(), sc, sim.Options{Until: benchHorizon})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(result.Totals.Completed), "completed")
		b.ReportMetric(float64(result.Totals.Evictions), "evictions")
	}
}
