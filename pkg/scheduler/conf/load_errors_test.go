package conf

import (
	"strings"
	"testing"
)

// TestLoadErrors checks the message users see for each mistake. wantErrs lists every error
// expected, so no case may add a follow-up error about the same mistake.
func TestLoadErrors(t *testing.T) {
	const plugins = "\ntiers:\n- plugins:\n  - name: priority\n"
	cases := []struct {
		name, doc    string
		wantErrs     []string
		wantWarnings []string
	}{
		{"unknown action", `actions: "allocate, alocate"`,
			[]string{`actions: unknown action "alocate" (known: allocate, consolidation, preempt, reclaim, stalegangeviction)`}, nil},
		{"duplicate action", `actions: "allocate, reclaim, allocate"`,
			[]string{`actions: duplicate action "allocate"`}, nil},
		{"empty action entry", `actions: "allocate,,reclaim"`,
			[]string{`actions: entry 2 of "allocate,,reclaim" is empty`}, nil},
		{"trailing comma", `actions: "allocate,"`,
			[]string{`actions: entry 2 of "allocate," is empty`}, nil},
		{"blank actions", `actions: "  "` + plugins, []string{"actions: must not be empty"}, nil},
		{"empty document", "", []string{"the configuration is empty; write actions and tiers, or pass no file for the built-in default"}, nil},
		{"comments only", "# actions: allocate\n", []string{"the configuration is empty; write actions and tiers, or pass no file for the built-in default"}, nil},
		{"actions as a list", "actions: [allocate]",
			[]string{"actions: must be a comma-separated string, got a list"}, nil},
		{"unknown plugin", "actions: allocate\ntiers:\n- plugins:\n  - name: priority\n  - name: minrutime\n",
			[]string{`tiers[0].plugins[1].name: unknown plugin "minrutime" ` + knownPluginsHint}, nil},
		{"duplicate plugin across tiers", "actions: allocate\ntiers:\n- plugins:\n  - name: priority\n- plugins:\n  - name: predicates\n  - name: priority\n",
			[]string{`tiers[1].plugins[1].name: duplicate plugin "priority", already listed at tiers[0].plugins[0]`}, nil},
		{"duplicate unimplemented plugin", "actions: allocate\ntiers:\n- plugins:\n  - name: elastic\n  - name: elastic\n",
			[]string{`tiers[0].plugins[1].name: duplicate plugin "elastic", already listed at tiers[0].plugins[0]`},
			[]string{`tiers[0].plugins[0]: plugin "elastic" is a KAI-Scheduler plugin`}},
		{"empty and missing plugin names", "actions: allocate\ntiers:\n- plugins:\n  - name: \"\"\n  - name: priority\n  - arguments: {a: b}\n",
			[]string{"tiers[0].plugins[0].name: must not be empty", "tiers[0].plugins[2].name: must not be empty"}, nil},
		{"plugin name not a string", "actions: allocate\ntiers:\n- plugins:\n  - name: 12\n",
			[]string{"tiers[0].plugins[0].name: must be a string, got 12"}, nil},
		{"unknown plugin field", "actions: allocate\ntiers:\n- plugins:\n  - name: priority\n  - name: minruntime\n    argumens: {a: b}\n",
			[]string{`tiers[0].plugins[1]: unknown field "argumens"`}, nil},
		{"unknown tier field", "actions: allocate\ntiers:\n- plugin:\n  - name: priority\n",
			[]string{`tiers[0]: unknown field "plugin"`}, nil},
		{"plugin written as a string", "actions: allocate\ntiers:\n- plugins:\n  - priority\n",
			[]string{`tiers[0].plugins[0]: must be a mapping with a name, got "priority"`}, nil},
		{"unquoted argument", "actions: allocate\ntiers:\n- plugins:\n  - name: minruntime\n    arguments: {kValue: 1.50, ok: \"x\", enabled: yes}\n",
			[]string{"tiers[0].plugins[0].arguments.enabled: must be a string (write it in quotes), got true",
				"tiers[0].plugins[0].arguments.kValue: must be a string (write it in quotes), got 1.5"}, nil},
		{"arguments not a mapping", "actions: allocate\ntiers:\n- plugins:\n  - name: minruntime\n    arguments: [a]\n",
			[]string{"tiers[0].plugins[0].arguments: must be a mapping of strings, got a list"}, nil},
		{"tiers not a list", "actions: allocate\ntiers: {plugins: []}\n",
			[]string{"tiers: must be a list, got a mapping"}, nil},
		{"plugins not a list", "actions: allocate\ntiers:\n- plugins: priority\n",
			[]string{`tiers[0].plugins: must be a list, got "priority"`}, nil},
		{"not a mapping", "- allocate\n",
			[]string{"the configuration must be a mapping with actions and tiers, got a list"}, nil},
		{"malformed YAML", "actions: [allocate\n", []string{"invalid YAML: yaml: line 1"}, nil},
		{"duplicate YAML key", "actions: allocate\nactions: reclaim\n",
			[]string{"invalid YAML: yaml: unmarshal errors:\n  line 2: key \"actions\" already set"}, nil},
		{"every error at once", `
actions: "allocate, alocate, allocate"
queueDepthPerAction: {allocate: 10}
tiers:
- plugins:
  - name: minrutime
  - name: ""
  - name: minruntime
    argumens: {defaultReclaimMinRuntime: "10m"}
  - name: elastic
`, []string{
			`actions: unknown action "alocate"`,
			`actions: duplicate action "allocate"`,
			`tiers[0].plugins[0].name: unknown plugin "minrutime"`,
			`tiers[0].plugins[1].name: must not be empty`,
			`tiers[0].plugins[2]: unknown field "argumens"`,
		}, []string{`unknown key "queueDepthPerAction" ignored`, `plugin "elastic" is a KAI-Scheduler plugin`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			config, warnings, err := Load([]byte(tc.doc), testKnown)
			if err == nil || config != nil {
				t.Fatalf("Load = %+v, %v; want an error and no config", config, err)
			}
			expectMessages(t, "error", splitJoined(err), tc.wantErrs)
			expectMessages(t, "warning", warnings, tc.wantWarnings)
		})
	}
}

// splitJoined returns the messages of an errors.Join result, one per error found.
func splitJoined(err error) []string {
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []string{err.Error()}
	}
	var messages []string
	for _, e := range joined.Unwrap() {
		messages = append(messages, e.Error())
	}
	return messages
}

// expectMessages checks that got has one message per want, each containing its want text.
func expectMessages(t *testing.T, kind string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d %ss, want %d:\n%s", len(got), kind, len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("%s %d = %q, want it to contain %q", kind, i, got[i], want[i])
		}
	}
}

func TestLoadUnknownTopLevelKeyIsOnlyAWarning(t *testing.T) {
	config, warnings, err := Load([]byte("actions: allocate\nusageDBConfig: {}\nqueueDepthPerAction: {allocate: 10}\n"), testKnown)
	if err != nil || config == nil {
		t.Fatalf("Load: %v", err)
	}
	expectMessages(t, "warning", warnings, []string{
		`unknown key "queueDepthPerAction" ignored`, `unknown key "usageDBConfig" ignored`})
}
