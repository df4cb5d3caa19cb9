package conf

import (
	"encoding/json"
	"slices"
	"strings"
)

// kaiOnlyActions are upstream KAI-Scheduler actions this scheduler does not implement. KAI
// configurations list them routinely, so they are skipped with a warning instead of rejected.
var kaiOnlyActions []string

// UpstreamDefaultActions are what upstream KAI-Scheduler runs when a configuration has no
// actions key. Its own documentation's snippets leave the key out, so such a file means
// these, not a mistake.
const UpstreamDefaultActions = "allocate, consolidation, reclaim, preempt, stalegangeviction"

// kaiPlugins are the upstream KAI-Scheduler plugin names. Those this scheduler does not
// implement are skipped with a warning; a name in Known.Plugins is used normally.
var kaiPlugins = []string{
	"predicates", "proportion", "priority", "nodeavailability", "resourcetype", "podaffinity",
	"elastic", "kubeflow", "ray", "subgrouporder", "taskorder", "nominatednode",
	"dynamicresources", "minruntime", "topology", "snapshot", "gpupack", "gpuspread",
	"nodeplacement", "gpusharingorder",
}

// gpuSharingPlugins are upstream's plugins placing GPU shares, and where that choice is made
// here, for the warning that skips them.
var gpuSharingPlugins = map[string]string{
	"gpupack":         `its "gpu" argument "binpack" puts a share on the fullest device with room`,
	"gpuspread":       `its "gpu" argument "spread" puts a share on the emptiest device`,
	"gpusharingorder": `its "gpu" argument chooses nodes and devices for shares ("fragmentation", the default, leaves the fewest GPUs stranded)`,
}

// SkippedActions returns the upstream KAI-Scheduler actions a configuration may list, which
// Load skips with a warning. Exported, with UpstreamPlugins, so that the Helm chart, which
// refuses an unknown action or plugin before anything reaches a cluster, is tested to accept
// exactly the names Load accepts (test/helm); a copy, so that no caller can change Load.
func SkippedActions() []string {
	return slices.Clone(kaiOnlyActions)
}

// UpstreamPlugins returns the upstream KAI-Scheduler plugin names, which Load accepts: those
// Known.Plugins lacks are skipped with a warning. Exported for the chart's test, as above.
func UpstreamPlugins() []string {
	return slices.Clone(kaiPlugins)
}

// actions splits and checks the comma-separated actions string and returns the actions this
// scheduler runs, in file order.
func (l *loader) actions(raw json.RawMessage) []string {
	var list string
	if absent(raw) {
		l.warnf("actions: not set; running upstream KAI-Scheduler's default actions %q", UpstreamDefaultActions)
		list = UpstreamDefaultActions
	} else if err := json.Unmarshal(raw, &list); err != nil {
		l.errorf("actions: must be a comma-separated string, got %s", Describe(raw))
		return nil
	}
	if strings.TrimSpace(list) == "" {
		l.errorf("actions: must not be empty")
		return nil
	}

	var kept []string
	seen := map[string]bool{}
	errsBefore := len(l.errs)
	for i, action := range strings.Split(list, ",") {
		action = strings.TrimSpace(action)
		switch {
		case action == "":
			l.errorf("actions: entry %d of %q is empty", i+1, list)
		case seen[action]:
			l.errorf("actions: duplicate action %q", action)
		case slices.Contains(l.known.Actions, action):
			kept = append(kept, action)
		case slices.Contains(kaiOnlyActions, action):
			l.warnf("action %q is a KAI-Scheduler action this scheduler does not implement; it is skipped", action)
		default:
			l.errorf("actions: unknown action %q (known: %s)", action, sortedList(l.known.Actions))
		}
		seen[action] = true
	}
	// A scheduler with nothing to run is certainly misconfigured.
	if len(kept) == 0 && len(l.errs) == errsBefore {
		l.errorf("actions: none of %q is implemented by this scheduler (known: %s)", list, sortedList(l.known.Actions))
	}
	return kept
}

// withNeeds returns the actions whose needed plugins are configured, warning about each one
// skipped: an upstream configuration may rely on plugins this file does not list.
func (l *loader) withNeeds(config *Config) []string {
	var listed []string
	for _, plugin := range config.Plugins() {
		listed = append(listed, plugin.Name)
	}
	var kept []string
	for _, action := range config.Actions {
		need, ok := l.known.Needs[action]
		if ok && !slices.Contains(listed, need.Plugin) {
			l.warnf("action %q is skipped: it needs the %s plugin, which the tiers do not list (%s)", action, need.Plugin, need.Why)
			continue
		}
		kept = append(kept, action)
	}
	if len(kept) == 0 && len(config.Actions) > 0 {
		l.errorf("actions: none of %s can run with the plugins listed", strings.Join(config.Actions, ", "))
	}
	return kept
}

// keepPlugin checks a plugin name at path and reports whether the plugin is used.
func (l *loader) keepPlugin(path, name string) bool {
	if first, ok := l.firstSeen[name]; ok {
		l.errorf("%s.name: duplicate plugin %q, already listed at %s", path, name, first)
		return false
	}
	l.firstSeen[name] = path
	switch {
	case slices.Contains(l.known.Plugins, name):
		return true
	case gpuSharingPlugins[name] != "":
		l.warnf("%s: plugin %q is a KAI-Scheduler plugin whose work nodeplacement does here: %s; it is skipped", path, name, gpuSharingPlugins[name])
		return false
	case slices.Contains(kaiPlugins, name):
		l.warnf("%s: plugin %q is a KAI-Scheduler plugin this scheduler does not implement; it is skipped", path, name)
		return false
	default:
		l.errorf("%s.name: unknown plugin %q (known: %s)", path, name, sortedList(l.known.Plugins))
		return false
	}
}

// sortedList formats names for "known: ..." hints without reordering the caller's slice.
func sortedList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(slices.Sorted(slices.Values(names)), ", ")
}
