// Package plural writes a count with its noun in the right number ("1 eviction", "2
// evictions"), the one helper the scheduler's messages, kai-sim's report and
// input errors, and kubectl kai explain use for it. It imports nothing of the scheduler or the simulator, so any package
// can use it without an import cycle.
package plural
