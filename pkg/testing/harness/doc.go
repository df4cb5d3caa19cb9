// Package harness is a declarative harness for scheduler tests: describe nodes, queues and
// jobs (with pod states and placements) in a few fluent lines, run one cycle or rounds of
// cycles through the same scheduler.RunCycle the scheduler uses, and read what happened.
// Between rounds it plays the cluster: bound pods start running, evicted pods terminate and
// come back pending, and the virtual clock advances.
//
// It is the home of builders of the snapshot's own objects (model.NodeInfo, model.QueueInfo,
// model.JobInfo), which the scheduler's core reads; the Kubernetes objects the store, the
// tools and the suites read are built by pkg/testing/builders, and doubles of the
// framework's interfaces are pkg/scheduler/framework/frameworktest's (what a round commits
// is recorded here, into the Round, by the harness itself).
package harness
