// Package plural writes a count with its noun in the right number ("1 eviction", "2
// evictions"), the one helper kai-sim's report, summary and input messages, and kubectl kai
// explain, use for it. It imports nothing of the scheduler or the simulator, so any package
// can use it without an import cycle.
package plural
