// Package sim runs the real scheduler — one per node pool, assembled by scheduler.New as the
// binary's is: the store and its snapshot builder, the loop's cycles with the configured
// actions and plugins, the API writer and the status updater — against an in-memory cluster in
// virtual time, and reports what happened to every job: when it started, how often it was
// evicted, how much GPU time startups and lost work wasted. Only the cluster is simulated:
// nodes, a kubelet that starts bound pods and terminates evicted ones after their grace
// period, and workloads that need a given amount of useful work, checkpoint it, and are
// recreated when evicted.
//
// This package is the engine: Run takes an input.Scenario and Options (the configuration,
// the horizon, one scheduler per node pool) and plays it out in virtual time from Start;
// Compare runs one scenario under several configurations, BuiltinVariants being those of
// kai-sim's built-in comparison. What it runs on and what it returns are packages of their
// own: input reads scenario files, memcluster is the API server the scheduler writes to, and
// report is the Result with its JSON, text and plot.
package sim
