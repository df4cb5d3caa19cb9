package scheduling

import "strings"

// The message of a victim's DisruptionTarget condition says which action evicted it and for
// which job, so that a scheduler that restarts while the victim terminates still knows whose
// the released resources are. EvictionMessage writes it; ParseEvictionMessage reads it back.
// A stale gang's pods are evicted for no job: their message starts with StaleGangPrefix.
const (
	evictedBy = "evicted by "
	forJob    = " for job "
	// StaleGangPrefix starts the message of a stale gang's eviction.
	StaleGangPrefix = "stale gang: "
)

// EvictionMessage is the message of a pod evicted by action for the job preemptor
// ("namespace/name").
func EvictionMessage(action, preemptor string) string {
	return evictedBy + action + forJob + preemptor
}

// ParseEvictionMessage reads the action and preemptor back from a message EvictionMessage
// wrote; ok is false for any other message.
func ParseEvictionMessage(message string) (action, preemptor string, ok bool) {
	rest, found := strings.CutPrefix(message, evictedBy)
	if !found {
		return "", "", false
	}
	a, p, found := strings.Cut(rest, forJob)
	if !found || a == "" || p == "" {
		return "", "", false
	}
	return a, p, true
}
