// Package sim runs the real scheduler — cache.Builder, scheduler.RunCycle with the configured
// actions and plugins, kube.Effects and the status updater — against an in-memory cluster in
// virtual time, and reports what happened to every job: when it started, how often it was
// evicted, how much GPU time startups and lost work wasted. Only the cluster is simulated:
// nodes, a kubelet that starts bound pods and terminates evicted ones after their grace
// period, and workloads that need a given amount of useful work, checkpoint it, and are
// recreated when evicted.
package sim
