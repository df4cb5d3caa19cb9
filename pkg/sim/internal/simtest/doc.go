// Package simtest holds what the tests of the simulator's packages share: the example
// scenarios of docs/examples/sim, which are also tests, and a reader of a run's evictions.
package simtest
