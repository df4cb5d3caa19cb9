// Package scenario is a declarative harness for scheduler tests: describe nodes, queues and
// jobs (with pod states and placements) in a few fluent lines, run one cycle or rounds of
// cycles through the same scheduler.RunCycle the scheduler uses, and read what happened.
// Between rounds it plays the cluster: bound pods start running, evicted pods terminate and
// come back pending, and the virtual clock advances.
package scenario
