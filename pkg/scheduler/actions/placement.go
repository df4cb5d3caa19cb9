package actions

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
)

// Capacity selects which resources of a node a placement may use.
type Capacity int

const (
	// IdleNow uses only idle resources that no promise counts on: the pod can be bound at once.
	IdleNow Capacity = iota
	// IdleOrReleasing also uses resources that terminating pods are releasing: the pod is
	// pipelined onto them for the cycle, so that nothing later in it takes them, and placed
	// anew (bound once they are free) in a later cycle.
	IdleOrReleasing
)

func (c Capacity) free(node *api.NodeInfo) api.Resources {
	if c == IdleNow {
		return node.Bindable()
	}
	return node.FutureIdle()
}

// insufficient holds the refusal reason per resource, built once: this runs for every node
// of every search.
var insufficient = func() (reasons [api.NumResources]string) {
	for _, r := range api.ResourceNames {
		reasons[r] = "insufficient " + r.String()
	}
	return reasons
}()

// NodeSearch finds the best node for a pod and remembers why nodes were refused, so that a
// pending job can be told why it waits.
type NodeSearch struct {
	ssn *framework.Session
	// refusals counts nodes per reason in the latest search.
	refusals map[string]int
}

// NewNodeSearch starts a search on the session's nodes.
func NewNodeSearch(ssn *framework.Session) *NodeSearch {
	return &NodeSearch{ssn: ssn, refusals: map[string]int{}}
}

// BestNode returns the schedulable node with the highest score among those where the pod
// fits in the given capacity and every predicate passes; ties go to the first node by name.
// It returns nil if none fits.
func (s *NodeSearch) BestNode(pod *api.PodInfo, capacity Capacity) *api.NodeInfo {
	clear(s.refusals)
	var best *api.NodeInfo
	var bestScore float64
	for _, node := range s.ssn.Snapshot().Nodes {
		if reason := s.refusal(pod, node, capacity); reason != "" {
			s.refusals[reason]++
			continue
		}
		score := s.ssn.NodeScore(pod, node)
		if best == nil || score > bestScore {
			best, bestScore = node, score
		}
	}
	return best
}

// PreferredNode returns the first of the preferred nodes (those promised to the pod's job)
// where the pod fits in the given capacity and may run, or nil. Trying them first keeps a
// promise where it was made, as kube-scheduler tries a pod's nominated node first.
func (s *NodeSearch) PreferredNode(pod *api.PodInfo, capacity Capacity, preferred []string) *api.NodeInfo {
	for _, name := range preferred {
		if node := s.ssn.Snapshot().Node(name); node != nil && s.refusal(pod, node, capacity) == "" {
			return node
		}
	}
	return nil
}

func (s *NodeSearch) refusal(pod *api.PodInfo, node *api.NodeInfo, capacity Capacity) string {
	if node.Unschedulable {
		return "node is unschedulable"
	}
	free := capacity.free(node)
	for _, r := range api.ResourceNames {
		if pod.Request[r] > free[r] {
			return insufficient[r]
		}
	}
	if err := s.ssn.Predicate(pod, node); err != nil {
		return err.Error()
	}
	return ""
}

// Explain summarises why nodes were refused in the latest search, e.g. "3 nodes: insufficient gpu; 1 node: node
// is unschedulable", most frequent reason first.
func (s *NodeSearch) Explain() string {
	if len(s.refusals) == 0 {
		return "no nodes"
	}
	reasons := make([]string, 0, len(s.refusals))
	for r := range s.refusals {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool {
		if s.refusals[reasons[i]] != s.refusals[reasons[j]] {
			return s.refusals[reasons[i]] > s.refusals[reasons[j]]
		}
		return reasons[i] < reasons[j]
	})
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		noun := "nodes"
		if s.refusals[r] == 1 {
			noun = "node"
		}
		parts[i] = fmt.Sprintf("%d %s: %s", s.refusals[r], noun, r)
	}
	return strings.Join(parts, "; ")
}
