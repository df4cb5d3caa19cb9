// Package status writes what the scheduler decided back to the objects it is about: the
// start stamp that min-runtime protection counts from, why a job is still pending (a
// scheduling condition and events), how a running job is protected, and each queue's status.
// A cycle records what each object should show; parallel workers on a client-go work queue
// write it, each object once however often it changed, start stamps first, failures retried
// with backoff on the injected clock. Writes are merge patches without a resource version, so
// they cannot conflict, and never hold up a scheduling cycle.
package status
