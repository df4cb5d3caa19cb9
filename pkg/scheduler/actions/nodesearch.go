package actions

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/placement"
)

// Capacity selects which resources of a node the node search may give a pod.
type Capacity int

const (
	// IdleNow uses only idle resources that no promise counts on: the pod can be bound at once.
	IdleNow Capacity = iota
	// IdleOrReleasing also uses resources that terminating pods are releasing: the pod is
	// pipelined onto them for the cycle, so that nothing later in it takes them, and placed
	// anew (bound once they are free) in a later cycle.
	IdleOrReleasing
)

// Free is what the node has free in this capacity.
func (c Capacity) Free(node *model.NodeInfo) model.Resources {
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
// version, so a search keeps every node's answer for the classes it served lately, with the
// fitting nodes in a heap, and asks again only about the nodes the snapshot says moved
// since: a thousand jobs alike cost one pass over the nodes plus the node each pod
// changes, and so do jobs of a few classes taking turns (each gang is tried in idle, then
// in releasing resources; the queues' turns interleave sizes).
type NodeSearch struct {
	ssn *framework.Session
	// classes are the answers kept, most recently used first; at most maxSearchClasses.
	classes []*classAnswers
	// latest is the class of the latest failed search, whose refusals Explain gives.
	latest *classAnswers
	// scratch collects a node's reasons before they are kept.
	scratch []string
}

// maxSearchClasses bounds the answers a search keeps: each class holds an answer per node.
const maxSearchClasses = 16

// classAnswers are the nodes' answers for one class.
type classAnswers struct {
	class   searchClass
	answers []nodeAnswer
	fitting *NodeHeap
	// mark is where the class last read the snapshot's moved nodes; primed is false until
	// every node has answered for the class.
	mark   int
	primed bool
	// refusals counts nodes per reason, as of the latest failed search (counted is false
	// once an answer changed since, or when they are a domain's); within is how many nodes
	// that search looked at.
	refusals map[string]int
	counted  bool
	within   int
}

// searchClass is what makes two pods' answers on a node the same.
type searchClass struct {
	capacity  Capacity
	request   model.Resources
	share     model.GPUShare // zero for a pod asking no share
	placement string
}

func (c searchClass) equal(o searchClass) bool {
	return c.capacity == o.capacity && c.request.Equal(o.request) && c.share == o.share && c.placement == o.placement
}

// classOf is the pod's search class for a capacity.
func classOf(pod *model.PodInfo, capacity Capacity) searchClass {
	c := searchClass{capacity: capacity, request: pod.Request, placement: pod.Placement.Key()}
	if pod.IsShare() {
		c.share = *pod.Share
	}
	return c
}

// nodeAnswer is a node's answer for the class, valid while the node keeps its version.
type nodeAnswer struct {
	valid bool
	// refused says the node refuses the pod, because of reason and then of more (most nodes
	// have one reason: kept inline, a thousand nodes' answers cost no allocation).
	refused bool
	version uint64
	score   float64
	reason  string
	more    []string
}

// set keeps reasons as the answer's.
func (a *nodeAnswer) set(reasons []string) {
	a.refused, a.reason, a.more = len(reasons) > 0, "", a.more[:0]
	if a.refused {
		a.reason, a.more = reasons[0], append(a.more, reasons[1:]...)
	}
}

// NewNodeSearch starts a search on the session's nodes.
func NewNodeSearch(ssn *framework.Session) *NodeSearch {
	return &NodeSearch{ssn: ssn}
}

// answersFor returns the kept answers for the class, making it the most recently used;
// a class not kept takes the place of the least recently used one beyond the bound.
func (s *NodeSearch) answersFor(class searchClass) *classAnswers {
	for i, c := range s.classes {
		if c.class.equal(class) {
			copy(s.classes[1:i+1], s.classes[:i])
			s.classes[0] = c
			return c
		}
	}
	var c *classAnswers
	if len(s.classes) == maxSearchClasses {
		c = s.classes[len(s.classes)-1]
		for i := range c.answers {
			c.answers[i] = nodeAnswer{more: c.answers[i].more[:0]}
		}
		c.fitting.Reset()
		c.counted, c.primed = false, false
		s.classes = s.classes[:len(s.classes)-1]
	} else {
		n := len(s.ssn.Snapshot().Nodes)
		c = &classAnswers{answers: make([]nodeAnswer, n), refusals: map[string]int{}}
		c.fitting = NewNodeHeap(n, func(a, b int) bool {
			if c.answers[a].score != c.answers[b].score {
				return c.answers[a].score > c.answers[b].score
			}
			return a < b // ties go to the first node by name
		})
	}
	c.class = class
	s.classes = append(s.classes, nil)
	copy(s.classes[1:], s.classes)
	s.classes[0] = c
	return c
}

// BestNode returns the schedulable node with the highest score among those where the pod
// fits in the given capacity and every predicate passes; ties go to the first node by name.
// It returns nil if none fits.
func (s *NodeSearch) BestNode(pod *model.PodInfo, capacity Capacity) *model.NodeInfo {
	c := s.refresh(pod, capacity)
	if best := c.fitting.Best(); best >= 0 {
		return s.ssn.Snapshot().Nodes[best]
	}
	s.countRefusals(c)
	return nil
}

// BestNodeIn is BestNode among the nodes listed (positions in the snapshot's nodes, a
// topology domain's), those of the lowest rank first (rank may be nil: all alike). Explain
// then counts the refusals of the listed nodes only.
func (s *NodeSearch) BestNodeIn(pod *model.PodInfo, capacity Capacity, nodes []int, rank func(node int) int) *model.NodeInfo {
	c := s.refresh(pod, capacity)
	best, bestRank := -1, 0
	for _, i := range nodes {
		a := &c.answers[i]
		if a.refused {
			continue
		}
		r := 0
		if rank != nil {
			r = rank(i)
		}
		if best < 0 || r < bestRank || (r == bestRank && a.score > c.answers[best].score) {
			best, bestRank = i, r
		}
	}
	if best >= 0 {
		return s.ssn.Snapshot().Nodes[best]
	}
	c.counted = false // the counts below are the listed nodes', not every node's
	clear(c.refusals)
	for _, i := range nodes {
		c.count(i)
	}
	c.within = len(nodes)
	s.latest = c
	return nil
}

// refresh brings the class's answers up to date for pod: only nodes that moved since the
// class last looked can answer otherwise.
func (s *NodeSearch) refresh(pod *model.PodInfo, capacity Capacity) *classAnswers {
	nodes := s.ssn.Snapshot().Nodes
	c := s.answersFor(classOf(pod, capacity))
	moved, mark := s.ssn.Snapshot().NodesMovedSince(c.mark)
	if !c.primed || len(moved) >= len(nodes) {
		moved = nil
		for i := range nodes {
			s.answer(c, pod, capacity, i)
		}
	}
	for _, i := range moved {
		s.answer(c, pod, capacity, i)
	}
	c.mark, c.primed = mark, true
	return c
}

// countRefusals counts every node's refusals for Explain, unless they are counted already.
func (s *NodeSearch) countRefusals(c *classAnswers) {
	if !c.counted {
		clear(c.refusals)
		for i := range c.answers {
			c.count(i)
		}
		c.counted = true
	}
	c.within = len(c.answers)
	s.latest = c
}

// count adds node i's reasons to the refusals.
func (c *classAnswers) count(i int) {
	a := &c.answers[i]
	if a.refused {
		c.refusals[a.reason]++
	}
	for _, r := range a.more {
		c.refusals[r]++
	}
}

// answer brings node i's answer for the class up to date.
func (s *NodeSearch) answer(c *classAnswers, pod *model.PodInfo, capacity Capacity, i int) {
	node := s.ssn.Snapshot().Nodes[i]
	a := &c.answers[i]
	if a.valid && a.version == node.Version() {
		return
	}
	s.scratch = s.reasons(pod, node, capacity, s.scratch[:0])
	a.valid, a.version = true, node.Version()
	a.set(s.scratch)
	if !a.refused {
		a.score = s.ssn.NodeScore(pod, node)
	}
	c.fitting.Update(i, !a.refused)
	c.counted = false
}

// reasons appends to buf why the node cannot take the pod now, in kube-scheduler's words:
// the Kubernetes filters and the plugins' predicates first, then resources — as there, a
// node short of several resources gives a reason for each. Nothing is appended, and
// nothing allocated, for a node that fits.
func (s *NodeSearch) reasons(pod *model.PodInfo, node *model.NodeInfo, capacity Capacity, buf []string) []string {
	if st := s.ssn.Predicate(pod, node); !st.IsSuccess() {
		return append(buf, st.Message())
	}
	free, request := capacity.Free(node), pod.Request
	if pod.IsShare() {
		request = request.With(model.GPU, 0) // its GPUs are shares of devices
		if reason := placement.ShareRefusal(pod, node, free, capacity == IdleOrReleasing); reason != "" {
			buf = append(buf, reason)
		}
	}
	for name := range request.Shortages(free) {
		buf = append(buf, placement.InsufficientReason(name))
	}
	return buf
}

// Explain says why no node took the pod in the latest search, the way kube-scheduler's
// FitError does: "0/12 nodes are available: 4 node(s) had untolerated taint {dedicated:
// inference}, 8 Insufficient nvidia.com/gpu." Counts and reasons are sorted as text, as
// kube-scheduler sorts them, so the message is the same every cycle.
func (s *NodeSearch) Explain() string {
	if s.latest == nil || s.latest.within == 0 {
		return "0/0 nodes are available: no nodes."
	}
	reasons := make([]string, 0, len(s.latest.refusals))
	for r, count := range s.latest.refusals {
		reasons = append(reasons, fmt.Sprintf("%d %s", count, r))
	}
	sort.Strings(reasons)
	return fmt.Sprintf("0/%d nodes are available: %s.", s.latest.within, strings.Join(reasons, ", "))
}
