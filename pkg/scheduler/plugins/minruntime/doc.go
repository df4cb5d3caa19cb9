// Package minruntime guarantees jobs a minimum runtime before they can be preempted (by a
// higher-priority job of their queue) or reclaimed (by another queue). A running job is
// protected while now < start + min-runtime, where now is the session's frozen time, start
// is EffectiveStart, and min-runtime is resolved from the queue tree (PreemptMinRuntime,
// ReclaimMinRuntime) with the plugin arguments as node-pool defaults.
//
// Non-elastic jobs are protected whole, through IsPreemptible. Elastic jobs stay candidates
// there, and a scenario filter keeps every protected elastic job at its minimum (and each
// sub-group at its own), so their surplus pods remain evictable.
//
// The preemptor's side of the same protection is the preemption delay (delay.go): a pending
// job inside its window evicts nobody, through MayEvictFor; it still takes free capacity.
package minruntime
