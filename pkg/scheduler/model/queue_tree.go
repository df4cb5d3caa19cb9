package model

import (
	"fmt"
	"sort"
	"strings"
)

// QueueTree indexes the queues of a snapshot and knows their ancestry. Building it never
// loops: a parent cycle or a missing parent marks the queues involved, and their descendants,
// invalid with a Problem that says why, and the tree reports them.
type QueueTree struct {
	byName map[string]*QueueInfo
	// names holds every queue name, sorted, for deterministic iteration.
	names []string
	// unlimited are the quotas of -1 beside quotas above zero (UnlimitedQuotas).
	unlimited []UnlimitedQuota
}

// QueueProblem is a queue that cannot be scheduled and why.
type QueueProblem struct {
	Queue   string
	Message string
}

// NewQueueTree links queues to their children and validates the parent relation. The
// QueueInfo values are taken over by the tree.
func NewQueueTree(queues []*QueueInfo) *QueueTree {
	t := &QueueTree{byName: make(map[string]*QueueInfo, len(queues))}
	for _, q := range queues {
		q.Children, q.Problem, q.Depth, q.ancestry, q.childPositive = nil, "", 0, nil, [NumQuotaResources]bool{}
		t.byName[q.Name] = q
		t.names = append(t.names, q.Name)
	}
	sort.Strings(t.names)
	for _, name := range t.names {
		q := t.byName[name]
		if parent, ok := t.byName[q.Parent]; ok && q.Parent != "" {
			parent.Children = append(parent.Children, q.Name) // sorted: names are visited in order
		}
	}
	t.validate()
	t.keepAncestries()
	t.findUnlimitedQuotas()
	return t
}

// keepAncestries lays every valid queue's ancestry out once, in one array: the scheduler asks
// for ancestries for every resolution and share it computes, and a min-runtime resolution
// keeps the part it walked (MinRuntime.Path), so a shared ancestry costs nothing to ask for
// or to keep.
func (t *QueueTree) keepAncestries() {
	total := 0
	for _, q := range t.byName {
		if q.IsValid() {
			total += q.Depth + 1
		}
	}
	all := make([]string, total)
	for _, name := range t.names {
		q := t.byName[name]
		if !q.IsValid() {
			continue
		}
		// Capacity ends with the queue, so that an append by a reader cannot overwrite the
		// next queue's ancestry.
		path := all[: q.Depth+1 : q.Depth+1]
		all = all[q.Depth+1:]
		for i, p := q.Depth, q; i >= 0; i-- {
			path[i] = p.Name
			p = t.byName[p.Parent]
		}
		q.ancestry = path
	}
}

// validation states of a queue while the tree is checked.
const (
	unvisited = iota
	onPath
	done
)

// validate walks each queue's ancestry once. A walk stops at a queue already decided, at a
// top-level queue, at a missing parent, or at a queue already on the current path (a cycle),
// then decides every queue on the path: O(number of queues) in all, whatever the shape.
func (t *QueueTree) validate() {
	state := make(map[string]int, len(t.names))
	for _, start := range t.names {
		var path []*QueueInfo
		q := t.byName[start]
		for q != nil && state[q.Name] == unvisited {
			state[q.Name] = onPath
			path = append(path, q)
			if q.Parent == "" {
				q = nil
				break
			}
			parent, ok := t.byName[q.Parent]
			if !ok {
				q.Problem = fmt.Sprintf("parent queue %q does not exist", q.Parent)
				q = nil
				break
			}
			q = parent
		}
		if q != nil && state[q.Name] == onPath {
			t.markCycle(path, q)
		}
		// Decide the path from the top down so that each queue inherits its parent's verdict.
		for i := len(path) - 1; i >= 0; i-- {
			p := path[i]
			state[p.Name] = done
			if p.Problem != "" || p.Parent == "" {
				continue
			}
			parent := t.byName[p.Parent]
			if !parent.IsValid() {
				p.Problem = fmt.Sprintf("ancestor queue %q is invalid", parent.Name)
				continue
			}
			p.Depth = parent.Depth + 1
		}
	}
}

// markCycle marks the queues of the cycle that starts at first on path.
func (t *QueueTree) markCycle(path []*QueueInfo, first *QueueInfo) {
	var members []string
	inCycle := false
	for _, p := range path {
		if p == first {
			inCycle = true
		}
		if inCycle {
			members = append(members, p.Name)
		}
	}
	message := "parent cycle: " + strings.Join(append(members, first.Name), " -> ")
	for _, name := range members {
		t.byName[name].Problem = message
	}
}

// Get returns a queue by name, or nil.
func (t *QueueTree) Get(name string) *QueueInfo {
	return t.byName[name]
}

// Names returns every queue name in sorted order.
func (t *QueueTree) Names() []string {
	return t.names
}

// Problems lists the invalid queues in name order.
func (t *QueueTree) Problems() []QueueProblem {
	var problems []QueueProblem
	for _, name := range t.names {
		if q := t.byName[name]; !q.IsValid() {
			problems = append(problems, QueueProblem{Queue: name, Message: q.Problem})
		}
	}
	return problems
}

// Ancestry returns the names from the top-level queue down to name (inclusive). It returns
// nil for an unknown or invalid queue, whose ancestry may not end. The slice is the tree's,
// shared by every caller: never modify it.
func (t *QueueTree) Ancestry(name string) []string {
	if q := t.byName[name]; q != nil {
		return q.ancestry
	}
	return nil
}

// HasSibling reports whether another valid queue shares the queue's parent (for a top-level
// queue, whether there is another top-level queue): only then can a job come from beside it.
func (t *QueueTree) HasSibling(name string) bool {
	q := t.byName[name]
	if q == nil {
		return false
	}
	if parent := t.byName[q.Parent]; q.Parent != "" && parent != nil {
		return len(parent.Children) > 1
	}
	for _, other := range t.names {
		if o := t.byName[other]; other != name && o.Parent == "" && o.IsValid() {
			return true
		}
	}
	return false
}
