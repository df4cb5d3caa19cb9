package sim

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
)

// TestVerifySnapshotsCatchesAChangeTheStoreWasNotToldOf: the self-check the property suite
// runs on every cycle must fail when a write bypasses the store, or it proves nothing.
func TestVerifySnapshotsCatchesAChangeTheStoreWasNotToldOf(t *testing.T) {
	sc, err := input.Parse(input.BuiltinScenario())
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Period: time.Second}
	ctx := context.Background()
	e := testEngine(t, sc, opts)
	e.submit(e.clock.Now())
	if err := e.verifySnapshot(ctx); err != nil {
		t.Fatalf("store and lists disagree before anything bypassed the store: %v", err)
	}
	var pod = e.jobs[0].pods[0]
	pod.Spec.NodeName = sc.Nodes[0].Name // bound behind the store's back
	err = e.verifySnapshot(ctx)
	if err == nil || !strings.Contains(err.Error(), "differs from one built from lists") {
		t.Fatalf("a bind the store was not told of went unnoticed: %v", err)
	}
	e.cluster.Changed(pod)
	if err := e.verifySnapshot(ctx); err != nil {
		t.Fatalf("store and lists disagree after the store was told: %v", err)
	}
}

// testEngine is the simulator's engine for sc, its pools' configurations loaded, before
// anything is submitted.
func testEngine(t *testing.T, sc *input.Scenario, opts Options) *engine {
	t.Helper()
	pools := poolsOf(sc, opts.NodePoolLabelKey)
	configs, _, err := loadPoolConfigs(pools, opts)
	if err != nil {
		t.Fatal(err)
	}
	e, err := newEngine(sc, opts, pools, configs)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
