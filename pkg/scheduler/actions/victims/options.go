package victims

import (
	"slices"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

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
	// heap holds the nodes with a feasible, current option, ordered by better.
	heap *actions.NodeHeap

	// What a refresh must visit, so that it need not check every node for every pod: the
	// nodes that moved in the snapshot since mark, the nodes the plan made stale, and the
	// nodes whose option has refused units (whose preemptor is asked about them). primed is
	// false until a refresh has visited every node for the class.
	primed      bool
	mark        int
	stale       []int
	withRefused []int
	listed      []bool // per node: in withRefused
	// visit collects the nodes of one refresh; seenAt marks them with the refresh's number.
	visit  []int
	seenAt []uint32
	visits uint32
	// within are the nodes of the class's region (nil: every node), and member marks them.
	within []int
	member []bool
}

// optionClass is what makes two pods' options on a node the same: the rules and plugins may
// judge a victim by the preemptor's queue, priority and preemptibility only (see
// framework.IsPreemptibleFn). The preemptor's own job is never its victim; both actions'
// rules already refuse a job of the same queue and priority, so no option of the class
// counts it.
type optionClass struct {
	queue       string
	priority    int32
	preemptible bool
	request     model.Resources
	placement   string
	// region names the topology domain the search is confined to ("" for none).
	region string
}

func classOf(preemptor *model.JobInfo, pod *model.PodInfo, region string) optionClass {
	return optionClass{queue: preemptor.Queue, priority: preemptor.Priority, preemptible: preemptor.Preemptible,
		request: pod.Request, placement: pod.Placement.Key(), region: region}
}

func (c optionClass) equal(o optionClass) bool {
	return c.queue == o.queue && c.priority == o.priority && c.preemptible == o.preemptible &&
		c.request.Equal(o.request) && c.placement == o.placement && c.region == o.region
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
	// took are the units the option counts, kept for the estimates of topology domains only.
	took []*unit
}

// reset starts over for a new class, confined to the nodes within (nil: every node).
func (o *nodeOptions) reset(class optionClass, nodes int, within []int) {
	if o.entries == nil {
		o.entries = make([]optionEntry, nodes)
		o.heap = actions.NewNodeHeap(nodes, func(a, b int) bool { return better(o.entries[a].option, o.entries[b].option) })
	}
	for i := range o.entries {
		o.entries[i].valid, o.entries[i].refused = false, o.entries[i].refused[:0]
	}
	o.class, o.set, o.within = class, true, within
	if within != nil {
		if len(o.member) != nodes {
			o.member = make([]bool, nodes)
		}
		clear(o.member)
		for _, i := range within {
			o.member[i] = true
		}
	}
	o.heap.Reset()
	o.primed, o.stale, o.withRefused = false, o.stale[:0], o.withRefused[:0]
	if len(o.listed) != nodes {
		o.listed = make([]bool, nodes)
	}
	clear(o.listed)
}

// invalidate marks a node's option as stale: the plan changed what the node has free.
func (o *nodeOptions) invalidate(node int) {
	if o.entries != nil {
		o.entries[node].valid = false
		o.stale = append(o.stale, node)
	}
}

// visitEveryNode makes every refresh visit every node, as a walk without the snapshot's
// list of moved nodes would: tests compare the two.
var visitEveryNode = false

// toVisit returns, in node order, the nodes a refresh must visit: those in moved, the stale
// ones and those with refused units; every node before the class was primed, or when that
// is a good part of them anyway. It forgets the stale nodes and drops from withRefused the
// nodes that no longer have any.
func (o *nodeOptions) toVisit(moved []int) []int {
	n := len(o.entries)
	kept := o.withRefused[:0]
	for _, i := range o.withRefused {
		if len(o.entries[i].refused) > 0 {
			kept = append(kept, i)
		} else {
			o.listed[i] = false
		}
	}
	o.withRefused = kept
	o.visit = o.visit[:0]
	all := !o.primed || visitEveryNode
	if !all {
		if o.seenAt == nil {
			o.seenAt = make([]uint32, n)
		}
		o.visits++
		for _, list := range [][]int{moved, o.stale, o.withRefused} {
			for _, i := range list {
				if o.within != nil && !o.member[i] {
					continue // outside the region: never an option of the class
				}
				if o.seenAt[i] != o.visits {
					o.seenAt[i] = o.visits
					o.visit = append(o.visit, i)
				}
			}
		}
		all = len(o.visit) >= n/4
	}
	if all {
		o.visit = o.visit[:0]
		if o.within != nil {
			o.visit = append(o.visit, o.within...)
		} else {
			for i := range n {
				o.visit = append(o.visit, i)
			}
		}
	} else {
		slices.Sort(o.visit)
	}
	o.stale, o.primed = o.stale[:0], true
	return o.visit
}

// noteRefused keeps withRefused current after node i's option was computed anew.
func (o *nodeOptions) noteRefused(i int) {
	if len(o.entries[i].refused) > 0 && !o.listed[i] {
		o.listed[i] = true
		o.withRefused = append(o.withRefused, i)
	}
}
