// Package snapshot writes a live cluster as a kai-sim scenario (kubectl kai snapshot): the
// nodes, Topologies, queues, PriorityClasses, jobs and pods the scheduler sees, with times
// made relative to the moment of the snapshot, so that the real scheduler in kai-sim (package
// sim) starts from the cluster as it is: a running job keeps how long it has run, and with it
// the end of its min-runtime protection; a pending job keeps how long it has waited. It
// exports what scheduling reads and nothing more: no environment, volumes or images unless
// asked.
package snapshot
