package nodeplacement

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// Name is the plugin's name in the scheduler configuration.
const Name = "nodeplacement"

// Strategies, the values of the gpu and cpu arguments. Fragmentation (gpu only, the
// default) places GPU shares where what stays free can best serve the cluster's mix of GPU
// requests.
const (
	Binpack       = "binpack"
	Spread        = "spread"
	Fragmentation = "fragmentation"
)

// The arguments, each a strategy for one resource.
const (
	ArgGPU = "gpu"
	ArgCPU = "cpu"
)

// Arguments returns each argument's name and the values it takes. New checks against it, and
// the Helm chart, which refuses a bad argument before anything reaches a cluster, is tested
// against it (test/helm), so that the two cannot drift apart.
func Arguments() map[string][]string {
	return map[string][]string{ArgGPU: {Binpack, Spread, Fragmentation}, ArgCPU: {Binpack, Spread}}
}

// gpuWeight makes the GPU placement dominate: GPUs are the scarce resource whose
// fragmentation keeps gangs pending.
const gpuWeight = 10

type plugin struct {
	gpu       string
	spreadCPU bool
	// mix is the session's mix of GPU requests, for the fragmentation strategy (nil when
	// it holds no share: binpack places it).
	mix []kindWeight
}

var _ framework.Plugin = &plugin{}

// New reads the optional arguments gpu (binpack, spread or fragmentation, the default) and
// cpu (binpack, the default, or spread).
func New(args framework.Arguments) (framework.Plugin, error) {
	p := &plugin{gpu: Fragmentation}
	known := Arguments()
	for _, key := range slices.Sorted(maps.Keys(args)) {
		value := args[key]
		allowed, ok := known[key]
		if !ok {
			return nil, fmt.Errorf("unknown argument %q (known: %s)", key, strings.Join(slices.Sorted(maps.Keys(known)), ", "))
		}
		if !slices.Contains(allowed, value) {
			quoted := make([]string, len(allowed))
			for i, v := range allowed {
				quoted[i] = strconv.Quote(v)
			}
			return nil, fmt.Errorf("%s: must be %s or %s, got %q", key, strings.Join(quoted[:len(quoted)-1], ", "), quoted[len(quoted)-1], value)
		}
		switch key {
		case ArgGPU:
			p.gpu = value
		case ArgCPU:
			p.spreadCPU = value == Spread
		}
	}
	return p, nil
}

func (p *plugin) Name() string { return Name }

func (p *plugin) OnSessionOpen(ssn *framework.Session) {
	p.mix = nil
	if p.gpu == Fragmentation {
		p.mix = mixOf(ssn)
	}
	ssn.AddNodeOrderFn(Name, p.score)
	ssn.AddDeviceOrderFn(Name, p.deviceOrder)
}

func (p *plugin) OnSessionClose(*framework.Session) {}

// score is the node's utilisation after placing the pod (binpack) or its complement (spread),
// for GPUs when the pod asks for GPUs, and for CPU. With the fragmentation strategy and
// shares in the mix, the GPU score is first how little the node's fragmentation grows (in
// GPUs a request of the mix would find stranded), then packing.
func (p *plugin) score(pod *model.PodInfo, node *model.NodeInfo) float64 {
	var score float64
	if pod.Request.Get(model.GPU) > 0 {
		gpu := placementScore(pod, node, model.GPU, p.gpu == Spread)
		if p.mix != nil {
			gpu -= p.fragmentationGrowth(pod, node) / model.MilliGPU
		}
		score += gpuWeight * gpu
	}
	return score + placementScore(pod, node, model.CPU, p.spreadCPU)
}

// deviceOrder is the order of a node's devices for a share pod: by fragmentation, when
// weighed, else the fullest first (binpack) or the emptiest (spread).
func (p *plugin) deviceOrder(pod *model.PodInfo, node *model.NodeInfo) model.DeviceOrder {
	switch {
	case p.gpu == Spread:
		return model.SpreadDevices
	case p.mix != nil:
		return p.fragmentationOrder(pod, node)
	}
	return model.PackDevices
}

func placementScore(pod *model.PodInfo, node *model.NodeInfo, r model.ResourceName, spread bool) float64 {
	allocatable := node.Allocatable.Get(r)
	if allocatable <= 0 {
		return 0
	}
	usedAfter := allocatable - node.Idle().Get(r) + pod.Request.Get(r)
	utilisation := float64(usedAfter) / float64(allocatable)
	if spread {
		return 1 - utilisation
	}
	return utilisation
}
