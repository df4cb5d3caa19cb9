// Package status writes what the scheduler decided back to PodGroups: the start stamp that
// min-runtime protection counts from, and why a job is still pending (a scheduling condition
// and an event). Writes are merge patches without a resource version, so they cannot
// conflict; a write that fails stays queued and is retried, without ever holding up a
// scheduling cycle.
package status
