package scheduler

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestDefaultPolicy(t *testing.T) {
	policy, warnings, err := LoadPolicy(nil)
	if err != nil || len(warnings) > 0 {
		t.Fatalf("default policy: warnings %q, error %v", warnings, err)
	}
	var actions []string
	for _, a := range policy.Actions {
		actions = append(actions, string(a.Name()))
	}
	if got := strings.Join(actions, ","); got != "allocate,reclaim,preempt" {
		t.Fatalf("default actions = %s", got)
	}
	var names []string
	for _, p := range policy.Plugins {
		names = append(names, p.Name())
	}
	if got := strings.Join(names, ","); got != "priority,proportion,minruntime,predicates,nodeplacement" {
		t.Fatalf("default plugins = %s", got)
	}
}

// TestPolicyErrorsNameTheProblem checks that every mistake an operator can make in the file
// stops the start with an error naming the key and the value.
func TestPolicyErrorsNameTheProblem(t *testing.T) {
	tests := []struct {
		name   string
		config string
		want   []string
	}{
		{"unknown action", "actions: allocate, reclam\n",
			[]string{`actions: unknown action "reclam"`}},
		{"unknown plugin", "actions: allocate\ntiers:\n- plugins:\n  - name: priorty\n",
			[]string{`tiers[0].plugins[0].name: unknown plugin "priorty"`, "nodeplacement, predicates, priority, proportion"}},
		{"bad plugin argument value", "actions: allocate\ntiers:\n- plugins:\n  - name: nodeplacement\n    arguments: {gpu: pack}\n",
			[]string{`tiers[0].plugins[0].arguments (plugin nodeplacement): gpu: must be "binpack", "spread" or "fragmentation", got "pack"`}},
		{"unknown plugin argument", "actions: allocate\ntiers:\n- plugins:\n  - name: nodeplacement\n    arguments: {gpus: spread}\n",
			[]string{`tiers[0].plugins[0].arguments (plugin nodeplacement): unknown argument "gpus"`}},
		{"argument to a plugin that takes none", "actions: allocate\ntiers:\n- plugins:\n  - name: priority\n    arguments: {weight: \"2\"}\n",
			[]string{"tiers[0].plugins[0].arguments (plugin priority): takes no arguments, got weight"}},
		{"several mistakes at once", "actions: allocate, bogus\ntiers:\n- plugins:\n  - name: nope\n",
			[]string{`unknown action "bogus"`, `unknown plugin "nope"`}},
		{"mistakes in names and in every argument at once",
			"actions: allocate, bogus\ntiers:\n- plugins:\n  - name: minruntime\n    arguments: {defaultPreemptMinRuntime: -5m, defaultReclaimMinRuntime: 1x, reclaimResolveMethod: up}\n  - name: nope\n",
			[]string{`unknown action "bogus"`, `unknown plugin "nope"`,
				`tiers[0].plugins[0].arguments (plugin minruntime): defaultPreemptMinRuntime: must not be negative, got "-5m"`,
				`tiers[0].plugins[0].arguments (plugin minruntime): defaultReclaimMinRuntime: invalid duration "1x"`,
				`tiers[0].plugins[0].arguments (plugin minruntime): reclaimResolveMethod: must be "lca" or "queue", got "up"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := LoadPolicy([]byte(tt.config))
			if err == nil {
				t.Fatal("the configuration was accepted")
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
}

func TestUpstreamConfigurationStillStarts(t *testing.T) {
	policy, warnings, err := LoadPolicy([]byte(`
actions: "allocate, consolidation, reclaim, preempt, stalegangeviction"
tiers:
- plugins:
  - name: predicates
  - name: proportion
  - name: priority
  - name: elastic
  - name: nodeplacement
    arguments: {gpu: binpack, cpu: spread}
`))
	if err != nil {
		t.Fatalf("an upstream KAI configuration must still start: %v", err)
	}
	// Every upstream action runs, consolidation included; only elastic is skipped.
	if len(warnings) != 1 || !strings.Contains(warnings[0], `plugin "elastic" is a KAI-Scheduler plugin this scheduler does not implement`) {
		t.Fatalf("warnings = %q, want only the unimplemented plugin elastic's", warnings)
	}
	if got := strings.Join(policy.ActionSettings(), ", "); got != "allocate, consolidation (maxConsolidationPreemptees=16), reclaim, preempt, stalegangeviction (globalDefaultStalenessGracePeriod=1m0s)" {
		t.Fatalf("actions = %s, want upstream's five in its order", got)
	}
	if len(policy.Plugins) != 4 {
		t.Fatalf("plugins = %d, want predicates, proportion, priority, nodeplacement", len(policy.Plugins))
	}
}

// TestUpstreamDocumentationSnippetStarts loads the configuration of upstream's minruntime
// documentation as written: no actions (upstream's defaults run, consolidation included) and
// only the minruntime plugin. Reclaim is skipped with a warning: without proportion's fair
// shares nothing would stop two queues from reclaiming from each other in turn.
func TestUpstreamDocumentationSnippetStarts(t *testing.T) {
	data, err := os.ReadFile("conf/testdata/upstream-minruntime-doc.yaml")
	if err != nil {
		t.Fatal(err)
	}
	policy, warnings, err := LoadPolicy(data)
	if err != nil {
		t.Fatalf("the snippet of upstream's documentation must start: %v", err)
	}
	var actions []string
	for _, a := range policy.Actions {
		actions = append(actions, string(a.Name()))
	}
	if got := strings.Join(actions, ","); got != "allocate,consolidation,preempt,stalegangeviction" {
		t.Fatalf("actions = %s, want allocate,consolidation,preempt,stalegangeviction", got)
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0], "actions: not set; running upstream KAI-Scheduler's default actions") ||
		!strings.Contains(warnings[1], `action "reclaim" is skipped: it needs the proportion plugin`) {
		t.Fatalf("warnings = %q, want the default actions and reclaim's missing plugin", warnings)
	}
	if len(policy.Plugins) != 1 || policy.Plugins[0].Name() != "minruntime" {
		t.Fatalf("plugins = %v, want minruntime", policy.Plugins)
	}
}

func TestReclaimWithoutProportionAloneIsRefused(t *testing.T) {
	_, _, err := LoadPolicy([]byte("actions: reclaim\ntiers:\n- plugins:\n  - name: minruntime\n"))
	if err == nil || !strings.Contains(err.Error(), "actions: none of reclaim can run with the plugins listed") {
		t.Fatalf("error = %v, want that no action can run", err)
	}
}

// TestMaxConsolidationPreempteesReachesTheAction: the flag's value is what the consolidation
// action runs with, and a policy without consolidation is left alone.
func TestMaxConsolidationPreempteesReachesTheAction(t *testing.T) {
	policy, warnings, err := LoadPolicy([]byte("actions: allocate, consolidation\ntiers:\n- plugins:\n  - name: priority\n"))
	if err != nil || len(warnings) > 0 {
		t.Fatalf("LoadPolicy: warnings %q, error %v", warnings, err)
	}
	if got := strings.Join(policy.ActionSettings(), ", "); got != "allocate, consolidation (maxConsolidationPreemptees=16)" {
		t.Fatalf("actions = %s, want consolidation's default of 16", got)
	}
	for _, n := range []int{3, 0} {
		policy.SetMaxConsolidationPreemptees(n)
		want := fmt.Sprintf("allocate, consolidation (maxConsolidationPreemptees=%d)", n)
		if got := strings.Join(policy.ActionSettings(), ", "); got != want {
			t.Fatalf("after setting %d: actions = %s, want %s", n, got, want)
		}
	}
	without, _, err := LoadPolicy(nil)
	if err != nil {
		t.Fatal(err)
	}
	without.SetMaxConsolidationPreemptees(3)
	if got := strings.Join(without.ActionSettings(), ", "); got != "allocate, reclaim, preempt" {
		t.Fatalf("default actions = %s after setting consolidation's limit", got)
	}
}
