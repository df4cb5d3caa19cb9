package actions

import (
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"

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

// insufficient holds kube-scheduler's reason per fixed resource, built once: this runs for
// every node of every search.
var insufficient = func() map[v1.ResourceName]string {
	reasons := map[v1.ResourceName]string{}
	for _, r := range api.FixedResources {
		reasons[r.KubeName()] = api.InsufficientReason(r.KubeName())
	}
	return reasons
}()

func insufficientReason(name v1.ResourceName) string {
	if reason, ok := insufficient[name]; ok {
		return reason
	}
	return api.InsufficientReason(name) // extended resources: only on a refusal
}

// NodeSearch finds the best node for a pod and remembers why nodes were refused, so that a
// pending job can be told why it waits.
type NodeSearch struct {
	ssn *framework.Session
	// refusals counts nodes per reason in the latest search, nodes how many it looked at.
	refusals map[string]int
	nodes    int
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
	s.nodes = len(s.ssn.Snapshot().Nodes)
	var best *api.NodeInfo
	var bestScore float64
	for _, node := range s.ssn.Snapshot().Nodes {
		if s.refuse(pod, node, capacity, true) {
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
		if node := s.ssn.Snapshot().Node(name); node != nil && !s.refuse(pod, node, capacity, false) {
			return node
		}
	}
	return nil
}

// refuse reports whether the node cannot take the pod now: the Kubernetes filters and the
// plugins' predicates first (they do not change within a cycle), then resources. When count
// is set, each reason is counted, in kube-scheduler's words; as there, a node short of
// several resources counts once for each.
func (s *NodeSearch) refuse(pod *api.PodInfo, node *api.NodeInfo, capacity Capacity, count bool) bool {
	if err := s.ssn.Predicate(pod, node); err != nil {
		if count {
			s.refusals[err.Error()]++
		}
		return true
	}
	refused := false
	for name := range pod.Request.Shortages(capacity.free(node)) {
		refused = true
		if !count {
			break
		}
		s.refusals[insufficientReason(name)]++
	}
	return refused
}

// Explain says why no node took the pod in the latest search, the way kube-scheduler's
// FitError does: "0/12 nodes are available: 4 node(s) had untolerated taint {dedicated:
// inference}, 8 Insufficient nvidia.com/gpu." Counts and reasons are sorted as text, as
// kube-scheduler sorts them, so the message is the same every cycle.
func (s *NodeSearch) Explain() string {
	if s.nodes == 0 {
		return "0/0 nodes are available: no nodes."
	}
	reasons := make([]string, 0, len(s.refusals))
	for r, n := range s.refusals {
		reasons = append(reasons, fmt.Sprintf("%d %s", n, r))
	}
	sort.Strings(reasons)
	return fmt.Sprintf("0/%d nodes are available: %s.", s.nodes, strings.Join(reasons, ", "))
}
