// Package cache turns Kubernetes objects into the scheduler's snapshot model. This file set
// holds the conversions that need no client: Queue specs into queue-tree entries (with KAI's
// units), and the PodGroup start stamp to and from its annotation. The informer-fed cache
// that builds a snapshot every cycle grows around them.
package cache
