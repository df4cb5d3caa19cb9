package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestHelpListsTheKAIFlags(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"--help"}, &out); code != 0 {
		t.Fatalf("--help exited %d", code)
	}
	for _, flag := range []string{"--scheduler-conf", "--scheduler-name", "--schedule-period", "--leader-elect",
		"--listen-address", "--health-address", "--kubeconfig", "--v", "--dispatch-workers"} {
		if !strings.Contains(out.String(), flag) {
			t.Errorf("--help does not list %s:\n%s", flag, out.String())
		}
	}
}

func TestNegativeDispatchWorkersAreRefused(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"--dispatch-workers=-1"}, &out); code != 2 || !strings.Contains(out.String(), "--dispatch-workers: must be 0 or more") {
		t.Fatalf("exit %d, output %q; want 2 and the flag named", code, out.String())
	}
}

func TestBadFlagIsAUsageError(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"--schedule-period=soon"}, &out); code != 2 {
		t.Fatalf("exit code %d, want 2", code)
	}
	if !strings.Contains(out.String(), "schedule-period") {
		t.Errorf("the error does not name the flag: %s", out.String())
	}
}

// A broken configuration file stops the start with an error naming the problem; it is
// loaded before anything connects to a cluster.
func TestBrokenConfigurationIsAStartupError(t *testing.T) {
	path := t.TempDir() + "/scheduler.yaml"
	if err := writeFile(path, "actions: allocate\ntiers:\n- plugins:\n  - name: minruntime\n    arguments: {defaultReclaimMinRuntime: \"-5m\"}\n"); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := run([]string{"--scheduler-conf", path, "--kubeconfig", "/nonexistent"}, &out); code != 1 {
		t.Fatalf("exit code %d, want 1", code)
	}
	want := `tiers[0].plugins[0].arguments (plugin minruntime): defaultReclaimMinRuntime: must not be negative, got "-5m"`
	if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), path) {
		t.Errorf("output does not name the file and the argument:\n%s", out.String())
	}
}

func writeFile(path, text string) error {
	return os.WriteFile(path, []byte(text), 0o600)
}
