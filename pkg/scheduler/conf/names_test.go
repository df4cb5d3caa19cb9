package conf

import (
	"reflect"
	"slices"
	"testing"
)

// TestConsolidationAloneLoads: consolidation is implemented, so a configuration listing only
// it runs it, without a warning, where it used to be refused as running nothing.
func TestConsolidationAloneLoads(t *testing.T) {
	config, warnings, err := Load([]byte(`actions: "consolidation"`), testKnown)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("Load: warnings %q, error %v; want neither", warnings, err)
	}
	if !reflect.DeepEqual(config.Actions, []string{"consolidation"}) {
		t.Fatalf("actions = %q, want consolidation", config.Actions)
	}
	if slices.Contains(SkippedActions(), "consolidation") {
		t.Fatalf("SkippedActions() = %q still names consolidation", SkippedActions())
	}
}

// TestSkippedActionsAreWarnedAboutAndNotEnoughAlone keeps the path for upstream actions this
// scheduler does not implement working while none is listed: with one made up, it is skipped
// with a warning next to an action that runs, and a list of only it is refused.
func TestSkippedActionsAreWarnedAboutAndNotEnoughAlone(t *testing.T) {
	saved := kaiOnlyActions
	kaiOnlyActions = []string{"defragment"}
	t.Cleanup(func() { kaiOnlyActions = saved })

	config, warnings, err := Load([]byte(`actions: "allocate, defragment"`), testKnown)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	expectMessages(t, "warning", warnings,
		[]string{`action "defragment" is a KAI-Scheduler action this scheduler does not implement; it is skipped`})
	if !reflect.DeepEqual(config.Actions, []string{"allocate"}) {
		t.Fatalf("actions = %q, want allocate", config.Actions)
	}

	config, warnings, err = Load([]byte(`actions: "defragment"`), testKnown)
	if err == nil || config != nil {
		t.Fatalf("Load = %+v, %v; want an error and no config", config, err)
	}
	expectMessages(t, "error", splitJoined(err),
		[]string{`actions: none of "defragment" is implemented by this scheduler (known: allocate, consolidation, preempt, reclaim, stalegangeviction)`})
	expectMessages(t, "warning", warnings, []string{`action "defragment" is a KAI-Scheduler action`})

	skipped := SkippedActions()
	if !reflect.DeepEqual(skipped, []string{"defragment"}) {
		t.Fatalf("SkippedActions() = %q, want defragment", skipped)
	}
	skipped[0] = "changed"
	if kaiOnlyActions[0] != "defragment" {
		t.Fatal("SkippedActions() must return a copy")
	}
}
