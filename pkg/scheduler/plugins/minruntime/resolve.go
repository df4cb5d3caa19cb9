package minruntime

import (
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
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

// Resolution is a resolved min-runtime, the queue that set it and the walk that found it
// (model.MinRuntime.Path), so that an operator told of a protection can find the value to
// change, and kubectl kai explain can show the walk without walking again.
type Resolution = model.MinRuntime

// PreemptMinRuntime resolves the preempt min-runtime of a victim's leaf queue: the first value
// set walking up from the leaf, else the default. An unknown or invalid queue (orphan, cycle)
// gets the default; the walk uses the tree's validated ancestry, so it always ends.
func PreemptMinRuntime(tree *model.QueueTree, victimQueue string, defaults Defaults) Resolution {
	ancestry := tree.Ancestry(victimQueue)
	return firstSetFrom(tree, ancestry, len(ancestry)-1, preemptOf, defaults.Preempt)
}

// ReclaimMinRuntime resolves the reclaim min-runtime for a reclaim by a job of
// reclaimerQueue from a job of victimQueue. With LCA, the walk starts at the child of the
// lowest common ancestor that leads to the victim (top-level queues are siblings under an
// implicit root); with Queue, at the victim's leaf. Either way it walks up to the first value
// set, else the default.
func ReclaimMinRuntime(tree *model.QueueTree, method ResolveMethod, reclaimerQueue, victimQueue string, defaults Defaults) Resolution {
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

// ReclaimLevels lists the reclaim min-runtimes a job of victimQueue has, by where the
// reclaimer sits, outermost first: each level holds against reclaimers from outside its
// queue that no earlier level covers. With LCA, resolution starts at the child of the
// lowest common ancestor, so each queue of the victim's ancestry can be a level; a queue
// without siblings is none (no reclaimer can sit beside it), and adjacent levels that
// resolve alike are one, named by the deeper queue. With Queue there is one level, the
// leaf's. No level at all means no other queue can reclaim the job.
func ReclaimLevels(tree *model.QueueTree, method ResolveMethod, victimQueue string, defaults Defaults) []model.ReclaimLevel {
	victim := tree.Ancestry(victimQueue)
	if len(victim) == 0 { // an unknown or invalid queue: the default alone
		return []model.ReclaimLevel{{Outside: victimQueue, MinRuntime: Resolution{Duration: defaults.Reclaim}}}
	}
	if method == Queue {
		leaf := len(victim) - 1
		return []model.ReclaimLevel{{Outside: victimQueue, MinRuntime: firstSetFrom(tree, victim, leaf, reclaimOf, defaults.Reclaim)}}
	}
	var levels []model.ReclaimLevel
	for start := range victim {
		if !tree.HasSibling(victim[start]) {
			continue
		}
		r := firstSetFrom(tree, victim, start, reclaimOf, defaults.Reclaim)
		if n := len(levels); n > 0 && levels[n-1].Same(r) {
			// One level deeper alike: one entry, the deeper one (its walk asks both), says both.
			levels[n-1] = model.ReclaimLevel{Outside: victim[start], MinRuntime: r}
			continue
		}
		levels = append(levels, model.ReclaimLevel{Outside: victim[start], MinRuntime: r})
	}
	return levels
}

// Longest is the longest of the levels' min-runtimes (the innermost of equals).
func Longest(levels []model.ReclaimLevel) Resolution {
	var longest Resolution
	for i := len(levels) - 1; i >= 0; i-- {
		if r := levels[i].MinRuntime; i == len(levels)-1 || r.Duration > longest.Duration {
			longest = r
		}
	}
	return longest
}

func preemptOf(q *model.QueueInfo) *time.Duration { return q.PreemptMinRuntime }
func reclaimOf(q *model.QueueInfo) *time.Duration { return q.ReclaimMinRuntime }

// firstSetFrom walks ancestry from index start toward the top and returns the first value
// that get finds set; def when none is (or the ancestry is empty). The path it walked is a
// part of ancestry, which costs nothing to keep: resolutions are asked for every victim.
func firstSetFrom(tree *model.QueueTree, ancestry []string, start int, get func(*model.QueueInfo) *time.Duration, def time.Duration) Resolution {
	for i := start; i >= 0; i-- {
		if v := get(tree.Get(ancestry[i])); v != nil {
			return Resolution{Duration: *v, SetBy: ancestry[i], Path: ancestry[i : start+1]}
		}
	}
	return Resolution{Duration: def, Path: ancestry[:start+1]}
}

// Shorten applies a job's own min-runtime (its annotation, key names it) to what the queues
// and the default resolved: a shorter one replaces it, remembering what it shortened; one at
// or above it is declined and the resolution stands. A job may only shorten because its
// owner writes its annotations: were a longer value honoured, the owner could buy protection
// the operator did not give. nil (no annotation) returns r as it is, so that jobs without one
// are decided exactly as before and cost nothing.
func Shorten(r Resolution, own *time.Duration, key string) Resolution {
	if own == nil {
		return r
	}
	if *own >= r.Duration {
		r.Declined = own
		return r
	}
	return Resolution{Duration: *own, SetBy: key, Path: r.Path,
		Shortened: model.Shortened{Duration: r.Duration, SetBy: r.SetBy, EscalatedFrom: r.EscalatedFrom}}
}

// ShortenPreempt is Shorten with the job's preempt annotation.
func ShortenPreempt(r Resolution, job *model.JobInfo) Resolution {
	return Shorten(r, job.OwnPreemptMinRuntime, scheduling.PreemptMinRuntimeAnnotation)
}

// ShortenReclaim is Shorten with the job's reclaim annotation.
func ShortenReclaim(r Resolution, job *model.JobInfo) Resolution {
	return Shorten(r, job.OwnReclaimMinRuntime, scheduling.ReclaimMinRuntimeAnnotation)
}

// ShortenLevels is ShortenReclaim for each of a job's reclaim levels: levels itself (shared
// between the queue's jobs) when the job has no annotation, else a copy. Levels that shorten
// to the same value stay apart: each still holds against its own reclaimers.
func ShortenLevels(levels []model.ReclaimLevel, job *model.JobInfo) []model.ReclaimLevel {
	if job.OwnReclaimMinRuntime == nil {
		return levels
	}
	own := make([]model.ReclaimLevel, len(levels))
	for i, l := range levels {
		own[i] = model.ReclaimLevel{Outside: l.Outside, MinRuntime: ShortenReclaim(l.MinRuntime, job)}
	}
	return own
}
