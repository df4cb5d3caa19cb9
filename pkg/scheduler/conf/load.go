package conf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"

	"sigs.k8s.io/yaml"
)

// Load parses and validates a configuration. Warnings describe parts of the file that were
// ignored (upstream KAI-Scheduler keys, actions and plugins this scheduler does not implement);
// they are returned even when the error is not nil. The error joins every problem found, each
// naming its key path and value, so that one run shows the user everything to fix. The Config
// is nil whenever the error is not.
func Load(data []byte, known Known) (*Config, []string, error) {
	config, warnings, errs := load(data, known)
	if len(errs) > 0 {
		return nil, warnings, errors.Join(errs...)
	}
	return config, warnings, nil
}

// LoadFile is Load for a file. Every error and warning starts with the path, so each line of a
// joined error still says which file it is about.
func LoadFile(path string, known Known) (*Config, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		// The *PathError would repeat the path ("p: open p: ..."); keep only its cause, which
		// still satisfies errors.Is(err, fs.ErrNotExist).
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) {
			err = pathErr.Err
		}
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	config, warnings, errs := load(data, known)
	for i, w := range warnings {
		warnings[i] = path + ": " + w
	}
	if len(errs) > 0 {
		for i, e := range errs {
			errs[i] = fmt.Errorf("%s: %w", path, e)
		}
		return nil, warnings, errors.Join(errs...)
	}
	return config, warnings, nil
}

// load walks the document top-down, collecting errors instead of stopping at the first.
func load(data []byte, known Known) (*Config, []string, []error) {
	// Strict conversion rejects duplicate keys, which would otherwise silently keep the last.
	doc, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, nil, []error{fmt.Errorf("invalid YAML: %w", err)}
	}
	if trimmed := string(bytes.TrimSpace(doc)); trimmed == "null" || trimmed == "{}" {
		// Upstream would run its defaults, but an empty file is far more often a ConfigMap
		// key that did not reach the mount than a choice.
		return nil, nil, []error{errors.New("the configuration is empty; write actions and tiers, or pass no file for the built-in default")}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(doc, &top); err != nil {
		return nil, nil, []error{fmt.Errorf("the configuration must be a mapping with actions and tiers, got %s", Describe(doc))}
	}

	l := &loader{known: known, firstSeen: map[string]string{}}
	// Upstream KAI-Scheduler has more top-level keys (queueDepthPerAction, usageDBConfig, ...);
	// a KAI configuration must still load, so these are only reported.
	for _, key := range slices.Sorted(maps.Keys(top)) {
		if key != "actions" && key != "tiers" && key != StalenessKey {
			l.warnf("unknown key %q ignored", key)
		}
	}

	config := &Config{
		Actions: l.actions(top["actions"]),
		Tiers:   l.tiers(top["tiers"]),

		DefaultStalenessGracePeriod: l.stalenessGracePeriod(top[StalenessKey]),
	}
	if len(l.errs) == 0 {
		config.Actions = l.withNeeds(config)
	}
	return config, l.warnings, l.errs
}

// loader collects the findings of one Load.
type loader struct {
	known    Known
	errs     []error
	warnings []string
	// firstSeen maps each plugin name to the path of its first entry, to report duplicates.
	firstSeen map[string]string
}

func (l *loader) errorf(format string, args ...any) {
	l.errs = append(l.errs, fmt.Errorf(format, args...))
}

func (l *loader) warnf(format string, args ...any) {
	l.warnings = append(l.warnings, fmt.Sprintf(format, args...))
}

// absent reports a key that is missing or explicitly null; both mean "not set".
func absent(raw json.RawMessage) bool {
	return raw == nil || string(raw) == "null"
}

// Describe shows a decoded value in "must be X, got Y" messages: scalars as written (after
// YAML decoding), collections by kind because they can be arbitrarily long. kai-sim's
// scenario errors use it too, so that both files' mistakes read alike.
func Describe(raw json.RawMessage) string {
	switch {
	case len(raw) == 0:
		return "nothing"
	case raw[0] == '{':
		return "a mapping"
	case raw[0] == '[':
		return "a list"
	default:
		return string(raw)
	}
}
