package conf

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

var testKnown = Known{
	Actions: []string{"allocate", "consolidation", "reclaim", "preempt", "stalegangeviction"},
	Plugins: []string{"priority", "proportion", "predicates", "nodeplacement", "minruntime"},
}

const knownPluginsHint = "(known: minruntime, nodeplacement, predicates, priority, proportion)"

func TestLoadValid(t *testing.T) {
	config, warnings, err := Load([]byte(`
actions: " allocate,reclaim ,  preempt"
tiers:
- plugins:
  - name: priority
  - name: minruntime
    arguments:
      defaultPreemptMinRuntime: "10m"
      reclaimResolveMethod: "lca"
- plugins:
  - name: predicates
`), testKnown)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("Load: warnings %q, error %v", warnings, err)
	}
	want := &Config{
		Actions: []string{"allocate", "reclaim", "preempt"},

		DefaultStalenessGracePeriod: DefaultStalenessGracePeriod,
		Tiers: []Tier{
			{Plugins: []PluginOption{
				{Name: "priority"},
				{Name: "minruntime", Arguments: map[string]string{
					"defaultPreemptMinRuntime": "10m", "reclaimResolveMethod": "lca"}},
			}},
			{Plugins: []PluginOption{{Name: "predicates"}}},
		},
	}
	if !reflect.DeepEqual(config, want) {
		t.Fatalf("config = %+v\nwant     %+v", config, want)
	}
	var names []string
	for _, plugin := range config.Plugins() {
		names = append(names, plugin.Name)
	}
	if got := strings.Join(names, ","); got != "priority,minruntime,predicates" {
		t.Fatalf("Plugins() names = %s", got)
	}
}

// TestLoadKAIConfiguration loads a configuration written for upstream KAI-Scheduler: what this
// scheduler does not implement is skipped with one warning each, the rest is kept in order.
// Every upstream action is implemented, consolidation included, so only plugins are skipped.
func TestLoadKAIConfiguration(t *testing.T) {
	config, warnings, err := Load([]byte(`
actions: "allocate, consolidation, reclaim, preempt, stalegangeviction"
queueDepthPerAction:
  allocate: 10
tiers:
- plugins:
  - name: predicates
  - name: elastic
  - name: minruntime
    arguments:
      defaultReclaimMinRuntime: "10m"
  - name: gpupack
`), testKnown)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	wantWarnings := []string{
		`unknown key "queueDepthPerAction" ignored`,
		`tiers[0].plugins[1]: plugin "elastic" is a KAI-Scheduler plugin this scheduler does not implement; it is skipped`,
		`tiers[0].plugins[3]: plugin "gpupack" is a KAI-Scheduler plugin whose work nodeplacement does here: its "gpu" argument "binpack" puts a share on the fullest device with room; it is skipped`,
	}
	if !reflect.DeepEqual(warnings, wantWarnings) {
		t.Fatalf("warnings:\n%s\nwant:\n%s", strings.Join(warnings, "\n"), strings.Join(wantWarnings, "\n"))
	}
	if got := strings.Join(config.Actions, ","); got != "allocate,consolidation,reclaim,preempt,stalegangeviction" {
		t.Fatalf("actions = %s", got)
	}
	plugins := config.Plugins()
	if len(plugins) != 2 || plugins[0].Name != "predicates" || plugins[1].Name != "minruntime" {
		t.Fatalf("plugins = %+v", plugins)
	}
}

func TestLoadWithoutPlugins(t *testing.T) {
	for _, doc := range []string{`actions: allocate`, "actions: allocate\ntiers: []", "actions: allocate\ntiers:\n- plugins: []"} {
		config, warnings, err := Load([]byte(doc), testKnown)
		if err != nil || len(warnings) != 0 || len(config.Plugins()) != 0 {
			t.Errorf("Load(%q) = %+v, %q, %v; want a config without plugins", doc, config, warnings, err)
		}
	}
}

