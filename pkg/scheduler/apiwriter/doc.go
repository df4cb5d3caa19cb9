// Package apiwriter carries a cycle's committed decisions to the Kubernetes API: binds through
// the pods/binding subresource, evictions as a DisruptionTarget condition followed by a
// graceful delete, nominations as the pod's nominatedNodeName, events on the PodGroups
// involved, and start stamps handed to the status updater. The Dispatcher sends them from
// workers, off the cycle, in the order their promises need. Every write is also noted in
// the store's overlay, so the next snapshot sees it even if the informers lag.
package apiwriter
