package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
)

// A small cluster prints the table with a column per strategy asked for and a row per level,
// and writes the mix as a scenario kai-sim reads.
func TestTheTableAndTheScenario(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mix.yaml")
	var out, errs bytes.Buffer
	if code := run([]string{"-nodes", "10", "-strategies", "binpack,spread", "-write", path}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	table := out.String()
	for _, want := range []string{"GPU-sharing mix: 10 nodes, 58 GPUs, seed 1;", "binpack   spread", "GPUs allocated at 110% arrived",
		"GPUs stranded at 130% arrived", "pods never started", "wall time", "CPU time"} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "fragmentation") {
		t.Errorf("a strategy not asked for was run:\n%s", table)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := input.Parse(data); err != nil {
		t.Fatalf("the written mix is no scenario: %v", err)
	}
}

// A strategy the nodeplacement plugin does not know is named before anything runs.
func TestAnUnknownStrategyIsRefused(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run([]string{"-strategies", "binpack,bestfit"}, &out, &errs); code != 2 ||
		!strings.Contains(errs.String(), `unknown strategy "bestfit" (want binpack, spread, fragmentation)`) {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
}
