package helm

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/conf"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/plugins"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/plugins/minruntime"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/plugins/nodeplacement"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/plugins/predicates"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/plugins/priority"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/plugins/proportion"
)

// chartKnown is the chart's known.json: the names its checks of scheduler.actions and
// scheduler.plugins take.
type chartKnown struct {
	Comment        string                         `json:"$comment"`
	Actions        []string                       `json:"actions"`
	SkippedActions []string                       `json:"skippedActions"`
	Plugins        map[string]map[string][]string `json:"plugins"`
	SkippedPlugins []string                       `json:"skippedPlugins"`
}

func readChartKnown(t *testing.T) chartKnown {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ChartDir(), "known.json"))
	if err != nil {
		t.Fatal(err)
	}
	decoder := json.NewDecoder(strings.NewReader(string(data)))
	decoder.DisallowUnknownFields()
	var known chartKnown
	if err := decoder.Decode(&known); err != nil {
		t.Fatalf("known.json: %v", err)
	}
	return known
}

func sorted(names []string) []string {
	return slices.Sorted(slices.Values(names))
}

// The chart takes exactly the names the scheduler takes: the actions it runs and upstream's
// it skips, the plugins it runs with each argument and value they accept, and upstream's
// plugins it skips. A name added to the scheduler and not to known.json fails here rather
// than at a user's helm install; one in known.json the scheduler refuses would install a
// scheduler that cannot start.
func TestTheChartKnowsTheSchedulersNames(t *testing.T) {
	chart := readChartKnown(t)
	registry := plugins.NewRegistry()
	known := scheduler.Known(registry)

	if got, want := sorted(chart.Actions), sorted(known.Actions); !slices.Equal(got, want) {
		t.Errorf("known.json's actions are %v; the scheduler runs %v", got, want)
	}
	if got, want := sorted(chart.SkippedActions), sorted(conf.SkippedActions()); !slices.Equal(got, want) {
		t.Errorf("known.json's skipped actions are %v; the scheduler skips %v", got, want)
	}
	if got, want := slices.Sorted(maps.Keys(chart.Plugins)), sorted(known.Plugins); !slices.Equal(got, want) {
		t.Errorf("known.json's plugins are %v; the scheduler runs %v", got, want)
	}
	var skipped []string
	for _, name := range conf.UpstreamPlugins() {
		if !slices.Contains(known.Plugins, name) {
			skipped = append(skipped, name)
		}
	}
	if got, want := sorted(chart.SkippedPlugins), sorted(skipped); !slices.Equal(got, want) {
		t.Errorf("known.json's skipped plugins are %v; the scheduler skips %v", got, want)
	}

	// Each plugin's arguments, as the plugin itself declares them. Every registered plugin
	// must be here: one added to the registry fails until its arguments are told. minruntime
	// takes none under the plugin list: the chart renders its arguments from minRuntime.*.
	arguments := map[string]map[string][]string{
		minruntime.Name:    {},
		nodeplacement.Name: nodeplacement.Arguments(),
		predicates.Name:    {},
		priority.Name:      {},
		proportion.Name:    {},
	}
	for _, name := range known.Plugins {
		want, ok := arguments[name]
		if !ok {
			t.Errorf("plugin %s is registered: add its arguments to this test and to known.json", name)
			continue
		}
		got := chart.Plugins[name]
		if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))) {
			t.Errorf("known.json gives %s the arguments %v; it takes %v", name, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		}
		for arg, values := range want {
			if !slices.Equal(sorted(got[arg]), sorted(values)) {
				t.Errorf("known.json gives %s's %s the values %v; it takes %v", name, arg, got[arg], values)
			}
		}
		if name == minruntime.Name {
			continue
		}
		// The plugin's own check agrees: each value the chart takes is taken, an argument or
		// value the chart refuses is refused.
		for arg, values := range got {
			for _, value := range values {
				if err := registry.CheckArguments(name, map[string]string{arg: value}); err != nil {
					t.Errorf("known.json gives %s %s=%s, which it refuses: %v", name, arg, value, err)
				}
			}
			if registry.CheckArguments(name, map[string]string{arg: "not-a-value"}) == nil {
				t.Errorf("%s takes any value of %s; known.json lists %v", name, arg, values)
			}
		}
		if registry.CheckArguments(name, map[string]string{"not-an-argument": "binpack"}) == nil {
			t.Errorf("%s takes an argument known.json does not list", name)
		}
	}
}

