// Package scheduler wires the pieces of a scheduling cycle together: it turns a validated
// configuration into a Policy (actions and plugins, built once at startup) and runs one cycle
// of that policy on a snapshot. The real scheduler, the simulator and the cycle harness
// all run cycles through Cycle.Run, so they share every decision.
package scheduler
