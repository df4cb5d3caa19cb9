package victims

import "github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"

// nodeOptions keeps, across the searches of one action, each node's option (what it would
// cost in victims to make room there) for pods of one class, and the nodes with a feasible
// option in a heap, best first. What a node offers depends only on the pod's class (its
// request and placement, and its job's queue, priority and preemptibility, which are all
// the rules and plugins may look at when they judge a victim), on the node's version and on
// the plan under construction. So the pods of a gang, and the jobs of one shape that wait
// in a row, reuse every node's option until something changes that node: hundreds of
// single-GPU reclaimers cost one pass over the nodes plus the nodes each plan changes, not
// one pass each.
type nodeOptions struct {
	class   optionClass
	set     bool
	entries []optionEntry
	// heap holds the nodes with a feasible, current option, ordered by better; pos is each
	// node's index in it, -1 when absent.
	heap []int
	pos  []int
}

// optionClass is what makes two pods' options on a node the same.
type optionClass struct {
	queue       string
	priority    int32
	preemptible bool
	request     api.Resources
	placement   string
}

func classOf(preemptor *api.JobInfo, pod *api.PodInfo) optionClass {
	return optionClass{queue: preemptor.Queue, priority: preemptor.Priority, preemptible: preemptor.Preemptible,
		request: pod.Request, placement: pod.Placement.Key()}
}

func (c optionClass) equal(o optionClass) bool {
	return c.queue == o.queue && c.priority == o.priority && c.preemptible == o.preemptible &&
		c.request.Equal(o.request) && c.placement == o.placement
}

// optionEntry is a node's option, valid while the node keeps the version it was computed
// at and the current plan has not touched the node.
type optionEntry struct {
	option
	valid   bool
	version uint64
	// refused are the units the walk met whose eviction was refused (a min-runtime
	// protection, say). A later preemptor reusing the option asks about them again, so that
	// it is told of the protections in its way exactly as if it had walked the node itself.
	refused []*unit
}

// reset starts over for a new class.
func (o *nodeOptions) reset(class optionClass, nodes int) {
	if o.entries == nil {
		o.entries, o.pos = make([]optionEntry, nodes), make([]int, nodes)
	}
	for i := range o.entries {
		o.entries[i].valid, o.entries[i].refused = false, o.entries[i].refused[:0]
		o.pos[i] = -1
	}
	o.class, o.set, o.heap = class, true, o.heap[:0]
}

// invalidate marks a node's option as stale: the plan changed what the node has free.
func (o *nodeOptions) invalidate(node int) {
	if o.entries != nil {
		o.entries[node].valid = false
	}
}

// update puts a node's current option into the heap, or takes it out if infeasible.
func (o *nodeOptions) update(node int) {
	feasible := o.entries[node].feasible
	switch k := o.pos[node]; {
	case k < 0 && feasible:
		o.heap = append(o.heap, node)
		o.pos[node] = len(o.heap) - 1
		o.up(len(o.heap) - 1)
	case k >= 0 && feasible:
		if !o.up(k) {
			o.down(k)
		}
	case k >= 0:
		o.remove(node)
	}
}

// best returns the node with the best feasible option, or -1.
func (o *nodeOptions) best() int {
	if len(o.heap) == 0 {
		return -1
	}
	return o.heap[0]
}

// remove takes a node out of the heap.
func (o *nodeOptions) remove(node int) {
	k := o.pos[node]
	if k < 0 {
		return
	}
	last := len(o.heap) - 1
	o.swap(k, last)
	o.heap = o.heap[:last]
	o.pos[node] = -1
	if k < last && !o.up(k) {
		o.down(k)
	}
}

func (o *nodeOptions) less(a, b int) bool {
	return better(o.entries[o.heap[a]].option, o.entries[o.heap[b]].option)
}

func (o *nodeOptions) swap(a, b int) {
	o.heap[a], o.heap[b] = o.heap[b], o.heap[a]
	o.pos[o.heap[a]], o.pos[o.heap[b]] = a, b
}

// up moves the element at k towards the root while it is better than its parent; it
// reports whether it moved.
func (o *nodeOptions) up(k int) bool {
	moved := false
	for k > 0 {
		parent := (k - 1) / 2
		if !o.less(k, parent) {
			break
		}
		o.swap(k, parent)
		k, moved = parent, true
	}
	return moved
}

func (o *nodeOptions) down(k int) {
	for {
		child := 2*k + 1
		if child >= len(o.heap) {
			return
		}
		if right := child + 1; right < len(o.heap) && o.less(right, child) {
			child = right
		}
		if !o.less(child, k) {
			return
		}
		o.swap(k, child)
		k = child
	}
}