// A configuration's actions and plugins as values give them: minruntime's arguments come
// from minRuntime.*, the rest as written.
type schedulerValues struct {
	Actions string              `json:"actions"`
	Plugins []conf.PluginOption `json:"plugins"`
}

// renderScheduler renders the chart with these scheduler values.
func renderScheduler(t *testing.T, values schedulerValues) (string, error) {
	t.Helper()
	data, err := json.Marshal(map[string]any{"scheduler": values})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "values.json")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	objects, err := Template("-f", file)
	if err != nil {
		return "", err
	}
	return SchedulerConfig(objects)
}

// defaultPlugins are the chart's default plugins, with the nodeplacement arguments given.
func defaultPlugins(placement map[string]string) []conf.PluginOption {
	return []conf.PluginOption{{Name: "priority"}, {Name: "proportion"}, {Name: "minruntime"}, {Name: "predicates"},
		{Name: "nodeplacement", Arguments: placement}}
}

// A misspelt action, plugin or argument is refused by helm, naming it by its key and saying
// what a right value is, where it used to install a scheduler that could not start; and the
// scheduler would refuse each of these configurations too, so the chart is no stricter than
// the scheduler.
func TestMisspeltNamesAreRefusedNamingThem(t *testing.T) {
	const actions = "allocate, reclaim, preempt"
	binpack := map[string]string{"gpu": "binpack", "cpu": "binpack"}
	misspeltPlugin := defaultPlugins(binpack)
	misspeltPlugin[4].Name = "nodeplacment"
	twice := append(defaultPlugins(binpack), conf.PluginOption{Name: "priority"})
	withArgument := defaultPlugins(binpack)
	withArgument[0].Arguments = map[string]string{"weight": "2"}
	for _, tt := range []struct {
		name   string
		values schedulerValues
		want   string
	}{
		{"plugin name", schedulerValues{actions, misspeltPlugin},
			`scheduler.plugins[4].name: "nodeplacment" is not a plugin of this scheduler, which has minruntime, nodeplacement, predicates, priority and proportion`},
		{"argument value", schedulerValues{actions, defaultPlugins(map[string]string{"gpu": "spred", "cpu": "binpack"})},
			`scheduler.plugins[4].arguments.gpu: "spred" must be binpack, spread or fragmentation`},
		{"argument name", schedulerValues{actions, defaultPlugins(map[string]string{"gpus": "spread"})},
			"scheduler.plugins[4].arguments.gpus: not an argument of nodeplacement, which takes cpu and gpu"},
		{"argument of a plugin that takes none", schedulerValues{actions, withArgument},
			"scheduler.plugins[0].arguments.weight: not an argument of priority, which takes none"},
		{"plugin twice", schedulerValues{actions, twice},
			`scheduler.plugins[5].name: "priority" is listed twice`},
		{"action", schedulerValues{"allocate, reclam, preempt", defaultPlugins(binpack)},
			`scheduler.actions: "reclam" is not an action of this scheduler, which has allocate, consolidation, preempt, reclaim and stalegangeviction`},
		{"actions separated by spaces", schedulerValues{"allocate reclaim", defaultPlugins(binpack)},
			`scheduler.actions: "allocate reclaim" is not an action of this scheduler`},
		{"empty action", schedulerValues{"allocate,, preempt", defaultPlugins(binpack)},
			`scheduler.actions: entry 2 of "allocate,, preempt" is empty`},
		{"action twice", schedulerValues{"allocate, preempt, allocate", defaultPlugins(binpack)},
			`scheduler.actions: "allocate" is listed twice`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := renderScheduler(t, tt.values)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("helm did not refuse it saying %q: %v", tt.want, err)
			}
			config, marshalErr := json.Marshal(conf.SchedulerConfiguration{Actions: tt.values.Actions, Tiers: []conf.Tier{{Plugins: tt.values.Plugins}}})
			if marshalErr != nil {
				t.Fatal(marshalErr)
			}
			if _, _, err := scheduler.LoadPolicy(config); err == nil {
				t.Errorf("the chart refuses a configuration the scheduler takes:\n%s", config)
			}
		})
	}

	// A pool's mistake is named under the pool.
	if _, err := Template("--set", `nodePools.a100.scheduler.actions=allocate\, preemt`); err == nil ||
		!strings.Contains(err.Error(), `nodePools.a100.scheduler.actions: "preemt" is not an action`) {
		t.Errorf("a pool's misspelt action was not refused under its key: %v", err)
	}
}

