// Package store turns Kubernetes objects into the scheduler's snapshot model. Store keeps
// nodes, pods, PodGroups, Queues and priority classes converted as informer events (or
// kai-sim's writes, or full lists) arrive; Builder assembles each cycle's snapshot from it,
// laying over it the Overlay of the scheduler's own writes the informers do not show yet. It
// also holds the conversions that need no client: Queue specs into queue-tree entries (with
// KAI's units). The wire formats it reads are the API's (the start stamp:
// scheduling.ParseStartTime; the protection a status shows: model.ShownProtection over
// v2alpha2's format).
package store
