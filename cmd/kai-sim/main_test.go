package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuiltinComparisonIsTheDefault(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run(nil, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	for _, want := range []string{"without min-runtime", "reclaimMinRuntime 45m0s", "wasted GPU-hours", "prod mean wait for quota"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestScenarioFileAsJSONWithPlot(t *testing.T) {
	plot := filepath.Join(t.TempDir(), "gpus.svg")
	var out, errs bytes.Buffer
	scenario := filepath.Join("..", "..", "docs", "examples", "sim", "preempt-tree.yaml")
	if code := run([]string{"--output", "json", "--plot", plot, scenario}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	var result struct {
		Events []map[string]any `json:"events"`
		Jobs   []map[string]any `json:"jobs"`
	}
	if err := json.Unmarshal(out.Bytes(), &result); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if len(result.Jobs) != 4 || len(result.Events) == 0 {
		t.Fatalf("jobs %d, events %d", len(result.Jobs), len(result.Events))
	}
	svg, err := os.ReadFile(plot)
	if err != nil || !bytes.Contains(svg, []byte("<svg")) || !bytes.Contains(svg, []byte("fill=\"red\"")) {
		t.Fatalf("the plot is missing or marks no eviction: %v", err)
	}
}

func TestBadScenarioNamesTheDocument(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, []byte("apiVersion: v1\nkind: Node\nmetadata: {name: gpu-1}\nspec: {unschedulabel: true}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	if code := run([]string{path}, &out, &errs); code != 1 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(errs.String(), "document 1 (Node gpu-1)") || !strings.Contains(errs.String(), "unschedulabel") {
		t.Fatalf("error does not name the document and field: %s", errs.String())
	}
}

func TestFlagsThatCannotBeRightAreRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--schedule-period", "0s", "x.yaml"}, "--schedule-period: must be positive, got 0s"},
		{[]string{"--schedule-period", "-1s", "x.yaml"}, "--schedule-period: must be positive, got -1s"},
		{[]string{"--until", "-1h", "x.yaml"}, "--until: must not be negative, got -1h0m0s"},
		{[]string{"--bogus"}, "kai-sim: unknown flag: --bogus\nRun 'kai-sim --help' for usage."},
		{[]string{"--until", "1x"}, `kai-sim: invalid argument "1x" for "--until" flag`},
		// Every mistake is told at once.
		{[]string{"--until", "-1h", "--output", "yaml", "a.yaml", "b.yaml"},
			"kai-sim: --until: must not be negative, got -1h0m0s\nkai-sim: --output: must be text or json, got \"yaml\"\nkai-sim: at most one scenario file, got 2"},
	} {
		var out, errs bytes.Buffer
		if code := run(tc.args, &out, &errs); code != 2 || !strings.Contains(errs.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errs.String(), tc.want)
		}
	}
}
