// Package predicates filters nodes by what a pod asks of them beyond resources: its node
// selector. (Resource fit and cordoned nodes are checked by the actions themselves, so that
// no configuration can turn them off.)
package predicates

import (
	"fmt"
	"maps"
	"slices"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
)

// Name is the plugin's name in the scheduler configuration.
const Name = "predicates"

type plugin struct{}

var _ framework.Plugin = plugin{}

// New builds the plugin; it takes no arguments.
func New(args framework.Arguments) (framework.Plugin, error) {
	return plugin{}, framework.RejectArguments(args)
}

func (plugin) Name() string { return Name }

func (plugin) OnSessionOpen(ssn *framework.Session) {
	ssn.AddPredicateFn(Name, MatchNodeSelector)
}

func (plugin) OnSessionClose(*framework.Session) {}

// MatchNodeSelector refuses nodes whose labels lack a pair of the pod's node selector. It runs
// for every pod on every node, so the match allocates nothing; only a refusal sorts the keys,
// to name the same missing label every time.
func MatchNodeSelector(pod *api.PodInfo, node *api.NodeInfo) error {
	for k, v := range pod.NodeSelector {
		if node.Labels[k] != v {
			return firstMismatch(pod, node)
		}
	}
	return nil
}

func firstMismatch(pod *api.PodInfo, node *api.NodeInfo) error {
	for _, k := range slices.Sorted(maps.Keys(pod.NodeSelector)) {
		if node.Labels[k] != pod.NodeSelector[k] {
			return fmt.Errorf("node selector %s=%s does not match", k, pod.NodeSelector[k])
		}
	}
	return nil
}
