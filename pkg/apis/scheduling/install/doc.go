// Package install registers every version of the scheduling.run.ai API with a scheme, so
// clients and tests need a single call to read both Queues and PodGroups.
package install
