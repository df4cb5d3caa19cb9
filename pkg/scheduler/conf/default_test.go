package conf

import (
	"reflect"
	"strings"
	"testing"
)

func TestDefault(t *testing.T) {
	config, err := Default(testKnown)
	if err != nil {
		t.Fatalf("Default: %v", err)
	}
	want := &Config{
		Actions: []string{"allocate", "reclaim", "preempt"},

		DefaultStalenessGracePeriod: DefaultStalenessGracePeriod,
		Tiers: []Tier{{Plugins: []PluginOption{
			{Name: "priority"}, {Name: "proportion"}, {Name: "minruntime"}, {Name: "predicates"}, {Name: "nodeplacement"}}}},
	}
	if !reflect.DeepEqual(config, want) {
		t.Fatalf("Default = %+v, want %+v", config, want)
	}
}

// A default that names something this build does not implement is a bug, not a warning.
func TestDefaultWithWarningsIsAnError(t *testing.T) {
	known := Known{Actions: testKnown.Actions, Plugins: []string{"priority", "proportion", "predicates"}}
	config, err := Default(known)
	if err == nil || config != nil {
		t.Fatalf("Default = %+v, %v; want an error", config, err)
	}
	for _, want := range []string{"built-in default configuration: unexpected warnings", `"nodeplacement"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

func TestDefaultYAMLIsACopy(t *testing.T) {
	got := DefaultYAML()
	if _, _, err := Load(got, testKnown); err != nil {
		t.Fatalf("DefaultYAML does not load: %v", err)
	}
	got[0] = 'X' // callers get a copy and cannot change the default
	if DefaultYAML()[0] != '#' {
		t.Fatal("modifying the result of DefaultYAML changed the default")
	}
}
