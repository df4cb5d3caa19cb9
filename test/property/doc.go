// Package property is a randomized property test of the scheduler as a whole. From a seed it
// generates a small cluster — nodes, a queue tree with min-runtimes set, unset or "0s" at
// every level, gangs, elastic jobs and sub-groups — as kai-sim manifest text plus a scheduler
// configuration, runs it with pkg/sim, and judges the timeline with an oracle written apart
// from the scheduler: it resolves min-runtimes itself from the design rules and imports no
// scheduler action or plugin, so a mistake shared by both cannot hide.
//
// This directory owns the generator (generator.go), the oracle (oracle.go) and the tests
// (property_test.go, oracle_test.go). Run:
//
//	go test ./test/property/ -count=1                 # seeds 1..300
//	PROPERTY_SEEDS=2000 go test ./test/property/      # more seeds
//	PROPERTY_SEED=17 go test ./test/property/ -v      # one seed, with its failures
//
// A failing seed leaves its scenario and configuration in a directory under os.TempDir and
// prints the kai-sim command that replays it.
package property
