package model

// ActionType names an action of a cycle.
type ActionType string

// The actions of a cycle.
const (
	Allocate ActionType = "allocate"
	Reclaim  ActionType = "reclaim"
	Preempt  ActionType = "preempt"
	// StaleGangEviction evicts running jobs left below their minimum for too long; it
	// evicts for no other job.
	StaleGangEviction ActionType = "stalegangeviction"
)
