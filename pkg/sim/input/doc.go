// Package input reads what a simulation runs: a scenario file of ordinary manifests (Nodes,
// Queues, PodGroups with the simulation annotations, Pods, PriorityClasses, Topologies, and
// workloads of any other kind whose pods KAI's pod grouper groups, as on a cluster) into a
// Scenario of Jobs, with errors in the terms of the YAML written (Parse); the arrivals files
// and the repeated pending mix added to it (Load, ParseRate); the built-in scenario kai-sim
// runs without arguments (BuiltinScenario); and the synthetic day of 2000 jobs that the
// benchmark and the measured outcomes run (SyntheticDay). It knows nothing of the scheduler
// that runs it: the engine in package sim takes a Scenario, and kubectl kai snapshot writes
// one with the annotations and SchedulerName defined here.
package input
