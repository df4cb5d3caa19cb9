// Package app assembles the scheduler binary: configuration, the controller-runtime manager
// (informer cache, leader election with a Lease, /metrics and health endpoints), the
// scheduling loop, the status updater and the pod grouper. cmd/kai-scheduler parses flags
// into Options and calls Run; tests call Run the same way.
package app
