package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestBuiltinComparisonIsTheDefault(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run(nil, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	for _, want := range []string{"without min-runtime", "reclaimMinRuntime 45m0s", "wasted GPU-hours", "mean wait, prod", "difference"} {
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
	// The scenario's two nodes of 2 GPUs each: the line the queues' bands are read against.
	if !bytes.Contains(svg, []byte(">capacity 4 GPUs</text>")) || !bytes.Contains(svg, []byte("GPU capacity of the cluster's nodes")) {
		t.Errorf("the plot has no labelled capacity line:\n%s", svg)
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
		{[]string{"--max-consolidation-preemptees", "-1", "x.yaml"}, "kai-sim: --max-consolidation-preemptees: must be 0 or more, got -1"},
		{[]string{"--bogus"}, "kai-sim: unknown flag: --bogus\nRun 'kai-sim --help' for usage."},
		{[]string{"--until", "1x"}, `kai-sim: invalid argument "1x" for "--until" flag`},
		// Every mistake is told at once.
		{[]string{"--until", "-1h", "--output", "yaml", "a.yaml", "b.yaml"},
			"kai-sim: --until: must not be negative, got -1h0m0s\nkai-sim: --output: must be text or json, got \"yaml\"\nkai-sim: at most one scenario file, got 2"},
		{[]string{"--pool-conf", "a100", "x.yaml"}, `kai-sim: --pool-conf: want POOL=FILE, got "a100"`},
		{[]string{"--pool-conf", "=f.yaml", "x.yaml"}, `kai-sim: --pool-conf: want POOL=FILE, got "=f.yaml"`},
		{[]string{"--pool-conf", "a=1.yaml", "--pool-conf", "a=2.yaml", "x.yaml"}, `kai-sim: --pool-conf: pool "a" is given twice (1.yaml and 2.yaml)`},
		{[]string{"--nodepool-label-key", "", "--pool-conf", "a=1.yaml", "x.yaml"}, "kai-sim: --pool-conf: needs --nodepool-label-key, which is empty"},
		{[]string{"--repeat-pending", "6/h", "x.yaml"}, "kai-sim: --repeat-pending: needs --until, or copies would be submitted forever"},
		{[]string{"--repeat-pending", "6", "--until", "1h", "x.yaml"}, `kai-sim: --repeat-pending: want N/DURATION such as 6/h or 1/30m, got "6": no /`},
		{[]string{"--repeat-pending", "0/h", "--until", "1h", "x.yaml"}, `kai-sim: --repeat-pending: want N/DURATION such as 6/h or 1/30m, got "0/h": N must be a positive integer`},
		{[]string{"--repeat-pending", "6/1x", "--until", "1h", "x.yaml"}, `kai-sim: --repeat-pending: want N/DURATION such as 6/h or 1/30m, got "6/1x": invalid duration "1x"`},
		{[]string{"--arrivals", "a.yaml"}, "kai-sim: --arrivals and --repeat-pending add jobs to a scenario file, and none is given"},
		{[]string{"--compare", "c.yaml", "--compare-scenario", "b.yaml", "a.yaml"}, "kai-sim: --compare and --compare-scenario: give one (a comparison has two runs)"},
		{[]string{"--compare-scenario", "b.yaml"}, "kai-sim: --compare-scenario compares with a scenario file, and none is given"},
	} {
		var out, errs bytes.Buffer
		if code := run(tc.args, &out, &errs); code != 2 || !strings.Contains(errs.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errs.String(), tc.want)
		}
	}
}

// A misspelt simulation annotation stops the run with the object, its line and the key meant:
// "durration" once left the job running forever and the run ended at 0:00:01 without a word.
func TestMisspeltSimulationAnnotationIsRefused(t *testing.T) {
	scenario, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", "sim", "preempt-tree.yaml"))
	if err != nil || !bytes.Contains(scenario, []byte("sim.kai.scheduler/duration")) {
		t.Fatalf("the example sets no duration to misspell: %v", err)
	}
	path := filepath.Join(t.TempDir(), "typo.yaml")
	if err := os.WriteFile(path, bytes.Replace(scenario, []byte("sim.kai.scheduler/duration"), []byte("sim.kai.scheduler/durration"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	if code := run([]string{path}, &out, &errs); code != 1 || out.Len() > 0 {
		t.Fatalf("exit %d, output %q: a misspelt annotation must stop the run", code, out.String())
	}
	want := regexp.MustCompile(`^kai-sim: \S+typo\.yaml: document \d+ \(PodGroup \S+\): line \d+: metadata\.annotations\.sim\.kai\.scheduler/durration: ` +
		`kai-sim has no such annotation; did you mean sim\.kai\.scheduler/duration\?`)
	if !want.MatchString(errs.String()) {
		t.Fatalf("stderr does not name the object, line and the annotation meant:\n%s", errs.String())
	}
}

// When every queue of the scenario sets its own reclaimMinRuntime, a configuration with
// another defaultReclaimMinRuntime changes nothing: the comparison says why its columns are
// identical, queue by queue, rather than leave the default looking ineffective.
func TestCompareSaysWhenQueuesOutweighTheComparedDefault(t *testing.T) {
	scenario, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", "sim", "reclaim-promise.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	other := filepath.Join(dir, "reclaim-10m.yaml")
	if err := os.WriteFile(other, []byte(tenMinuteDefaults), 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(name string, a, b string) string {
		text := strings.Replace(string(scenario), "metadata: {name: a}\nspec:\n", "metadata: {name: a}\nspec:\n"+a, 1)
		text = strings.Replace(text, "metadata: {name: b}\nspec:\n", "metadata: {name: b}\nspec:\n"+b, 1)
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	compare := func(path string) string {
		var out, errs bytes.Buffer
		if code := run([]string{"--compare", other, path}, &out, &errs); code != 0 {
			t.Fatalf("exit %d: %s", code, errs.String())
		}
		return out.String()
	}
	compared := "the compared defaultReclaimMinRuntime (0s under built-in configuration, 10m0s under " + other + ")"
	out := compare(write("own.yaml", "  reclaimMinRuntime: 20m\n", "  reclaimMinRuntime: 5m\n"))
	for _, want := range []string{
		"\nNotes\n",
		"  queue a sets its own reclaimMinRuntime (20m0s), which outweighs " + compared + ".\n",
		"  queue b sets its own reclaimMinRuntime (5m0s), which outweighs " + compared + ".\n",
		"  No job gets " + compared + ": the queues' own values outweigh it, so it changes nothing here.\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the comparison lacks %q:\n%s", want, out)
		}
	}
	// No queue sets a preemptMinRuntime: that compared default reaches the jobs, and no note
	// claims otherwise.
	if strings.Contains(out, "preemptMinRuntime") {
		t.Errorf("a note about a default the jobs do get:\n%s", out)
	}
	// Where one queue takes the default, only the queue that sets its own is named, and
	// the default is not said to change nothing.
	out = compare(write("one.yaml", "  reclaimMinRuntime: 20m\n", ""))
	if !strings.Contains(out, "queue a sets its own reclaimMinRuntime (20m0s)") || strings.Contains(out, "queue b sets") ||
		strings.Contains(out, "No job gets") {
		t.Errorf("the notes do not name queue a alone:\n%s", out)
	}
}

// TestUpstreamConfigurationIsRunWithItsWarnings runs a scenario under the configuration of
// upstream's minruntime documentation: it has no actions, so upstream's defaults run, all of
// them implemented (consolidation too), and what the file leaves out (the actions, and the
// proportion plugin reclaim needs) is named on stderr and in the JSON.
func TestUpstreamConfigurationIsRunWithItsWarnings(t *testing.T) {
	config := filepath.Join("..", "..", "pkg", "scheduler", "conf", "testdata", "upstream-minruntime-doc.yaml")
	scenario := filepath.Join("..", "..", "docs", "examples", "sim", "preempt-tree.yaml")
	var out, errs bytes.Buffer
	if code := run([]string{"--scheduler-conf", config, "--output", "json", scenario}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	for _, want := range []string{
		"kai-sim: warning: " + config + `: actions: not set; running upstream KAI-Scheduler's default actions`,
		"kai-sim: warning: " + config + `: action "reclaim" is skipped: it needs the proportion plugin`,
	} {
		if !strings.Contains(errs.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs.String())
		}
	}
	if strings.Contains(errs.String(), `action "consolidation"`) {
		t.Errorf("stderr warns about consolidation, which runs:\n%s", errs.String())
	}
	var result struct {
		ConfigWarnings []string `json:"configWarnings"`
	}
	if err := json.Unmarshal(out.Bytes(), &result); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if len(result.ConfigWarnings) != 2 || !strings.Contains(result.ConfigWarnings[0], "actions: not set") ||
		!strings.Contains(result.ConfigWarnings[1], `action "reclaim" is skipped`) {
		t.Fatalf("configWarnings %q, want the two of the configuration", result.ConfigWarnings)
	}
}

// TestMaxConsolidationPreempteesFromTheCommandLine runs the consolidation example: a training
// is moved for the 4-GPU job by default and with a limit of 1, and
// --max-consolidation-preemptees 0 turns the action off, so the job waits for a completion.
func TestMaxConsolidationPreempteesFromTheCommandLine(t *testing.T) {
	examples := filepath.Join("..", "..", "docs", "examples", "sim")
	config, scenario := filepath.Join(examples, "consolidation.conf.yaml"), filepath.Join(examples, "consolidation.yaml")
	for _, tc := range []struct {
		flags []string
		moved bool
	}{
		{nil, true},
		{[]string{"--max-consolidation-preemptees", "1"}, true},
		{[]string{"--max-consolidation-preemptees", "0"}, false},
	} {
		var out, errs bytes.Buffer
		args := append(append([]string{"--scheduler-conf", config}, tc.flags...), scenario)
		if code := run(args, &out, &errs); code != 0 || errs.Len() > 0 {
			t.Fatalf("%v: exit %d: %s", tc.flags, code, errs.String())
		}
		if moved := strings.Contains(out.String(), "consolidation on node-"); moved != tc.moved {
			t.Errorf("%v: a job moved by consolidation: %v, want %v:\n%s", tc.flags, moved, tc.moved, out.String())
		}
		// Moved, the big job starts once the protection ends; not, when the 3-hour trainings complete.
		if bound := strings.Contains(out.String(), "3:00:01  Bind      team/big"); bound == tc.moved {
			t.Errorf("%v: the big job waits for the trainings to complete: %v, want %v:\n%s", tc.flags, bound, !tc.moved, out.String())
		}
	}
}

func TestBadConfigurationStopsBeforeTheScenario(t *testing.T) {
	config := filepath.Join(t.TempDir(), "conf.yaml")
	if err := os.WriteFile(config, []byte("actions: alocate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	if code := run([]string{"--scheduler-conf", config, "no-such-scenario.yaml"}, &out, &errs); code != 1 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	if !strings.Contains(errs.String(), `actions: unknown action "alocate"`) || strings.Contains(errs.String(), "no-such-scenario") {
		t.Fatalf("want the configuration's mistake, before the scenario is read: %s", errs.String())
	}
}

// TestNodePoolsFromTheCommandLine runs the node-pools example as its comment says: each
// pool's table row and settings are shown, and a pool configuration's warnings name its file.
func TestNodePoolsFromTheCommandLine(t *testing.T) {
	examples := filepath.Join("..", "..", "docs", "examples", "sim")
	upstream := filepath.Join("..", "..", "pkg", "scheduler", "conf", "testdata", "upstream-minruntime-doc.yaml")
	var out, errs bytes.Buffer
	args := []string{"--pool-conf", "a100=" + filepath.Join(examples, "node-pools.a100.conf.yaml"), "--pool-conf", "h100=" + upstream,
		filepath.Join(examples, "node-pools.yaml")}
	if code := run(args, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	for _, want := range []string{
		"Node pools, one scheduler each",
		"a100: minruntime: defaultPreemptMinRuntime=0s defaultReclaimMinRuntime=1h0m0s",
		`h100: configuration warning: action "reclaim" is skipped: it needs the proportion plugin`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if want := "kai-sim: warning: " + upstream + ": actions: not set"; !strings.Contains(errs.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, errs.String())
	}
	if strings.Contains(out.String(), "a100: configuration warning") {
		t.Errorf("pool a100's configuration has no warning, yet one is shown:\n%s", out.String())
	}
	// The built-in comparison brings its own configurations.
	out.Reset()
	errs.Reset()
	if code := run([]string{"--pool-conf", "a100=" + filepath.Join(examples, "node-pools.a100.conf.yaml")}, &out, &errs); code != 1 ||
		!strings.Contains(errs.String(), "--pool-conf and --compare need a scenario file") {
		t.Errorf("exit %d, stderr %q: want the pool configuration refused without a scenario", code, errs.String())
	}
}

// --compare runs every example scenario under the current and another configuration and
// shows both side by side, with the difference; as JSON, both results; and one plot.
func TestCompareWorksOnEveryExample(t *testing.T) {
	examples := filepath.Join("..", "..", "docs", "examples", "sim")
	scenarios, err := filepath.Glob(filepath.Join(examples, "*.yaml"))
	if err != nil || len(scenarios) < 6 {
		t.Fatalf("examples %v: %v", scenarios, err)
	}
	other := filepath.Join(t.TempDir(), "reclaim-10m.yaml")
	if err := os.WriteFile(other, []byte(tenMinuteDefaults), 0o600); err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, scenario := range scenarios {
		if strings.HasSuffix(scenario, ".conf.yaml") {
			continue
		}
		compared++
		args := []string{"--compare", other, scenario}
		// X-arrivals.yaml holds only jobs: it arrives into the snapshot X.yaml.
		if snapshot, ok := strings.CutSuffix(scenario, "-arrivals.yaml"); ok {
			args = []string{"--compare", other, "--arrivals", scenario, snapshot + ".yaml"}
		}
		var out, errs bytes.Buffer
		if code := run(args, &out, &errs); code != 0 {
			t.Errorf("%s: exit %d: %s", scenario, code, errs.String())
			continue
		}
		for _, want := range []string{"built-in configuration", other, "difference", "evictions", "mean wait, "} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s: the comparison lacks %q:\n%s", scenario, want, out.String())
			}
		}
		if strings.HasSuffix(scenario, "-arrivals.yaml") && !strings.HasPrefix(out.String(), "Scenario: "+args[len(args)-1]+" + ") {
			t.Errorf("%s: the comparison does not begin by saying what arrived:\n%s", scenario, out.String())
		}
	}
	if compared < 5 {
		t.Fatalf("only %d example scenarios compared", compared)
	}

	// reclaim-promise sets no min-runtime: the other configuration's 10m holds the reclaim of
	// big back from 10s to 600s, and small, in queue b, waits that much longer.
	scenario := filepath.Join(examples, "reclaim-promise.yaml")
	var out, errs bytes.Buffer
	if code := run([]string{"--compare", other, scenario}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	if !regexp.MustCompile(`mean wait, b +0:00:01 +0:09:51 +\+0:09:50`).MatchString(out.String()) {
		t.Errorf("the table does not show b waiting 9:50 longer:\n%s", out.String())
	}
	plot := filepath.Join(t.TempDir(), "both.svg")
	out.Reset()
	if code := run([]string{"--compare", other, "--output", "json", "--plot", plot, scenario}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	var result struct {
		Variants []struct {
			Name   string `json:"name"`
			Result struct {
				Events []struct {
					Type, PodGroup string
					Time           float64
				} `json:"events"`
			} `json:"result"`
		} `json:"variants"`
	}
	if err := json.Unmarshal(out.Bytes(), &result); err != nil || len(result.Variants) != 2 {
		t.Fatalf("want the two runs as JSON variants: %v\n%s", err, out.String())
	}
	for i, want := range []string{"default/big@10", "default/big@600"} {
		var at []string
		for _, e := range result.Variants[i].Result.Events {
			if e.Type == "Evict" {
				at = append(at, fmt.Sprintf("%s@%v", e.PodGroup, e.Time))
			}
		}
		if len(at) != 1 || at[0] != want {
			t.Errorf("%s: evictions %v, want %s", result.Variants[i].Name, at, want)
		}
	}
	svg, err := os.ReadFile(plot)
	if err != nil || !bytes.Contains(svg, []byte("built-in configuration")) || !bytes.Contains(svg, []byte("reclaim-10m.yaml")) {
		t.Errorf("the plot does not show both runs: %v", err)
	}
}

// A snapshot with arrivals and repeats of its pending job: the text says what was added
// before the tables, which show the added jobs; JSON and a comparison run the same jobs.
func TestArrivalsAndRepeatsFromTheCommandLine(t *testing.T) {
	examples := filepath.Join("..", "..", "docs", "examples", "sim")
	scenario, arrivals := filepath.Join(examples, "running-jobs.yaml"), filepath.Join(examples, "running-jobs-arrivals.yaml")
	args := []string{"--arrivals", arrivals, "--repeat-pending", "2/h", "--until", "4h", scenario}
	var out, errs bytes.Buffer
	if code := run(args, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	intro := "Scenario: " + scenario + " + 2 arrivals from " + arrivals + " + 8 repeated pending jobs (2/h)\n\nTimeline\n"
	if !strings.HasPrefix(out.String(), intro) {
		t.Errorf("output does not begin with %q:\n%s", intro, out.String())
	}
	for _, want := range []string{"Bind      prod/test", "Start     research/sweep", "Start     prod/eval-r1", "prod    10"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}

	other := filepath.Join(t.TempDir(), "other.yaml")
	if err := os.WriteFile(other, []byte("actions: \"allocate, reclaim\"\ntiers:\n- plugins:\n  - name: proportion\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := run(append([]string{"--output", "json", "--compare", other}, args...), &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	var result struct {
		Variants []struct {
			Result struct {
				Jobs []struct {
					PodGroup  string  `json:"podGroup"`
					Submitted float64 `json:"submitted"`
				} `json:"jobs"`
			} `json:"result"`
		} `json:"variants"`
	}
	if err := json.Unmarshal(out.Bytes(), &result); err != nil || len(result.Variants) != 2 {
		t.Fatalf("want two runs as JSON, and nothing else: %v\n%s", err, out.String())
	}
	for i, v := range result.Variants {
		submitted := map[string]float64{}
		for _, j := range v.Result.Jobs {
			submitted[j.PodGroup] = j.Submitted
		}
		if len(v.Result.Jobs) != 13 || submitted["prod/test"] != 600 || submitted["research/sweep"] != 2400 || submitted["prod/eval-r8"] != 4*3600 {
			t.Errorf("run %d: jobs submitted %v; want the 3 of the scenario, 2 arrivals and 8 repeats of prod/eval, the last at 4h", i, submitted)
		}
	}
}

// A job given twice is refused naming both files, before anything runs.
func TestArrivalGivenTwiceNamesBothFiles(t *testing.T) {
	scenario := filepath.Join("..", "..", "docs", "examples", "sim", "running-jobs.yaml")
	arrivals := filepath.Join(t.TempDir(), "arrivals.yaml")
	data := "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: eval, namespace: prod}\nspec: {queue: prod}\n---\n" +
		"apiVersion: v1\nkind: Pod\nmetadata: {name: eval-1, namespace: prod, annotations: {pod-group-name: eval}}\nspec: {containers: [{name: main}]}\n"
	if err := os.WriteFile(arrivals, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	if code := run([]string{"--arrivals", arrivals, scenario}, &out, &errs); code != 1 || out.Len() != 0 {
		t.Fatalf("exit %d, output %q: want 1 and nothing run", code, out.String())
	}
	if want := "kai-sim: " + arrivals + ": PodGroup prod/eval is also in " + scenario + "\n"; errs.String() != want {
		t.Errorf("stderr %q, want %q", errs.String(), want)
	}
}

// Two scenarios of one cluster, differing only in a queue's reclaimMinRuntime, compare side by
// side under one configuration: with 10 minutes instead of an hour, train is reclaimed at
// once (it has run 55 minutes) and prod waits 5 minutes less.
func TestCompareScenarioRunsBothUnderOneConfiguration(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", "sim", "running-jobs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	hour := filepath.Join(t.TempDir(), "hour.yaml")
	tenMinutes := filepath.Join(t.TempDir(), "ten-minutes.yaml")
	if err := os.WriteFile(hour, data, 0o600); err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(data), "reclaimMinRuntime: 1h", "reclaimMinRuntime: 10m", 1)
	if changed == string(data) {
		t.Fatal("running-jobs.yaml no longer sets research's reclaimMinRuntime to 1h")
	}
	if err := os.WriteFile(tenMinutes, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	if code := run([]string{"--compare-scenario", tenMinutes, hour}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	for _, want := range []string{
		hour + " and " + tenMinutes + " under built-in configuration.",
		"mean wait, prod",
		"0:15:01",
		"0:10:01     -0:05:00",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestVersionPrintsAndExits(t *testing.T) {
	var stdout, stderr bytes.Buffer
	// Nothing else on the command line is looked at, however wrong.
	if code := run([]string{"--version", "--scheduler-conf=/does/not/exist", "--until", "-1h", "a.yaml", "b.yaml"}, &stdout, &stderr); code != 0 {
		t.Fatalf("--version exited %d: %s", code, stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), "kai-sim ") || !strings.Contains(stdout.String(), "(commit ") || stderr.Len() != 0 {
		t.Errorf("--version printed %q, stderr %q", stdout.String(), stderr.String())
	}
}

// An empty scenario file is refused as an empty scheduler configuration is, rather than
// giving an empty report with exit 0.
func TestEmptyScenarioFileIsRefused(t *testing.T) {
	for name, data := range map[string]string{"empty": "", "comments": "# written by hand\n---\n# nothing yet\n---\n"} {
		path := filepath.Join(t.TempDir(), name+".yaml")
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		var out, errs bytes.Buffer
		if code := run([]string{path}, &out, &errs); code != 1 || out.Len() != 0 {
			t.Errorf("%s: exit %d, output %q: want 1 and no report", name, code, out.String())
		}
		want := "kai-sim: " + path + ": the scenario is empty; write its Nodes, Queues, PodGroups and Pods, or pass no file for the built-in comparison\n"
		if errs.String() != want {
			t.Errorf("%s: stderr %q\nwant          %q", name, errs.String(), want)
		}
	}
}

// A file that is not a scenario (prose, a list, the scheduler configuration given as the
// scenario) is refused naming the file, the document and its line, in the terms of what was
// written: no Go type name.
func TestFileThatIsNotAScenarioSaysWhatItIs(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct{ data, want string }{
		"notes.txt": {"These are my notes on the cluster.\n", `document 1 (line 1): must be a Kubernetes object (a mapping with apiVersion, kind and metadata), got the text "These are my notes on the cluster."`},
		"list.yaml": {"apiVersion: v1\nkind: Node\nmetadata: {name: n0}\n---\n- n1\n- n2\n", "document 2 (lines 5-6): must be a Kubernetes object (a mapping with apiVersion, kind and metadata), got a list"},
		"conf.yaml": {"actions: allocate, reclaim\n", "document 1 (line 1): has actions but no apiVersion and kind: this is a scheduler configuration, not a scenario (kai-sim takes it with --scheduler-conf)"},
		"pod.yaml":  {"apiVersion: v1\nkind: Node\nmetadata: {name: n0}\nspec: {taints: {key: gpu}}\n", "document 1 (Node n0): spec.taints: must be a list, got a mapping"},
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(tc.data), 0o600); err != nil {
			t.Fatal(err)
		}
		var out, errs bytes.Buffer
		if code := run([]string{path}, &out, &errs); code != 1 {
			t.Errorf("%s: exit %d", name, code)
		}
		if want := "kai-sim: " + path + ": " + tc.want + "\n"; errs.String() != want {
			t.Errorf("%s: stderr %q\nwant          %q", name, errs.String(), want)
		}
	}
}

// Every error kai-sim prints begins "kai-sim: ", a missing file's too, and names the file by
// what it is to kai-sim.
func TestEveryErrorBeginsWithKaiSim(t *testing.T) {
	dir := t.TempDir()
	scenario := filepath.Join(dir, "one-node.yaml")
	if err := os.WriteFile(scenario, []byte("apiVersion: v1\nkind: Node\nmetadata: {name: n0}\nstatus: {allocatable: {cpu: \"8\"}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	twoMistakes := filepath.Join(dir, "conf.yaml")
	if err := os.WriteFile(twoMistakes, []byte("actions: alocate\ntiers: 5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.yaml")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{missing}, "kai-sim: scenario " + missing + ": no such file or directory\n"},
		{[]string{"--arrivals", missing, scenario}, "kai-sim: arrivals file " + missing + ": no such file or directory\n"},
		{[]string{"--compare-scenario", missing, scenario}, "kai-sim: scenario " + missing + ": no such file or directory\n"},
		{[]string{"--scheduler-conf", missing, scenario}, "kai-sim: scheduler configuration " + missing + ": no such file or directory\n"},
		{[]string{"--compare", missing, scenario}, "kai-sim: scheduler configuration " + missing + ": no such file or directory\n"},
		{[]string{"--plot", filepath.Join(missing, "gpus.svg"), scenario}, "kai-sim: --plot " + filepath.Join(missing, "gpus.svg") + ": no such file or directory\n"},
		// Each of a configuration's mistakes on a line of its own, each with the prefix.
		{[]string{"--scheduler-conf", twoMistakes, scenario}, "kai-sim: scheduler configuration " + twoMistakes + `: actions: unknown action "alocate" (known: allocate, consolidation, preempt, reclaim, stalegangeviction)` + "\n" +
			"kai-sim: scheduler configuration " + twoMistakes + ": tiers: must be a list, got 5\n"},
		{[]string{"--scheduler-conf", twoMistakes}, ""},
	} {
		var out, errs bytes.Buffer
		if code := run(tc.args, &out, &errs); code != 1 {
			t.Errorf("%v: exit %d, want 1", tc.args, code)
		}
		if tc.want != "" && errs.String() != tc.want {
			t.Errorf("%v: stderr %q\nwant %q", tc.args, errs.String(), tc.want)
		}
		for line := range strings.Lines(errs.String()) {
			if !strings.HasPrefix(line, "kai-sim: ") {
				t.Errorf("%v: stderr line %q does not begin with \"kai-sim: \"", tc.args, line)
			}
		}
	}
}

// The examples' comments name only files a user of the repository has: two once cited
// reproductions kept outside it (shared/repro/...), which a reader could not open.
func TestExamplesCiteOnlyFilesOfTheRepository(t *testing.T) {
	root := filepath.Join("..", "..")
	examples := filepath.Join(root, "docs", "examples", "sim")
	files, err := filepath.Glob(filepath.Join(examples, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("examples %v: %v", files, err)
	}
	path := regexp.MustCompile(`[A-Za-z0-9_./-]+\.(?:yaml|md|go|svg)\b`)
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(data)) {
			comment, ok := strings.CutPrefix(strings.TrimSpace(line), "#")
			if !ok {
				continue
			}
			for _, cited := range path.FindAllString(comment, -1) {
				// A path from the repository's root, or a file beside the example.
				_, fromRoot := os.Stat(filepath.Join(root, cited))
				_, beside := os.Stat(filepath.Join(examples, cited))
				if fromRoot != nil && beside != nil {
					t.Errorf("%s cites %s, which the repository does not have: %s", filepath.Base(file), cited, strings.TrimSpace(line))
				}
			}
		}
	}
}

// tenMinuteDefaults is a configuration that differs from the built-in one only in its
// min-runtime defaults (10m each way): what a user compares with --compare.
const tenMinuteDefaults = `actions: "allocate, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: proportion
  - name: minruntime
    arguments: {defaultReclaimMinRuntime: 10m, defaultPreemptMinRuntime: 10m}
  - name: predicates
  - name: nodeplacement
`