// TestLoadHookSwitches accepts the per-hook boolean switches of older kube-batch style
// configurations with a warning, and keeps rejecting other stray keys.
func TestLoadHookSwitches(t *testing.T) {
	config, warnings, err := Load([]byte(`
actions: allocate
tiers:
- plugins:
  - name: priority
    enableJobOrder: true
    disableTaskOrder: false
`), testKnown)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := []string{
		`tiers[0].plugins[0]: "disableTaskOrder" is a per-hook switch this scheduler does not support; ignored`,
		`tiers[0].plugins[0]: "enableJobOrder" is a per-hook switch this scheduler does not support; ignored`,
	}
	if !reflect.DeepEqual(warnings, want) {
		t.Fatalf("warnings = %q\nwant       %q", warnings, want)
	}
	if got := config.Plugins(); len(got) != 1 || got[0].Name != "priority" {
		t.Fatalf("plugins = %+v", got)
	}

	_, _, err = Load([]byte("actions: allocate\ntiers:\n- plugins:\n  - name: priority\n    enableJobOrder: maybe\n"), testKnown)
	if err == nil || !strings.Contains(err.Error(), `unknown field "enableJobOrder"`) {
		t.Fatalf("a non-boolean switch should stay an error, got %v", err)
	}
}

// TestLoadWithoutActionsRunsUpstreamDefaults loads the snippet of upstream's minruntime
// documentation, which has no actions key: upstream then runs its default actions, and so do
// we, saying so; all five are implemented, so none is skipped.
func TestLoadWithoutActionsRunsUpstreamDefaults(t *testing.T) {
	// The scheduler's own Known also says reclaim needs proportion, which skips it here
	// (pkg/scheduler's TestUpstreamDocumentationSnippetStarts); this test is about actions.
	config, warnings, err := LoadFile("testdata/upstream-minruntime-doc.yaml", testKnown)
	if err != nil {
		t.Fatalf("LoadFile: %v", err)
	}
	want := []string{
		`testdata/upstream-minruntime-doc.yaml: actions: not set; running upstream KAI-Scheduler's default actions "allocate, consolidation, reclaim, preempt, stalegangeviction"`,
	}
	if !reflect.DeepEqual(warnings, want) {
		t.Fatalf("warnings:\n%s\nwant:\n%s", strings.Join(warnings, "\n"), strings.Join(want, "\n"))
	}
	if got := strings.Join(config.Actions, ","); got != "allocate,consolidation,reclaim,preempt,stalegangeviction" {
		t.Fatalf("actions = %s, want allocate,consolidation,reclaim,preempt,stalegangeviction", got)
	}
	plugins := config.Plugins()
	if len(plugins) != 1 || plugins[0].Arguments["defaultReclaimMinRuntime"] != "10m" {
		t.Fatalf("plugins = %+v, want minruntime with its arguments", plugins)
	}
}

// TestStalenessGracePeriod reads upstream's globalDefaultStalenessGracePeriod as a top-level
// key: a duration, negative allowed (it turns staleness eviction off), 60 s when absent; a
// malformed value fails the load naming the key.
func TestStalenessGracePeriod(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want time.Duration
	}{
		{"actions: allocate", DefaultStalenessGracePeriod},
		{"actions: allocate\nglobalDefaultStalenessGracePeriod: 3s", 3 * time.Second},
		{"actions: allocate\nglobalDefaultStalenessGracePeriod: 2m30s", 150 * time.Second},
		{"actions: allocate\nglobalDefaultStalenessGracePeriod: -1s", -time.Second},
	} {
		config, warnings, err := Load([]byte(tc.doc), testKnown)
		if err != nil || len(warnings) != 0 || config.DefaultStalenessGracePeriod != tc.want {
			t.Errorf("Load(%q) = %v, %q, %v; want %v without warnings", tc.doc, config, warnings, err, tc.want)
		}
	}
	for _, tc := range []struct{ value, want string }{
		{`"60"`, `globalDefaultStalenessGracePeriod: invalid duration "60": missing unit`},
		{"60", `globalDefaultStalenessGracePeriod: must be a duration string such as "60s", got 60`},
		{"soon", `globalDefaultStalenessGracePeriod: invalid duration "soon"`},
		{"[1s]", `globalDefaultStalenessGracePeriod: must be a duration string such as "60s", got a list`},
	} {
		_, _, err := Load([]byte("actions: allocate\nglobalDefaultStalenessGracePeriod: "+tc.value), testKnown)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%s) error = %v, want %q", tc.value, err, tc.want)
		}
	}
}
