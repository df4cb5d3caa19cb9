package minruntime

import (
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
)

// ResolveMethod chooses where reclaim resolution starts.
type ResolveMethod string

const (
	// LCA starts one level below the lowest common ancestor of the reclaimer's and the
	// victim's leaf queues, on the victim's side, so that a value set in a subtree governs
	// reclaims between its children without affecting cousins.
	LCA ResolveMethod = "lca"
	// Queue starts at the victim's leaf queue, like preemption.
	Queue ResolveMethod = "queue"
)

// Defaults are the node-pool level values, used when no queue on the path sets one.
type Defaults struct {
	Preempt, Reclaim time.Duration
}

// Resolution is a resolved min-runtime and where it came from, so that an operator told of a
// protection can find the value to change.
type Resolution struct {
	Duration time.Duration
	// Queue is the queue whose spec set the value; empty when the node-pool default applied.
	Queue string
}

// Source names where the value came from: "queue NAME" or "the default".
func (r Resolution) Source() string {
	if r.Queue == "" {
		return "the default"
	}
	return "queue " + r.Queue
}

// PreemptMinRuntime resolves the preempt min-runtime of a victim's leaf queue: the first value
// set walking up from the leaf, else the default. An unknown or invalid queue (orphan, cycle)
// gets the default; the walk uses the tree's validated ancestry, so it always ends.
func PreemptMinRuntime(tree *api.QueueTree, victimQueue string, defaults Defaults) Resolution {
	ancestry := tree.Ancestry(victimQueue)
	return firstSetFrom(tree, ancestry, len(ancestry)-1, preemptOf, defaults.Preempt)
}

// ReclaimMinRuntime resolves the reclaim min-runtime for a reclaim by a job of
// reclaimerQueue from a job of victimQueue. With LCA, the walk starts at the child of the
// lowest common ancestor that leads to the victim (top-level queues are siblings under an
// implicit root); with Queue, at the victim's leaf. Either way it walks up to the first value
// set, else the default.
func ReclaimMinRuntime(tree *api.QueueTree, method ResolveMethod, reclaimerQueue, victimQueue string, defaults Defaults) Resolution {
	victim := tree.Ancestry(victimQueue)
	start := len(victim) - 1
	if method == LCA {
		reclaimer := tree.Ancestry(reclaimerQueue)
		common := 0
		for common < len(reclaimer) && common < len(victim) && reclaimer[common] == victim[common] {
			common++
		}
		start = min(common, len(victim)-1)
	}
	return firstSetFrom(tree, victim, start, reclaimOf, defaults.Reclaim)
}

// LongestReclaimMinRuntime is the longest reclaim min-runtime a job of victimQueue has against
// any reclaimer: with LCA each level of its ancestry can be where resolution starts, with
// Queue only its leaf.
func LongestReclaimMinRuntime(tree *api.QueueTree, method ResolveMethod, victimQueue string, defaults Defaults) Resolution {
	victim := tree.Ancestry(victimQueue)
	longest := firstSetFrom(tree, victim, len(victim)-1, reclaimOf, defaults.Reclaim)
	if method == LCA {
		for start := len(victim) - 2; start >= 0; start-- {
			if r := firstSetFrom(tree, victim, start, reclaimOf, defaults.Reclaim); r.Duration > longest.Duration {
				longest = r
			}
		}
	}
	return longest
}

func preemptOf(q *api.QueueInfo) *time.Duration { return q.PreemptMinRuntime }
func reclaimOf(q *api.QueueInfo) *time.Duration { return q.ReclaimMinRuntime }

// firstSetFrom walks ancestry from index start toward the top and returns the first value
// that get finds set; def when none is (or the ancestry is empty).
func firstSetFrom(tree *api.QueueTree, ancestry []string, start int, get func(*api.QueueInfo) *time.Duration, def time.Duration) Resolution {
	for i := start; i >= 0; i-- {
		if v := get(tree.Get(ancestry[i])); v != nil {
			return Resolution{Duration: *v, Queue: ancestry[i]}
		}
	}
	return Resolution{Duration: def}
}
