package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/app"
)

func TestHelpListsTheKAIFlags(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"--help"}, &out, &out); code != 0 {
		t.Fatalf("--help exited %d", code)
	}
	for _, flag := range []string{"--scheduler-conf", "--scheduler-name", "--schedule-period", "--leader-elect",
		"--listen-address", "--health-address", "--kubeconfig", "--v", "--dispatch-workers",
		"--nodepool-label-key", "--partition-label-value", "--max-consolidation-preemptees"} {
		if !strings.Contains(out.String(), flag) {
			t.Errorf("--help does not list %s:\n%s", flag, out.String())
		}
	}
}

func TestNegativeDispatchWorkersAreRefused(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"--dispatch-workers=-1"}, &out, &out); code != 2 || !strings.Contains(out.String(), "--dispatch-workers: must be 0 or more") {
		t.Fatalf("exit %d, output %q; want 2 and the flag named", code, out.String())
	}
}

func TestNegativeMaxConsolidationPreempteesAreRefused(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"--max-consolidation-preemptees=-1"}, &out, &out); code != 2 ||
		!strings.Contains(out.String(), "--max-consolidation-preemptees: must be 0 or more, got -1") {
		t.Fatalf("exit %d, output %q; want 2 and the flag named", code, out.String())
	}
}

func TestGPUSharingWithoutAReservationImageIsRefused(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"--gpu-sharing"}, &out, &out); code != 2 ||
		!strings.Contains(out.String(), "--resource-reservation-image is required with --gpu-sharing") {
		t.Fatalf("exit %d, output %q; want 2 and the missing flag named", code, out.String())
	}
}

func TestGPUSharingWithBindsWithinTheCycleIsRefused(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"--gpu-sharing", "--resource-reservation-image=r:1", "--dispatch-workers=0"}, &out, &out); code != 2 ||
		!strings.Contains(out.String(), "--dispatch-workers=0 cannot run with --gpu-sharing") {
		t.Fatalf("exit %d, output %q; want 2 and both flags named", code, out.String())
	}
}

