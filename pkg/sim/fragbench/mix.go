package fragbench

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// DefaultNodes is the size of the recorded cluster: about as many GPUs (6,120) as the
// paper's 6,212, so that a stranded GPU weighs about as much in both.
const DefaultNodes = 1200

// Levels are the arrivals, as a share of the cluster's GPUs, at which a run is read: the
// cluster just asked for in full, and over-asked by 10% and by 30% (where the paper reports).
var Levels = []float64{1.0, 1.1, 1.3}

// nodeKind is one kind of node of the cluster, and its share of the nodes.
type nodeKind struct {
	name      string
	share     float64
	gpus      int
	memoryMiB int64 // of each device, as the nvidia.com/gpu.memory label says
	product   string
	cpu       int
	memoryGiB int
}

// nodeKinds is the cluster: GPU nodes of four kinds, as a cloud's fleet of a few GPU
// generations, and CPU-only nodes. CPU and memory are generous for the pods' requests (at most
// a quarter of a node's CPU for a node full of whole-GPU pods), so that GPUs, not CPU, decide
// what fits.
var nodeKinds = []nodeKind{
	{name: "gpu8-80g", share: 0.25, gpus: 8, memoryMiB: 81920, product: "NVIDIA-A100-SXM4-80GB", cpu: 128, memoryGiB: 1024},
	{name: "gpu8-40g", share: 0.25, gpus: 8, memoryMiB: 40960, product: "NVIDIA-A100-SXM4-40GB", cpu: 128, memoryGiB: 1024},
	{name: "gpu4-24g", share: 0.20, gpus: 4, memoryMiB: 24576, product: "NVIDIA-A10", cpu: 64, memoryGiB: 512},
	{name: "gpu2-16g", share: 0.15, gpus: 2, memoryMiB: 16384, product: "Tesla-T4", cpu: 32, memoryGiB: 256},
	{name: "cpu", share: 0.15, cpu: 64, memoryGiB: 512},
}

// podKind is one kind of pod of the mix, and its share of the pods.
type podKind struct {
	name  string
	share float64
	// gpus is the whole GPUs it asks for; 0 with fraction for a share, 0 without for CPU only.
	gpus     int
	fraction bool
}

// podKinds is the mix by count, read from the paper's production trace as published
// (alibaba/clusterdata, cluster-trace-gpu-v2023, openb_pod_list_default.csv: 8,152 tasks, of
// which 13% ask for no GPU): shares of one GPU are about a third of the tasks, whole single
// GPUs about half, and tasks of 2 to 8 GPUs few but, at 8 GPUs each, a tenth of the GPUs
// asked for and the first to find no node whole. The trace asks for no share of several
// devices (gpu-fraction-num-devices) and no memory (gpu-memory), and neither does the mix.
var podKinds = []podKind{
	{name: "cpu", share: 0.13},
	{name: "share", share: 0.32, fraction: true},
	{name: "gpu1", share: 0.52, gpus: 1},
	{name: "gpu2", share: 0.01, gpus: 2},
	{name: "gpu4", share: 0.01, gpus: 4},
	{name: "gpu8", share: 0.01, gpus: 8},
}

// fraction is a share of one GPU a share pod may ask for, and how often it does.
type fraction struct {
	value  float64
	weight int
}

// fractions are the shares of one GPU the share pods ask for, with their weights: the values
// the trace's GPU-sharing tasks ask for most (its gpu_milli clusters around 0.45, with 0.2–0.3,
// 0.65 and 0.8 next), rounded to a twentieth. Mean 0.44 of a device.
var fractions = []fraction{
	{0.1, 6}, {0.2, 10}, {0.25, 10}, {0.3, 12}, {0.45, 25}, {0.5, 8}, {0.6, 7}, {0.65, 10}, {0.8, 12},
}

// Mix is a generated benchmark: the scenario and what the benchmark reads it by.
type Mix struct {
	Nodes int
	Seed  uint64
	// Whole is a mix whose share pods ask for one whole GPU instead (GenerateWhole).
	Whole bool
	// GPUs is the cluster's GPU capacity (devices).
	GPUs int64
	// Pods counts the pods, one a second from 0s, and Kinds them by kind (cpu, share, gpu1,
	// gpu2, gpu4, gpu8).
	Pods  int
	Kinds map[string]int
	// ReachedAt is, for each of Levels, the second at which the arrivals' GPU requests first
	// reach that share of GPUs: the pod submitted then is the one that reaches it.
	ReachedAt []int
	// Scenario is the mix as a kai-sim scenario file: the nodes, one queue with unlimited
	// quota (fair share never holds a pod back), and a PodGroup of one pod for each arrival,
	// submitted at its second and never finishing.
	Scenario []byte
}

// Generate makes the mix of the given number of nodes from seed: the same bytes for the same
// arguments. Nodes of each kind are shuffled into name order, so that no strategy's way of
// breaking ties by name meets a cluster sorted by kind.
func Generate(nodes int, seed uint64) (*Mix, error) { return generate(nodes, seed, false) }

// GenerateWhole is Generate with every share pod asking for one whole GPU instead: the same
// pods at the same seconds, the fill with whole GPUs that the cost of shares is measured
// against. Its ReachedAt are the shares' mix's, so both stop at the same arrival.
func GenerateWhole(nodes int, seed uint64) (*Mix, error) { return generate(nodes, seed, true) }

