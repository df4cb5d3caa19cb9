package fragbench

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
)

// A recorded figure can be measured again: the same nodes and seed give the same bytes, and
// another seed another mix on the same cluster size.
func TestTheMixIsTheSameForTheSameSeed(t *testing.T) {
	a, err := Generate(100, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(100, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Scenario, b.Scenario) {
		t.Fatal("two mixes of the same seed differ")
	}
	c, err := Generate(100, 8)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a.Scenario, c.Scenario) {
		t.Fatal("another seed gave the same mix")
	}
}

// The mix is what the benchmark says it is: a cluster of the kinds in their shares, one pod
// a second that never finishes, one PodGroup of one pod each in one queue of unlimited quota,
// and arrivals reaching each level at the second the table reads, the last pod the one that
// reaches 130%.
func TestTheMixIsTheClusterAndArrivalsItDescribes(t *testing.T) {
	m, err := Generate(DefaultNodes, 1)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := input.Parse(m.Scenario)
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Nodes) != DefaultNodes || len(sc.Jobs) != m.Pods || len(sc.Queues) != 1 {
		t.Fatalf("%d nodes, %d jobs, %d queues; want %d, %d, 1", len(sc.Nodes), len(sc.Jobs), len(sc.Queues), DefaultNodes, m.Pods)
	}
	kinds := map[string]int{}
	var gpus int64
	for _, n := range sc.Nodes {
		kinds[n.Labels["mix.kai.scheduler/kind"]]++
		q := n.Status.Allocatable[model.GPUResourceName]
		gpus += q.Value()
	}
	if gpus != m.GPUs || gpus != 6120 {
		t.Errorf("the cluster has %d GPUs, the mix says %d; want 6120 at 1,200 nodes", gpus, m.GPUs)
	}
	for name, want := range map[string]int{"gpu8-80g": 300, "gpu8-40g": 300, "gpu4-24g": 240, "gpu2-16g": 180, "cpu": 180} {
		if kinds[name] != want {
			t.Errorf("%d nodes of kind %s, want %d", kinds[name], name, want)
		}
	}
	// Arrivals, in GPUs asked, as the scheduler counts them.
	var asked int64
	reached := []int{}
	for i, job := range sc.Jobs {
		if job.SubmitAt.Seconds() != float64(i) || job.Duration != 0 || len(job.Pods) != 1 || job.Group.Spec.MinMember != 1 {
			t.Fatalf("job %d: submitted at %s, duration %s, %d pods, minMember %d; want at %ds, never finishing, one pod, minMember 1",
				i, job.SubmitAt, job.Duration, len(job.Pods), job.Group.Spec.MinMember, i)
		}
		share, err := model.ParseGPUShare(job.Pods[0])
		if err != nil {
			t.Fatal(err)
		}
		if share != nil {
			asked += model.FractionPortion(share.Fraction)
		} else {
			asked += sim.PodGPUs(job.Pods[0]) * model.MilliGPU
		}
		for len(reached) < len(Levels) && float64(asked) >= Levels[len(reached)]*float64(gpus*model.MilliGPU) {
			reached = append(reached, i)
		}
	}
	if len(reached) != len(Levels) || reached[len(reached)-1] != m.Pods-1 {
		t.Fatalf("arrivals reach the levels at %v with %d pods, want the last pod to reach %.0f%%", reached, m.Pods, 100*Levels[len(Levels)-1])
	}
	for i := range reached {
		if reached[i] != m.ReachedAt[i] {
			t.Errorf("arrivals reach %.0f%% at %ds, the mix says %ds", 100*Levels[i], reached[i], m.ReachedAt[i])
		}
	}
	// The pod kinds in about their shares (thousands of draws: within 2 points).
	for _, k := range podKinds {
		if got := float64(m.Kinds[k.name]) / float64(m.Pods); got < k.share-0.02 || got > k.share+0.02 {
			t.Errorf("%.1f%% of the pods are %s, want about %.0f%%", 100*got, k.name, 100*k.share)
		}
	}
}

// Every kind of node is in the cluster from five nodes on, the counts adding up; a cluster
// too small to hold one of each is refused rather than skewed.
func TestEveryKindOfNodeIsInTheCluster(t *testing.T) {
	for _, nodes := range []int{5, 6, 10, 60, 61} {
		total := 0
		for i, n := range nodeCounts(nodes) {
			if n == 0 {
				t.Errorf("%d nodes: no node of kind %s", nodes, nodeKinds[i].name)
			}
			total += n
		}
		if total != nodes {
			t.Errorf("%d nodes divided into %d", nodes, total)
		}
	}
	if _, err := Generate(4, 1); err == nil || !strings.Contains(err.Error(), "at least 5 nodes") {
		t.Fatalf("got %v", err)
	}
}

// The whole-GPU fill is the shares' mix with every share asking one whole GPU: the same pods
// at the same seconds, stopping at the same arrival, and no share left.
func TestTheWholeGPUFillIsTheSameArrivals(t *testing.T) {
	shares, err := Generate(60, 1)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := GenerateWhole(60, 1)
	if err != nil {
		t.Fatal(err)
	}
	if whole.Pods != shares.Pods || !slices.Equal(whole.ReachedAt, shares.ReachedAt) || whole.GPUs != shares.GPUs {
		t.Fatalf("whole fill: %d pods reaching the levels at %v on %d GPUs; the shares': %d at %v on %d",
			whole.Pods, whole.ReachedAt, whole.GPUs, shares.Pods, shares.ReachedAt, shares.GPUs)
	}
	if n := strings.Count(string(whole.Scenario), "gpu-fraction"); n != 0 || !maps.Equal(whole.Kinds, shares.Kinds) {
		t.Fatalf("whole fill: %d gpu-fraction annotations, kinds %v against the shares' %v", n, whole.Kinds, shares.Kinds)
	}
	// Every share pod asks one whole GPU, beside the pods that asked one already.
	oneGPU := strings.Count(string(whole.Scenario), `nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}`)
	if want := shares.Kinds["share"] + shares.Kinds["gpu1"]; oneGPU != want {
		t.Fatalf("whole fill: %d pods ask one whole GPU, want %d (%d shares and %d of one GPU)", oneGPU, want, shares.Kinds["share"], shares.Kinds["gpu1"])
	}
}