// What the scheduler takes, the chart takes: every value of nodeplacement's arguments, an
// upstream configuration with its default actions (all of which run here, consolidation
// included) and plugins this scheduler skips (with arguments of their own), which still
// installs and runs what it can, saying what it skips, and consolidation alone.
func TestRightNamesAreRenderedForTheScheduler(t *testing.T) {
	for _, tt := range []struct {
		name     string
		values   schedulerValues
		actions  string
		warnings []string
	}{
		{"spread", schedulerValues{"allocate, reclaim, preempt", defaultPlugins(map[string]string{"gpu": "spread", "cpu": "spread"})},
			"allocate,reclaim,preempt", nil},
		{"upstream's", schedulerValues{conf.UpstreamDefaultActions,
			append(defaultPlugins(nil), conf.PluginOption{Name: "elastic", Arguments: map[string]string{"anything": "goes"}},
				conf.PluginOption{Name: "gpupack"})},
			"allocate,consolidation,reclaim,preempt,stalegangeviction",
			[]string{`plugin "elastic" is a KAI-Scheduler plugin this scheduler does not implement; it is skipped`,
				`plugin "gpupack" is a KAI-Scheduler plugin whose work nodeplacement does here`}},
		{"consolidation alone", schedulerValues{"consolidation", defaultPlugins(nil)}, "consolidation", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			config, err := renderScheduler(t, tt.values)
			if err != nil {
				t.Fatal(err)
			}
			policy, warnings, err := scheduler.LoadPolicy([]byte(config))
			if err != nil || len(warnings) != len(tt.warnings) {
				t.Fatalf("the scheduler loads the rendered configuration with %v and warnings %q, want %d warnings:\n%s", err, warnings, len(tt.warnings), config)
			}
			for i, want := range tt.warnings {
				if !strings.Contains(warnings[i], want) {
					t.Errorf("warning %d = %q, want it to say %q", i, warnings[i], want)
				}
			}
			var actions []string
			for _, action := range policy.Actions {
				actions = append(actions, string(action.Name()))
			}
			if got := strings.Join(actions, ","); got != tt.actions {
				t.Errorf("the scheduler runs %s, want %s:\n%s", got, tt.actions, config)
			}
		})
	}
}

// The chart runs upstream KAI-Scheduler's default actions, in upstream's order, less those
// this scheduler skips (none at present): consolidation and stalegangeviction included, as
// an upstream user expects.
func TestDefaultActionsAreUpstreamsThatThisSchedulerRuns(t *testing.T) {
	objects, err := Template()
	if err != nil {
		t.Fatal(err)
	}
	config, err := SchedulerConfig(objects)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := conf.Load([]byte(config), scheduler.Known(plugins.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, action := range strings.Split(conf.UpstreamDefaultActions, ",") {
		if action = strings.TrimSpace(action); !slices.Contains(conf.SkippedActions(), action) {
			want = append(want, action)
		}
	}
	if !slices.Equal(cfg.Actions, want) {
		t.Errorf("the chart runs %v by default, want upstream's %v", cfg.Actions, want)
	}
	if !slices.Contains(cfg.Actions, "consolidation") {
		t.Errorf("the chart does not run consolidation by default: %v", cfg.Actions)
	}
}
