// Package explain tells an operator, in words, how the scheduler treats one PodGroup or one
// queue: for a running job, the start it counts and what protects it against whom until
// when, with the resolution path through the queue tree; for a pending job, why it waits and
// which protections stand in its way on the nodes its pods could use (kube-scheduler's
// filters, as the victim search applies them); for a queue, the min-runtimes its jobs get.
// It reads the cluster and the scheduler's configuration and answers with the scheduler's
// own code (the snapshot builder, the policy loader and the plugins' hooks), so that it
// cannot disagree with the scheduler. It backs `kubectl kai explain`.
package explain
