// Package kube carries a cycle's committed decisions to the Kubernetes API: binds through
// the pods/binding subresource, evictions as a DisruptionTarget condition followed by a
// graceful delete, events on the PodGroups involved, and start stamps handed to the status
// updater. Every write is also noted in the cache overlay, so the next snapshot sees it even
// if the informers lag.
package kube
