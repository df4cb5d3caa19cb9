package model

// ActionType names an action of a cycle.
type ActionType string

// The actions of a cycle.
const (
	Allocate ActionType = "allocate"
	Reclaim  ActionType = "reclaim"
	Preempt  ActionType = "preempt"
	// Consolidation moves running pods to other nodes (or a share to another device) so
	// that a pending job fits: an eviction whose victims fit elsewhere at once.
	Consolidation ActionType = "consolidation"
	// StaleGangEviction evicts running jobs left below their minimum for too long; it
	// evicts for no other job.
	StaleGangEviction ActionType = "stalegangeviction"
)

// Moves reports whether the action's evictions move their pods — they are to be placed again
// elsewhere (PodInfo.Moved) — rather than take them.
func (a ActionType) Moves() bool { return a == Consolidation }
