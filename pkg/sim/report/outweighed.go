package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/plugins/minruntime"
)

// minRuntimeKind is one of the two min-runtimes, as a comparison reads it from a pool's
// resolution: the plugin argument that sets its default, the queue field that outweighs it.
type minRuntimeKind struct {
	argument, field string
	defaultOf       func(*PoolMinRuntime) time.Duration
	// resolved are the min-runtimes of a queue's jobs of this kind (reclaim: one a level).
	resolved func(QueueMinRuntime) []ResolvedMinRuntime
}

var minRuntimeKinds = []minRuntimeKind{
	{minruntime.ArgDefaultPreemptMinRuntime, "preemptMinRuntime",
		func(p *PoolMinRuntime) time.Duration { return p.DefaultPreempt },
		func(q QueueMinRuntime) []ResolvedMinRuntime { return []ResolvedMinRuntime{q.Preempt} }},
	{minruntime.ArgDefaultReclaimMinRuntime, "reclaimMinRuntime",
		func(p *PoolMinRuntime) time.Duration { return p.DefaultReclaim },
		func(q QueueMinRuntime) []ResolvedMinRuntime { return q.Reclaim }},
}

// outweighedDefaults are the notes of a comparison whose configurations set a min-runtime
// default differently, about the queues whose own values outweigh it: without them, columns
// that come out identical look like a default that did nothing, when no job ever got it.
// A queue's jobs outweigh it when a queue sets every min-runtime of that kind they get, in
// every variant; when every queue of a pool's jobs does, the note says the default reached
// none. Variants of which one runs no minruntime plugin compare no default.
func outweighedDefaults(variants []Variant) []string {
	if len(variants) < 2 {
		return nil
	}
	var pools []string
	for _, v := range variants {
		for _, p := range v.Result.Pools {
			if !slices.Contains(pools, p.Pool) {
				pools = append(pools, p.Pool)
			}
		}
	}
	slices.Sort(pools)
	var notes []string
	for _, pool := range pools {
		resolutions := make([]*PoolMinRuntime, 0, len(variants))
		for _, v := range variants {
			i := slices.IndexFunc(v.Result.Pools, func(p PoolReport) bool { return p.Pool == pool })
			if i < 0 || v.Result.Pools[i].MinRuntime == nil {
				break
			}
			resolutions = append(resolutions, v.Result.Pools[i].MinRuntime)
		}
		if len(resolutions) < len(variants) {
			continue
		}
		prefix := ""
		if pool != "" {
			prefix = "pool " + poolName(pool) + ": "
		}
		for _, kind := range minRuntimeKinds {
			notes = append(notes, outweighedKind(kind, variants, resolutions, prefix)...)
		}
	}
	return notes
}

// outweighedKind is the notes about one kind of min-runtime in one pool (see
// outweighedDefaults).
func outweighedKind(kind minRuntimeKind, variants []Variant, resolutions []*PoolMinRuntime, prefix string) []string {
	var defaults []string
	differ := false
	for i, r := range resolutions {
		defaults = append(defaults, fmt.Sprintf("%s under %s", kind.defaultOf(r), variants[i].Name))
		differ = differ || kind.defaultOf(r) != kind.defaultOf(resolutions[0])
	}
	if !differ {
		return nil
	}
	compared := fmt.Sprintf("the compared %s (%s)", kind.argument, strings.Join(defaults, ", "))
	var notes []string
	reached := false // some job of the pool gets the default in some variant
	for _, q := range resolutions[0].Queues {
		own := true
		for _, r := range resolutions {
			i := slices.IndexFunc(r.Queues, func(o QueueMinRuntime) bool { return o.Queue == q.Queue })
			own = own && i >= 0 && slices.IndexFunc(kind.resolved(r.Queues[i]), func(m ResolvedMinRuntime) bool { return m.SetBy == "" }) < 0
		}
		values := kind.resolved(q)
		switch {
		case !own:
			reached = true
		case len(values) > 0:
			notes = append(notes, prefix+ownValue(q.Queue, kind.field, values)+", which outweighs "+compared)
		}
	}
	if !reached && len(notes) > 0 {
		none := "no job gets "
		if prefix == "" {
			none = "No job gets "
		}
		notes = append(notes, prefix+none+compared+": the queues' own values outweigh it, so it changes nothing here")
	}
	return notes
}

// ownValue says which queues set the min-runtimes of a queue's jobs: "queue research sets its
// own reclaimMinRuntime (30m0s)", or "queue team gets its reclaimMinRuntime from queue org
// (1h0m0s)".
func ownValue(queue, field string, values []ResolvedMinRuntime) string {
	var own, inherited []string
	for _, m := range values {
		if m.SetBy == queue {
			own = append(own, m.Duration.String())
		} else {
			inherited = append(inherited, fmt.Sprintf("%s from queue %s", m.Duration, m.SetBy))
		}
	}
	own, inherited = slices.Compact(own), slices.Compact(inherited)
	switch {
	case len(inherited) == 0:
		return fmt.Sprintf("queue %s sets its own %s (%s)", queue, field, strings.Join(own, ", "))
	case len(own) == 0:
		return fmt.Sprintf("queue %s gets its %s from the queues above it (%s)", queue, field, strings.Join(inherited, ", "))
	}
	return fmt.Sprintf("queue %s gets its %s from itself and the queues above it (%s, %s)", queue, field,
		strings.Join(own, ", "), strings.Join(inherited, ", "))
}
