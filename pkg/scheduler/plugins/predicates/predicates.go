package predicates

import (
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/placement"
)

// Name is the plugin's name in the scheduler configuration.
const Name = "predicates"

// The weights put preferences above packing, as kube-scheduler's default weights put its
// NodeAffinity (2) and TaintToleration (3) scores above resource packing (1): nodeplacement
// scores at most 11, a fully matched preference adds affinityWeight and each untolerated
// PreferNoSchedule taint takes taintWeight away.
const (
	affinityWeight = 20
	taintWeight    = 30
)

type plugin struct{}

var _ framework.Plugin = plugin{}

// New builds the plugin; it takes no arguments.
func New(args framework.Arguments) (framework.Plugin, error) {
	return plugin{}, framework.RejectArguments(args)
}

func (plugin) Name() string { return Name }

func (plugin) OnSessionOpen(ssn *framework.Session) {
	ssn.AddNodeOrderFn(Name, Score)
}

func (plugin) OnSessionClose(*framework.Session) {}

// Score rates how well the node suits what the pod prefers: the share of its preferred
// node-affinity weight the node matches, less each PreferNoSchedule taint it does not
// tolerate. It runs for every pod on every node; for a pod that prefers nothing on a node
// without taints it is two nil tests.
func Score(pod *model.PodInfo, node *model.NodeInfo) float64 {
	if pod.Placement == nil && len(node.Taints) == 0 {
		return 0
	}
	affinity, untolerated := placement.Preference(pod, node)
	return affinityWeight*affinity - taintWeight*float64(untolerated)
}
