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

// NodeSearch finds the best node for a pod and remembers why nodes were refused, so that a
// pending job can be told why it waits.
//
// What a node offers a pod — refused and why, or fitting with a score — depends only on the
// pod's class (its request and placement, and the capacity asked for) and on the node's
// version, so a search keeps every node's answer for the class it last served, with the
// fitting nodes in a heap, and asks again only about nodes whose version moved: a thousand
// jobs alike cost one pass over the nodes plus the node each placement changes.
type NodeSearch struct {
	ssn *framework.Session
	// refusals counts nodes per reason in the latest failed search, nodes how many it looked at.
	refusals map[string]int
	nodes    int

	class   searchClass
	set     bool
	answers []nodeAnswer
	fitting *NodeHeap
}

// searchClass is what makes two pods' answers on a node the same.
type searchClass struct {
	capacity  Capacity
	request   api.Resources
	placement string
}

func (c searchClass) equal(o searchClass) bool {
	return c.capacity == o.capacity && c.request.Equal(o.request) && c.placement == o.placement
}

// nodeAnswer is a node's answer for the class, valid while the node keeps its version.
type nodeAnswer struct {
	valid   bool
	version uint64
	score   float64
	// reasons are why the node refuses the pod; none when it fits.
	reasons []string
}

// NewNodeSearch starts a search on the session's nodes.
func NewNodeSearch(ssn *framework.Session) *NodeSearch {
	s := &NodeSearch{ssn: ssn, refusals: map[string]int{}}
	n := len(ssn.Snapshot().Nodes)
	s.answers = make([]nodeAnswer, n)
	s.fitting = NewNodeHeap(n, func(a, b int) bool {
		if s.answers[a].score != s.answers[b].score {
			return s.answers[a].score > s.answers[b].score
		}
		return a < b // ties go to the first node by name
	})
	return s
}

// BestNode returns the schedulable node with the highest score among those where the pod
// fits in the given capacity and every predicate passes; ties go to the first node by name.
// It returns nil if none fits.
func (s *NodeSearch) BestNode(pod *api.PodInfo, capacity Capacity) *api.NodeInfo {
	nodes := s.ssn.Snapshot().Nodes
	if class := (searchClass{capacity: capacity, request: pod.Request, placement: pod.Placement.Key()}); !s.set || !s.class.equal(class) {
		s.class, s.set = class, true
		for i := range s.answers {
			s.answers[i].valid = false
		}
		s.fitting.Reset()
	}
	for i, node := range nodes {
		a := &s.answers[i]
		if a.valid && a.version == node.Version() {
			continue
		}
		a.valid, a.version, a.reasons = true, node.Version(), s.reasons(pod, node, capacity, a.reasons[:0])
		if len(a.reasons) == 0 {
			a.score = s.ssn.NodeScore(pod, node)
		}
		s.fitting.Update(i, len(a.reasons) == 0)
	}
	if best := s.fitting.Best(); best >= 0 {
		return nodes[best]
	}
	clear(s.refusals)
	s.nodes = len(nodes)
	for _, a := range s.answers {
		for _, r := range a.reasons {
			s.refusals[r]++
		}
	}
	return nil
}

// PreferredNode returns the first of the preferred nodes (those promised to the pod's job)
// where the pod fits in the given capacity and may run, or nil. Trying them first keeps a
// promise where it was made, as kube-scheduler tries a pod's nominated node first.
func (s *NodeSearch) PreferredNode(pod *api.PodInfo, capacity Capacity, preferred []string) *api.NodeInfo {
	for _, name := range preferred {
		if node := s.ssn.Snapshot().Node(name); node != nil && len(s.reasons(pod, node, capacity, nil)) == 0 {
			return node
		}
	}
	return nil
}

// reasons appends to buf why the node cannot take the pod now, in kube-scheduler's words:
// the Kubernetes filters and the plugins' predicates first, then resources — as there, a
// node short of several resources gives a reason for each. Nothing is appended, and
// nothing allocated, for a node that fits.
func (s *NodeSearch) reasons(pod *api.PodInfo, node *api.NodeInfo, capacity Capacity, buf []string) []string {
	if err := s.ssn.Predicate(pod, node); err != nil {
		return append(buf, err.Error())
	}
	for name := range pod.Request.Shortages(capacity.free(node)) {
		buf = append(buf, api.InsufficientReason(name))
	}
	return buf
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