func generate(nodes int, seed uint64, whole bool) (*Mix, error) {
	if nodes < len(nodeKinds) {
		return nil, fmt.Errorf("a mix needs at least %d nodes, one of each kind; got %d", len(nodeKinds), nodes)
	}
	rng := rand.New(rand.NewPCG(seed, 42))
	m := &Mix{Nodes: nodes, Seed: seed, Whole: whole, Kinds: map[string]int{}}
	var b strings.Builder
	kinds := make([]nodeKind, 0, nodes)
	for i, count := range nodeCounts(nodes) {
		for range count {
			kinds = append(kinds, nodeKinds[i])
		}
	}
	rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	for i, k := range kinds {
		m.GPUs += int64(k.gpus)
		labels := "mix.kai.scheduler/kind: " + k.name
		gpus := ""
		if k.gpus > 0 {
			labels += fmt.Sprintf(", nvidia.com/gpu.product: %s, nvidia.com/gpu.memory: \"%d\"", k.product, k.memoryMiB)
			gpus = fmt.Sprintf(", nvidia.com/gpu: \"%d\"", k.gpus)
		}
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Node\nmetadata: {name: node-%04d, labels: {%s}}\nstatus: {allocatable: {cpu: \"%d\", memory: %dGi, pods: \"250\"%s}}\n",
			i, labels, k.cpu, k.memoryGiB, gpus)
	}
	b.WriteString("---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: mix}\nspec:\n  resources:\n" +
		"    gpu: {quota: -1, limit: -1, overQuotaWeight: 1}\n    cpu: {quota: -1, limit: -1, overQuotaWeight: 1}\n    memory: {quota: -1, limit: -1, overQuotaWeight: 1}\n")
	capacity := m.GPUs * model.MilliGPU
	var asked int64 // MilliGPU
	for second := 0; asked < capacity*13/10; second++ {
		kind := pick(rng, podKinds)
		m.Kinds[kind.name]++
		fmt.Fprintf(&b, "---\napiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: p-%05d, namespace: mix, annotations: {sim.kai.scheduler/submit-at: %ds}}\nspec: {minMember: 1, queue: mix}\n",
			second, second)
		annotations := "pod-group-name: p-" + fmt.Sprintf("%05d", second)
		var resources string
		switch {
		case kind.fraction:
			f := pickFraction(rng)
			resources = `requests: {cpu: "1", memory: 4Gi}`
			if whole {
				resources = `requests: {cpu: "1", memory: 4Gi, nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}`
			} else {
				annotations += ", gpu-fraction: \"" + strconv.FormatFloat(f.value, 'f', -1, 64) + "\""
			}
			asked += model.FractionPortion(f.value)
		case kind.gpus > 0:
			g := kind.gpus
			resources = fmt.Sprintf(`requests: {cpu: "%d", memory: %dGi, nvidia.com/gpu: "%d"}, limits: {nvidia.com/gpu: "%d"}`, 4*g, 16*g, g, g)
			asked += int64(g) * model.MilliGPU
		default:
			cpu := []int{2, 4, 8}[rng.IntN(3)]
			resources = fmt.Sprintf(`requests: {cpu: "%d", memory: %dGi}`, cpu, 4*cpu)
		}
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p-%05d-0, namespace: mix, annotations: {%s}}\nspec: {schedulerName: kai-scheduler, containers: [{name: main, image: work, resources: {%s}}]}\n",
			second, annotations, resources)
		m.Pods++
		for len(m.ReachedAt) < len(Levels) && float64(asked) >= Levels[len(m.ReachedAt)]*float64(capacity) {
			m.ReachedAt = append(m.ReachedAt, second)
		}
	}
	m.Scenario = []byte(b.String())
	return m, nil
}

// nodeCounts divides the nodes among the kinds by their shares, the nodes rounding leaves
// going to the kinds that lost most to it (the first of equals), so that every kind has a
// node from five nodes on and the counts add up.
func nodeCounts(nodes int) []int {
	counts := make([]int, len(nodeKinds))
	left := nodes
	for i, k := range nodeKinds {
		counts[i] = int(float64(nodes) * k.share)
		left -= counts[i]
	}
	for ; left > 0; left-- {
		best, lost := 0, -1.0
		for i, k := range nodeKinds {
			if l := float64(nodes)*k.share - float64(counts[i]); l > lost+1e-9 {
				best, lost = i, l
			}
		}
		counts[best]++
	}
	return counts
}

// pick draws a pod kind by its share.
func pick(rng *rand.Rand, kinds []podKind) podKind {
	u := rng.Float64()
	for _, k := range kinds {
		if u < k.share {
			return k
		}
		u -= k.share
	}
	return kinds[len(kinds)-1]
}

// pickFraction draws a share pod's fraction by its weight.
func pickFraction(rng *rand.Rand) fraction {
	total := 0
	for _, f := range fractions {
		total += f.weight
	}
	n := rng.IntN(total)
	for _, f := range fractions {
		if n < f.weight {
			return f
		}
		n -= f.weight
	}
	return fractions[len(fractions)-1]
}
