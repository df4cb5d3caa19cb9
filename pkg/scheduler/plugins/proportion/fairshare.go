package proportion

import (
	"cmp"
	"math"
	"slices"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// Vector holds one float64 per resource, indexed like model.Resources (CPU millicores, memory
// bytes, GPUs). Fair shares are fractional (two queues splitting 3 GPUs get 1.5 each), so they
// cannot be kept in the integer model.Resources without losing what reclaim decisions compare.
type Vector [model.NumQuotaResources]float64

// relativeEpsilon is "nothing left" or "already full", relative to the amount divided, so
// that float rounding never starts another water-filling round.
const relativeEpsilon = 1e-9

// shareNode is one valid queue, or the implicit root at index 0, while shares are computed.
type shareNode struct {
	info *model.QueueInfo // nil for the implicit root
	// first and end delimit the node's children in the node slice: breadth-first order keeps
	// siblings contiguous, sorted by descending priority and then by name.
	first, end int
	request    Vector
	share      Vector
	// deserved is the part of share the queue gets for its quota, before any over-quota
	// capacity: its quota (-1: all its parent has), capped by request and limit. It is
	// never reduced to make room for a sibling: a quota is owed.
	deserved Vector
}

// FairShares divides capacity among the valid queues of tree, per resource independently,
// the way KAI-Scheduler does: deserved quotas first, in full, then what is left by priority
// level and over-quota weight, never beyond a queue's request or limit, top-down through the
// tree. When siblings' deserved quotas add up to more than their parent has (over-subscribed
// quotas), each still deserves its own, none is scaled down for another, and nothing is left
// over quota: the shares add up to more than the parent has, and the reclaim rules decide
// who holds what (docs/scheduling.md, "What a quota guarantees").
// Reclaim and preemption compare a queue's allocation against this share, so it is computed
// once per cycle from the whole tree rather than queue by queue.
//
// request holds what each LEAF queue's jobs request (keys may be any queue name; entries for
// unknown, invalid or non-leaf queues are ignored). It returns the fair share of every valid
// queue (inner queues included); invalid queues are absent. Capacity nobody requests stays
// unassigned. Negative or non-finite requests and capacities count as zero.
func FairShares(tree *model.QueueTree, request map[string]Vector, capacity Vector) map[string]Vector {
	nodes := divideTree(tree, request, capacity)
	fair := make(map[string]Vector, len(nodes))
	for i := 1; i < len(nodes); i++ {
		fair[nodes[i].info.Name] = nodes[i].share
	}
	return fair
}

// Shares is FairShares that also returns every valid queue's deserved quota: the part of its
// fair share that its quota earns, min(quota, request, limit), never more than the fair
// share. Deciding "within quota" on this rather than on the configured quota keeps the quota
// rule and the fair-share rule of reclaim from pointing opposite ways: a queue within its
// deserved quota is within its fair share too.
func Shares(tree *model.QueueTree, request map[string]Vector, capacity Vector) (fair, deserved map[string]Vector) {
	nodes := divideTree(tree, request, capacity)
	fair = make(map[string]Vector, len(nodes))
	deserved = make(map[string]Vector, len(nodes))
	for i := 1; i < len(nodes); i++ {
		fair[nodes[i].info.Name] = nodes[i].share
		deserved[nodes[i].info.Name] = nodes[i].deserved
	}
	return fair, deserved
}

// divideTree lays out the valid queues (index 0 is the implicit root) and divides capacity
// among them; nil for a nil tree.
func divideTree(tree *model.QueueTree, request map[string]Vector, capacity Vector) []shareNode {
	if tree == nil {
		return nil
	}
	nodes := buildNodes(tree)
	sumRequests(nodes, request)
	for _, r := range model.QuotaResources {
		nodes[0].share[r] = clean(capacity[r])
		for i := range nodes { // breadth-first: every parent is divided before its children
			divide(nodes, i, r)
		}
	}
	return nodes
}

// buildNodes lays the valid queues out breadth-first below an implicit root, so that the
// division needs no recursion, no name lookups and no allocation per resource.
func buildNodes(tree *model.QueueTree) []shareNode {
	names := tree.Names()
	nodes := make([]shareNode, 1, len(names)+1)
	for _, name := range names { // sorted, so the top level is in name order
		if q := tree.Get(name); q.IsValid() && q.Parent == "" {
			nodes = append(nodes, shareNode{info: q})
		}
	}
	nodes[0].first, nodes[0].end = 1, len(nodes)
	sortByPriority(nodes[1:])
	for i := 1; i < len(nodes); i++ {
		first := len(nodes)
		for _, name := range nodes[i].info.Children { // sorted by name
			if q := tree.Get(name); q != nil && q.IsValid() {
				nodes = append(nodes, shareNode{info: q})
			}
		}
		nodes[i].first, nodes[i].end = first, len(nodes)
		sortByPriority(nodes[first:])
	}
	return nodes
}

// sortByPriority orders siblings by descending priority; being stable, it keeps name order
// within a priority level, which makes the results independent of map iteration.
func sortByPriority(siblings []shareNode) {
	slices.SortStableFunc(siblings, func(a, b shareNode) int {
		return cmp.Compare(b.info.Priority, a.info.Priority)
	})
}

// sumRequests gives each leaf its own request and each inner queue the sum of its children's.
// Children come after their parent, so walking backwards sees every child before its parent.
func sumRequests(nodes []shareNode, request map[string]Vector) {
	for i := len(nodes) - 1; i >= 0; i-- {
		n := &nodes[i]
		if n.first == n.end {
			if n.info != nil && n.info.IsLeaf() {
				for r, v := range request[n.info.Name] {
					n.request[r] = clean(v)
				}
			}
			continue
		}
		for c := n.first; c < n.end; c++ {
			for r := range n.request {
				n.request[r] += nodes[c].request[r]
			}
		}
	}
}

// clean zeroes negative, NaN and infinite amounts: one bad input must not poison a tree.
func clean(v float64) float64 {
	if v > 0 && !math.IsInf(v, 1) {
		return v
	}
	return 0
}

// ceiling is the most a queue can use of resource r: its request, capped by its limit.
// Any negative limit (model.Unlimited) means no cap; a limit of 0 caps at zero, as in KAI.
func (n *shareNode) ceiling(r model.ResourceName) float64 {
	if limit := n.info.Resources[r].Limit; limit >= 0 {
		return min(n.request[r], limit)
	}
	return n.request[r]
}

// divide hands node p's share of resource r to its children: each its deserved quota in
// full, then what is left, if anything, level by level.
func divide(nodes []shareNode, p int, r model.ResourceName) {
	amount := nodes[p].share[r]
	children := nodes[nodes[p].first:nodes[p].end]
	deserved := 0.0
	for i := range children {
		c := &children[i]
		c.deserved[r] = c.deservedOf(r, amount)
		c.share[r] = c.deserved[r]
		deserved += c.deserved[r]
	}
	left, eps := amount-deserved, relativeEpsilon*amount
	for start := 0; start < len(children) && left > eps; {
		end := start + 1
		for end < len(children) && children[end].info.Priority == children[start].info.Priority {
			end++
		}
		left = fillLevel(children[start:end], r, left, eps)
		start = end
	}
}

// deservedOf is what the queue's quota of r earns under a parent that has parentAmount: the
// quota, or for an unlimited one (-1) all the parent has, capped by its request and limit.
func (n *shareNode) deservedOf(r model.ResourceName, parentAmount float64) float64 {
	quota := n.info.Resources[r].Quota
	if quota < 0 {
		quota = parentAmount
	}
	return min(quota, n.ceiling(r))
}

// fillLevel water-fills left among one priority level in proportion to over-quota weight:
// a child that reaches its ceiling keeps only what it can use, and the excess goes round
// again to the others. Each round either fills a child or spends everything, so it takes at
// most len(level)+1 rounds. It returns what the level could not take.
func fillLevel(level []shareNode, r model.ResourceName, left, eps float64) float64 {
	for left > eps {
		weight := 0.0
		for i := range level {
			if c := &level[i]; c.hungry(r, eps) {
				weight += c.info.Resources[r].OverQuotaWeight
			}
		}
		if weight == 0 {
			break
		}
		given, filled := 0.0, false
		for i := range level {
			c := &level[i]
			if !c.hungry(r, eps) {
				continue
			}
			give := left * c.info.Resources[r].OverQuotaWeight / weight
			if ceiling := c.ceiling(r); c.share[r]+give >= ceiling-eps {
				give, filled = ceiling-c.share[r], true
			}
			c.share[r] += give
			given += give
		}
		if !filled {
			return 0 // every hungry child took its whole portion
		}
		left -= given
	}
	return left
}

// hungry reports whether the queue takes over-quota capacity of r: it has a positive weight
// and is still below its ceiling.
func (n *shareNode) hungry(r model.ResourceName, eps float64) bool {
	return n.info.Resources[r].OverQuotaWeight > 0 && n.share[r] < n.ceiling(r)-eps
}
