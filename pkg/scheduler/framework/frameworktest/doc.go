// Package frameworktest is the one home of test doubles of the framework's interfaces:
// Effects records what a committed statement sends (its Calls, in order, each answered by
// Fail), Discard accepts everything for benchmarks, and Scenario is a victim search's
// scenario built unit by unit, which CheckRememberedVerdicts drives a scenario filter
// through. The doubles are written by hand, not generated: comparing a list of calls says
// their order and arguments in one assertion. The package imports only the framework, so
// the plugins' own tests use it too (the cycle harness, which runs whole cycles, imports the
// plugins). The snapshot's objects and whole cycles are pkg/testing/harness's; the
// Kubernetes objects tests make, pkg/testing/builders'.
package frameworktest