func TestBadFlagIsAUsageError(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"--schedule-period=soon"}, &out, &out); code != 2 {
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
	if code := run([]string{"--scheduler-conf", path, "--kubeconfig", "/nonexistent"}, &out, &out); code != 1 {
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

func TestCheckConfigReportsWithoutConnecting(t *testing.T) {
	var out, errs bytes.Buffer
	config := filepath.Join("..", "..", "pkg", "scheduler", "conf", "testdata", "upstream-minruntime-doc.yaml")
	// No cluster is reachable here: check-config must not try.
	if code := run([]string{"check-config", "--scheduler-conf", config, "--kubeconfig", "/nonexistent"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errs.String())
	}
	for _, want := range []string{
		"Actions, in order: allocate, consolidation (maxConsolidationPreemptees=16), preempt, stalegangeviction (globalDefaultStalenessGracePeriod=1m0s)\n",
		"  minruntime: defaultPreemptMinRuntime=10m0s defaultReclaimMinRuntime=10m0s reclaimResolveMethod=lca\n",
		`actions: not set; running upstream KAI-Scheduler's default actions "allocate, consolidation, reclaim, preempt, stalegangeviction"`,
		`action "reclaim" is skipped: it needs the proportion plugin`,
		"kai-scheduler would start with this configuration.",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	// Consolidation is implemented: upstream's defaults run it, without a warning.
	if strings.Contains(out.String(), `action "consolidation" is`) {
		t.Errorf("report still warns about consolidation:\n%s", out.String())
	}
	// The report is of the scheduler as the flags would run it.
	out.Reset()
	if code := run([]string{"check-config", "--scheduler-conf", config, "--max-consolidation-preemptees", "3"}, &out, &errs); code != 0 ||
		!strings.Contains(out.String(), "consolidation (maxConsolidationPreemptees=3)") {
		t.Errorf("exit %d; the report does not show the flag's limit:\n%s", code, out.String())
	}

	// Misplaced, the subcommand must not start a scheduler.
	errs.Reset()
	if code := run([]string{"--scheduler-conf", config, "check-config"}, &out, &errs); code != 2 || !strings.Contains(errs.String(), `unexpected argument "check-config"`) {
		t.Fatalf("exit %d, stderr %q; want 2 and the argument named", code, errs.String())
	}
	out.Reset()

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("actions: alocate\ntiers:\n- plugins:\n  - name: minruntime\n    arguments: {defaultReclaimMinRuntime: \"-1m\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := run([]string{"check-config", "--scheduler-conf", bad}, &out, &errs); code != 1 {
		t.Fatalf("exit %d for a configuration the scheduler refuses:\n%s", code, out.String())
	}
	for _, want := range []string{
		"Refused:\n  actions: unknown action \"alocate\"",
		"  tiers[0].plugins[0].arguments (plugin minruntime): defaultReclaimMinRuntime: must not be negative",
		"kai-scheduler would not start with this configuration.",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestEachPoolHasItsOwnLease(t *testing.T) {
	opts := app.DefaultOptions()
	opts.PartitionLabelValue = "a100"
	if err := applyPool(&opts, false); err != nil || opts.LeaderElectionID != "kai-scheduler-a100" {
		t.Fatalf("Lease %q, error %v; want kai-scheduler-a100", opts.LeaderElectionID, err)
	}
	opts = app.DefaultOptions()
	opts.PartitionLabelValue, opts.LeaderElectionID = "a100", "mine"
	if err := applyPool(&opts, true); err != nil || opts.LeaderElectionID != "mine" {
		t.Fatalf("Lease %q, error %v; a Lease named by flag is kept", opts.LeaderElectionID, err)
	}
	opts = app.DefaultOptions()
	if err := applyPool(&opts, false); err != nil || opts.LeaderElectionID != "kai-scheduler" {
		t.Fatalf("Lease %q, error %v; the default pool keeps the default Lease", opts.LeaderElectionID, err)
	}
	opts = app.DefaultOptions()
	opts.PartitionLabelValue = "GPU_pool"
	if err := applyPool(&opts, false); err == nil || !strings.Contains(err.Error(), "give one with --leader-elect-id") {
		t.Fatalf("error %v; a pool name that cannot name a Lease must be refused, asking for --leader-elect-id", err)
	}
	opts = app.DefaultOptions()
	opts.PartitionLabelValue, opts.LeaderElectionID = "GPU_pool", "gpu-pool"
	if err := applyPool(&opts, true); err != nil {
		t.Fatalf("with --leader-elect-id any pool name is fine: %v", err)
	}
	var out bytes.Buffer
	if code := run([]string{"--nodepool-label-key=", "--partition-label-value=a100"}, &out, &out); code != 2 ||
		!strings.Contains(out.String(), "--partition-label-value: needs --nodepool-label-key") {
		t.Fatalf("exit %d, output %q; want 2 and both flags named", code, out.String())
	}
}

// The ConfigMap to post configuration events on, and the pod grouper's defaults ConfigMap, are
// named as [NAMESPACE/]NAME; anything that cannot name one stops the start, naming the flag,
// before anything connects.
func TestConfigMapFlag(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "kai-system")
	for value, want := range map[string]string{"kai-config": "kai-system/kai-config", "ops/sched.conf": "ops/sched.conf"} {
		key, err := app.ParseConfigMap(value)
		if err != nil || key.String() != want {
			t.Errorf("%q: %v, %v; want %s", value, key, err, want)
		}
	}
	for _, flag := range []string{"--scheduler-conf-configmap", "--podgrouper-defaults-configmap"} {
		for _, value := range []string{"Kai_Config", "a/b/c", "/kai-config"} {
			var out bytes.Buffer
			if code := run([]string{flag + "=" + value}, &out, &out); code != 2 || !strings.Contains(out.String(), flag+": ") {
				t.Errorf("%s=%q: exit %d, output %q; want 2 and the flag named", flag, value, code, out.String())
			}
		}
	}
}

// --version prints what the binary is on stdout and exits 0 without connecting anywhere, even
// beside a configuration that would not load.
func TestVersionPrintsAndExits(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--version", "--scheduler-conf=/does/not/exist"}, &stdout, &stderr); code != 0 {
		t.Fatalf("--version exited %d: %s", code, stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), "kai-scheduler ") || !strings.Contains(stdout.String(), "(commit ") {
		t.Errorf("--version printed %q", stdout.String())
	}
}
