// Package stalegang is the stalegangeviction action: a running job whose placed pods fell
// below its minimum (a pod failed or was deleted) holds its resources and makes no progress,
// so once it has been short for longer than its staleness grace period it is evicted whole,
// for no other job, through the same eviction path as reclaim and preempt.
//
// Since when a job is short is taken from the cluster's objects where they tell it, so that a
// restarted scheduler counts from the same moment: the latest failure of one of its pods in
// the current run, or the creation of a replacement pod still waiting. A pod deleted without
// a replacement leaves no such trace; the action then counts from the first cycle that saw
// the job short, which a restart can only delay, never advance.
//
// Min-runtime does not hold this action back: min-runtime protects a job's progress from
// other jobs, and a stale gang makes none (docs/minruntime.md).
package stalegang
