package sim_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/internal/simtest"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

const poolLabel = "kai.scheduler/node-pool"

func runPools(t *testing.T, scenario []byte, opts sim.Options) (*report.Result, error) {
	t.Helper()
	sc, err := input.Parse(scenario)
	if err != nil {
		t.Fatal(err)
	}
	return sim.Run(context.Background(), sc, opts)
}

// The documented example: each pool's scheduler protects with its own defaults, and every
// pod lands on a node of its job's pool.
func TestEachPoolRunsItsOwnScheduler(t *testing.T) {
	r, err := runPools(t, simtest.Example(t, "node-pools.yaml"), sim.Options{
		NodePoolLabelKey: poolLabel,
		PoolConfigs:      map[string][]byte{"a100": simtest.Example(t, "node-pools.a100.conf.yaml")},
	})
	if err != nil {
		t.Fatal(err)
	}
	evicted := simtest.EvictionTimes(r)
	if got := evicted["default/a100-train"]; !slices.Equal(got, []float64{3600}) {
		t.Errorf("a100's borrower evicted at %v, want once at 3600s (its pool protects for 1h)", got)
	}
	if got := evicted["default/h100-train"]; !slices.Equal(got, []float64{600}) {
		t.Errorf("h100's borrower evicted at %v, want once at 600s, when its owner came (no protection there)", got)
	}
	for _, e := range r.Events {
		if e.Pool == "" || !strings.HasPrefix(e.PodGroup, "default/"+e.Pool+"-") {
			t.Errorf("event %+v does not carry its job's pool", e)
		}
		if e.Type == report.EventBind && !strings.HasPrefix(e.Node, e.Pool+"-") {
			t.Errorf("%s of pool %s was bound to %s, another pool's node", e.PodGroup, e.Pool, e.Node)
		}
	}
	if len(r.Pools) != 2 || r.Pools[0].Pool != "a100" || r.Pools[1].Pool != "h100" {
		t.Fatalf("pools %+v, want a100 and h100, one scheduler each", r.Pools)
	}
	for _, want := range []struct {
		pool    report.PoolReport
		reclaim string
	}{{r.Pools[0], "defaultReclaimMinRuntime=1h0m0s"}, {r.Pools[1], "defaultReclaimMinRuntime=0s"}} {
		p := want.pool
		if p.Nodes != 1 || p.GPUs != 4 || p.Jobs != 2 || p.Completed != 2 || p.Evictions != 1 {
			t.Errorf("pool %s: %+v, want 1 node, 4 GPUs, 2 jobs completed, 1 eviction", p.Pool, p)
		}
		if !strings.Contains(strings.Join(p.Settings, " "), want.reclaim) {
			t.Errorf("pool %s ran with %v, want %s", p.Pool, p.Settings, want.reclaim)
		}
	}
	if r.Pools[0].ProtectedRefusals == 0 || r.Pools[1].ProtectedRefusals != 0 {
		t.Errorf("protected refusals a100 %d, h100 %d: want some in a100 only", r.Pools[0].ProtectedRefusals, r.Pools[1].ProtectedRefusals)
	}
	for _, q := range r.Totals.Queues {
		if !strings.HasPrefix(q.Queue, q.Pool+"-") {
			t.Errorf("queue %s reported in pool %q", q.Queue, q.Pool)
		}
	}
	// Without the label key, one scheduler serves everything with the default: no pool
	// protects, and a configuration per pool has nothing to apply to.
	r, err = runPools(t, simtest.Example(t, "node-pools.yaml"), sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := simtest.EvictionTimes(r)["default/a100-train"]; len(r.Pools) != 1 || !slices.Equal(got, []float64{600}) {
		t.Errorf("without pools: %d schedulers, a100's borrower evicted at %v; want one scheduler, eviction at 600s", len(r.Pools), got)
	}
}

// poolScenario is two pools of one 4-GPU node each, with a queue each, and the given jobs.
func poolScenario(jobs ...string) []byte {
	var docs []string
	for _, pool := range []string{"a", "b"} {
		docs = append(docs, fmt.Sprintf(`apiVersion: v1
kind: Node
metadata: {name: node-%[1]s, labels: {%[2]s: %[1]s}}
status: {allocatable: {cpu: "16", memory: 64Gi, nvidia.com/gpu: "4"}}`, pool, poolLabel), fmt.Sprintf(`apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: queue-%[1]s, labels: {%[2]s: %[1]s}}
spec: {resources: {gpu: {quota: 4, limit: -1, overQuotaWeight: 1}}}`, pool, poolLabel))
	}
	return []byte(strings.Join(append(docs, jobs...), "\n---\n"))
}

// job is a PodGroup of pool labelled in queue, with pods of gpus GPUs each, all needed.
func job(name, pool, queue string, pods, gpus int) string {
	docs := []string{fmt.Sprintf(`apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: %s, labels: {%s: %s}, annotations: {sim.kai.scheduler/duration: 1h}}
spec: {minMember: %d, queue: %s}`, name, poolLabel, pool, pods, queue)}
	for i := range pods {
		docs = append(docs, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s-%d, annotations: {pod-group-name: %s}}
spec: {containers: [{name: main, image: busybox, resources: {requests: {nvidia.com/gpu: "%d"}}}]}`, name, i, name, gpus))
	}
	return strings.Join(docs, "\n---\n")
}

// A job never takes resources from two pools: a gang too big for its pool waits, told why,
// while the other pool's GPUs stand idle; a job whose queue is another pool's is told so.
func TestJobsStayInTheirPool(t *testing.T) {
	scenario := poolScenario(job("wide", "a", "queue-a", 2, 4), job("lost", "b", "queue-a", 1, 1), job("fits", "b", "queue-b", 1, 4))
	r, err := runPools(t, scenario, sim.Options{NodePoolLabelKey: poolLabel})
	if err != nil {
		t.Fatal(err)
	}
	waiting := map[string]string{}
	for _, j := range r.Jobs {
		waiting[j.PodGroup] = strings.Join(j.Waiting, "; ")
		if (j.FirstStart != nil) != (j.PodGroup == "default/fits") {
			t.Errorf("%s started at %v; only fits, which fits its pool, should", j.PodGroup, j.FirstStart)
		}
	}
	// Its scheduler sees one node, its pool's: the other pool's idle node is not its to use.
	if !strings.Contains(waiting["default/wide"], "0/1 nodes are available") {
		t.Errorf("wide waits without saying its pool's one node lacks room: %q", waiting["default/wide"])
	}
	if !strings.Contains(waiting["default/lost"], `queue "queue-a" does not exist, or belongs to another node pool`) {
		t.Errorf("lost waits without saying its queue is another pool's: %q", waiting["default/lost"])
	}
}

// Mistakes in pool configurations are named, all at once, before anything runs.
func TestPoolConfigurationMistakes(t *testing.T) {
	scenario := poolScenario(job("fits", "b", "queue-b", 1, 4))
	_, err := runPools(t, scenario, sim.Options{NodePoolLabelKey: poolLabel, PoolConfigs: map[string][]byte{
		"a10": []byte(`actions: allocate`), "b": []byte(`actions: allocate, teleport`),
	}})
	if err == nil || !strings.Contains(err.Error(), `pool "a10" has a configuration, but no Node, Queue or PodGroup of the scenario carries kai.scheduler/node-pool=a10`) ||
		!strings.Contains(err.Error(), `configuration of pool "b"`) || !strings.Contains(err.Error(), "teleport") {
		t.Errorf("want both the unknown pool and pool b's unknown action named, got: %v", err)
	}
	_, err = runPools(t, scenario, sim.Options{PoolConfigs: map[string][]byte{"b": nil}})
	if err == nil || !strings.Contains(err.Error(), "label key") {
		t.Errorf("pool configurations without a label key: got %v, want an error", err)
	}
}

// Jobs left without the pool label, on a cluster whose nodes all have it, fall to a
// scheduler with no node: the run says so, and how to fix the scenario.
func TestAPoolWithJobsAndNoNodeIsWarnedAbout(t *testing.T) {
	r, err := runPools(t, poolScenario(job("unlabelled", "", "queue-a", 1, 1), job("fits", "b", "queue-b", 1, 4)),
		sim.Options{NodePoolLabelKey: poolLabel})
	if err != nil {
		t.Fatal(err)
	}
	want := "pool default has 1 job and no node, so its scheduler cannot place any: label the PodGroups of its jobs with the pool of the nodes they should use (kai.scheduler/node-pool)"
	if len(r.Warnings) != 1 || !strings.HasPrefix(r.Warnings[0], want) {
		t.Errorf("warnings %q, want one starting %q", r.Warnings, want)
	}
	// A broken shared configuration is one mistake, however many pools run it.
	_, err = runPools(t, poolScenario(job("fits", "b", "queue-b", 1, 4)), sim.Options{NodePoolLabelKey: poolLabel, Config: []byte("actions: teleport")})
	if err == nil || strings.Count(err.Error(), "teleport") != 1 {
		t.Errorf("want the shared configuration's mistake once, got: %v", err)
	}
}
