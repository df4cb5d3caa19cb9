package conf

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// tiers decodes the tiers list. A configuration need not enable any plugin, so a missing list
// is valid.
func (l *loader) tiers(raw json.RawMessage) []Tier {
	if absent(raw) {
		return nil
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		l.errorf("tiers: must be a list, got %s", Describe(raw))
		return nil
	}
	tiers := make([]Tier, 0, len(entries))
	for t, entry := range entries {
		path := fmt.Sprintf("tiers[%d]", t)
		fields, ok := l.mapping(path, entry, "a mapping with plugins")
		if !ok {
			continue
		}
		l.rejectUnknown(path, fields, "plugins")
		tiers = append(tiers, Tier{Plugins: l.plugins(path+".plugins", fields["plugins"])})
	}
	return tiers
}

// plugins decodes one tier's plugin list and keeps the entries this scheduler implements.
func (l *loader) plugins(path string, raw json.RawMessage) []PluginOption {
	if absent(raw) {
		return nil
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		l.errorf("%s: must be a list, got %s", path, Describe(raw))
		return nil
	}
	var kept []PluginOption
	for p, entry := range entries {
		entryPath := fmt.Sprintf("%s[%d]", path, p)
		plugin, ok := l.plugin(entryPath, entry)
		if ok && l.keepPlugin(entryPath, plugin.Name) {
			kept = append(kept, plugin)
			l.checkArguments(entryPath+".arguments", plugin)
		}
	}
	return kept
}

// plugin decodes one plugin entry. It reports false when the name is unusable, which has
// already been reported, so that no follow-up error is raised about the same entry.
func (l *loader) plugin(path string, raw json.RawMessage) (PluginOption, bool) {
	fields, ok := l.mapping(path, raw, "a mapping with a name")
	if !ok {
		return PluginOption{}, false
	}
	// Unlike top-level keys, a stray key here is almost always a misspelt "arguments" whose
	// settings would silently not apply. The per-hook boolean switches of the kube-batch
	// family (enableJobOrder: false, ...) are the exception: old configurations carry them.
	l.warnHookSwitches(path, fields)
	l.rejectUnknown(path, fields, "name", "arguments")
	args := l.arguments(path+".arguments", fields["arguments"])

	var name string
	nameRaw := fields["name"]
	if !absent(nameRaw) && json.Unmarshal(nameRaw, &name) != nil {
		l.errorf("%s.name: must be a string, got %s", path, Describe(nameRaw))
		return PluginOption{}, false
	}
	if strings.TrimSpace(name) == "" {
		l.errorf("%s.name: must not be empty", path)
		return PluginOption{}, false
	}
	return PluginOption{Name: name, Arguments: args}, true
}

// checkArguments reports each mistake the plugin finds in its arguments, one per line.
func (l *loader) checkArguments(path string, plugin PluginOption) {
	if l.known.CheckArguments == nil {
		return
	}
	if err := l.known.CheckArguments(plugin.Name, plugin.Arguments); err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			l.errorf("%s (plugin %s): %s", path, plugin.Name, line)
		}
	}
}

// arguments decodes a plugin's arguments. Values must be YAML strings: an unquoted 1.50 or yes
// reaches us already converted (1.5, true), so accepting it would pass on something other
// than what the user wrote.
func (l *loader) arguments(path string, raw json.RawMessage) map[string]string {
	if absent(raw) {
		return nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		l.errorf("%s: must be a mapping of strings, got %s", path, Describe(raw))
		return nil
	}
	args := make(map[string]string, len(fields))
	for _, key := range slices.Sorted(maps.Keys(fields)) {
		var value string
		if absent(fields[key]) || json.Unmarshal(fields[key], &value) != nil {
			l.errorf("%s.%s: must be a string (write it in quotes), got %s", path, key, Describe(fields[key]))
			continue
		}
		args[key] = value
	}
	return args
}

// mapping decodes a value that must be a YAML mapping; want describes it for the error.
func (l *loader) mapping(path string, raw json.RawMessage, want string) (map[string]json.RawMessage, bool) {
	var fields map[string]json.RawMessage
	if absent(raw) || json.Unmarshal(raw, &fields) != nil {
		l.errorf("%s: must be %s, got %s", path, want, Describe(raw))
		return nil, false
	}
	return fields, true
}

// rejectUnknown reports every key of fields that is not allowed, in a stable order.
// warnHookSwitches removes boolean enable*/disable* keys from fields with a warning: this
// scheduler has no per-hook switches, so such a key is accepted but has no effect.
func (l *loader) warnHookSwitches(path string, fields map[string]json.RawMessage) {
	for _, key := range slices.Sorted(maps.Keys(fields)) {
		var flag bool
		if !hookSwitch.MatchString(key) || json.Unmarshal(fields[key], &flag) != nil {
			continue
		}
		l.warnf("%s: %q is a per-hook switch this scheduler does not support; ignored", path, key)
		delete(fields, key)
	}
}

// hookSwitch matches keys such as enableJobOrder, enabledPredicate or disableTaskOrder.
var hookSwitch = regexp.MustCompile(`^(enable|enabled|disable)[A-Z]`)

func (l *loader) rejectUnknown(path string, fields map[string]json.RawMessage, allowed ...string) {
	for _, key := range slices.Sorted(maps.Keys(fields)) {
		if !slices.Contains(allowed, key) {
			l.errorf("%s: unknown field %q", path, key)
		}
	}
}
