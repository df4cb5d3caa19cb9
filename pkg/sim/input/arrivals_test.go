package input_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/internal/simtest"
)

// arrival is a PodGroup and its one pod, with the given PodGroup annotations.
func arrival(namespace, name, queue, annotations string) string {
	return fmt.Sprintf(`apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: %[2]s, namespace: %[1]s, annotations: {%[4]s}}
spec: {minMember: 1, queue: %[3]s}
---
apiVersion: v1
kind: Pod
metadata: {name: %[2]s-0, namespace: %[1]s, annotations: {pod-group-name: %[2]s}}
spec: {containers: [{name: main, resources: {requests: {nvidia.com/gpu: "1"}}}]}
`, namespace, name, queue, annotations)
}

func today(t *testing.T) input.File {
	return input.File{Name: "today.yaml", Data: simtest.Example(t, "running-jobs.yaml")}
}

func jobNames(sc *input.Scenario) []string {
	var names []string
	for _, job := range sc.Jobs {
		names = append(names, fmt.Sprintf("%s/%s@%s", job.Group.Namespace, job.Group.Name, job.SubmitAt))
	}
	return names
}

// The example arrivals join the snapshot in submission order, and run: prod's test, arriving
// at 10 minutes, starts then.
func TestArrivalsJoinTheScenarioInSubmissionOrder(t *testing.T) {
	arrivals := input.File{Name: "arrivals.yaml", Data: simtest.Example(t, "running-jobs-arrivals.yaml")}
	sc, description, err := input.Load(today(t), input.Additions{Arrivals: []input.File{arrivals}})
	if err != nil {
		t.Fatal(err)
	}
	want := "research/short@-2h0m0s research/train@-1h0m0s prod/eval@-10m0s prod/test@10m0s research/sweep@40m0s"
	if got := strings.Join(jobNames(sc), " "); got != want {
		t.Errorf("jobs %s, want %s", got, want)
	}
	if want := "today.yaml + 2 arrivals from arrivals.yaml"; description != want {
		t.Errorf("description %q, want %q", description, want)
	}
	// The arrivals file defines no PriorityClass: the scenario's four defaults stay alone.
	if len(sc.Classes) != 4 {
		t.Errorf("%d PriorityClasses, want the 4 defaults of the scenario", len(sc.Classes))
	}
	result, err := sim.Run(context.Background(), sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if test := jobReport(t, result, "prod/test"); test.Submitted != 600 || test.FirstStart == nil || *test.FirstStart != 601 {
		t.Errorf("prod/test submitted at %v, started at %v: want 600 s and a cycle later", test.Submitted, test.FirstStart)
	}
}

func TestArrivalNamedTwiceNamesBothFiles(t *testing.T) {
	for _, tc := range []struct {
		name     string
		arrivals []string
		want     string
	}{
		{"a job of the scenario", []string{arrival("prod", "eval", "prod", "")},
			"a.yaml: PodGroup prod/eval is also in today.yaml"},
		{"a pod of another scheduler in the scenario", []string{arrival("inference", "llm-server", "prod", "")},
			"a.yaml: Pod inference/llm-server-0 is also in today.yaml"},
		{"a job of an earlier arrivals file", []string{arrival("team", "job-7", "prod", ""), arrival("team", "job-7", "research", "")},
			"b.yaml: PodGroup team/job-7 is also in a.yaml"},
	} {
		var files []input.File
		for i, data := range tc.arrivals {
			files = append(files, input.File{Name: string(rune('a'+i)) + ".yaml", Data: []byte(data)})
		}
		_, _, err := input.Load(today(t), input.Additions{Arrivals: files})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// An arrivals file adds jobs not submitted yet; what a scenario says about the cluster or a
// running job belongs in the scenario.
func TestArrivalsFileMistakes(t *testing.T) {
	job := arrival("team", "a", "prod", "sim.kai.scheduler/submit-at: 10m")
	for _, tc := range []struct{ name, data, want string }{
		{"a node", job + "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\n",
			"arrivals.yaml: document 3 (Node n1): an arrivals file holds only PodGroups and Pods"},
		{"a queue", "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q}\n---\n" + job,
			"arrivals.yaml: document 1 (Queue q): an arrivals file holds only PodGroups and Pods"},
		{"a priority class", "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: train}\nvalue: 1\n",
			"arrivals.yaml: document 1 (PriorityClass train): an arrivals file holds only PodGroups and Pods"},
		{"a topology", job + "---\napiVersion: kai.scheduler/v1alpha1\nkind: Topology\nmetadata: {name: zones}\nspec: {levels: [{nodeLabel: zone}]}\n",
			"arrivals.yaml: document 3 (Topology zones): an arrivals file holds only PodGroups and Pods"},
		{"a running job", arrival("team", "b", "prod", "sim.kai.scheduler/running-for: 5m"),
			"arrivals.yaml: PodGroup team/b: metadata.annotations.sim.kai.scheduler/running-for: an arrival is submitted at or after the start and is not running yet"},
		{"a job submitted before the start", arrival("team", "b", "prod", "sim.kai.scheduler/submit-at: -5m"),
			"arrivals.yaml: PodGroup team/b: metadata.annotations.sim.kai.scheduler/submit-at: -5m is before the start"},
		{"a pod on a node", strings.Replace(job, "spec: {containers", "spec: {nodeName: n0, containers", 1),
			`arrivals.yaml: Pod team/a-0: spec.nodeName "n0": an arrival's pods are created pending, on no node`},
		{"a pod of another scheduler", strings.Replace(job, "spec: {containers", "spec: {schedulerName: default-scheduler, containers", 1),
			`arrivals.yaml: Pod team/a-0: spec.schedulerName "default-scheduler": an arrivals file holds only the pods of kai-scheduler jobs`},
	} {
		_, _, err := input.Load(today(t), input.Additions{Arrivals: []input.File{{Name: "arrivals.yaml", Data: []byte(tc.data)}}})
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		value string
		count int
		per   time.Duration
	}{{"6/h", 6, time.Hour}, {"1/30m", 1, 30 * time.Minute}, {"12/1h", 12, time.Hour}, {"3/d", 3, 24 * time.Hour}} {
		rate, err := input.ParseRate(tc.value)
		if err != nil || rate.Count != tc.count || rate.Per != tc.per || rate.String() != tc.value {
			t.Errorf("%s: %+v, %v; want %d every %s", tc.value, rate, err, tc.count, tc.per)
		}
	}
	for value, want := range map[string]string{
		"6":     `got "6": no /`,
		"0/h":   `N must be a positive integer, got "0"`,
		"-1/h":  `N must be a positive integer, got "-1"`,
		"x/h":   `N must be a positive integer, got "x"`,
		"6/":    `invalid duration ""`,
		"6/0s":  `DURATION must be positive, got "0s"`,
		"6/-1h": `DURATION must be positive, got "-1h"`,
		"6/hx":  `unknown unit "hx"`,
		"2/1ns": "more than one copy a nanosecond",
	} {
		if _, err := input.ParseRate(value); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), fmt.Sprintf("%q", value)) {
			t.Errorf("%s: error %v, want it to name the value and %q", value, err, want)
		}
	}
}

// oneNodeOneQueue is a node of 4 GPUs and a queue q owning them.
const oneNodeOneQueue = `apiVersion: v1
kind: Node
metadata: {name: n0}
status: {allocatable: {cpu: "8", memory: 64Gi, nvidia.com/gpu: "4"}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: q}
spec: {resources: {gpu: {quota: 4, limit: -1, overQuotaWeight: 1}, cpu: {quota: -1, limit: -1, overQuotaWeight: 1}, memory: {quota: -1, limit: -1, overQuotaWeight: 1}}}
---
`

// pendingMix is a scenario with two pending jobs (a, waiting since before the start, and b),
// a running one and one submitted later: only a and b are today's pending mix.
func pendingMix() input.File {
	running := strings.Replace(arrival("team", "run", "q", "sim.kai.scheduler/running-for: 1h"), "spec: {containers", "spec: {nodeName: n0, containers", 1)
	data := oneNodeOneQueue + arrival("team", "b", "q", "sim.kai.scheduler/duration: 20m, sim.kai.scheduler/startup: 1m, sim.kai.scheduler/checkpoint-interval: 5m") +
		"---\n" + arrival("team", "a", "q", "sim.kai.scheduler/submit-at: -10m") + "---\n" + running +
		"---\n" + arrival("team", "later", "q", "sim.kai.scheduler/submit-at: 5m")
	return input.File{Name: "today.yaml", Data: []byte(data)}
}

// Copies of a and b are submitted in turn every 20 minutes up to the hour, named after
// their copy; an arrival is not part of the mix, and the originals are left as they were.
func TestRepeatPendingCyclesThroughTodaysMix(t *testing.T) {
	rate, err := input.ParseRate("3/h")
	if err != nil {
		t.Fatal(err)
	}
	arrivals := input.File{Name: "arrivals.yaml", Data: []byte(arrival("team", "new", "q", ""))}
	sc, description, err := input.Load(pendingMix(), input.Additions{Arrivals: []input.File{arrivals}, Repeat: rate, Until: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	want := "team/run@-1h0m0s team/a@-10m0s team/b@0s team/new@0s team/later@5m0s team/a-r1@20m0s team/b-r2@40m0s team/a-r3@1h0m0s"
	if got := strings.Join(jobNames(sc), " "); got != want {
		t.Errorf("jobs %s\nwant %s", got, want)
	}
	if want := "today.yaml + 1 arrival from arrivals.yaml + 3 repeated pending jobs (3/h)"; description != want {
		t.Errorf("description %q, want %q", description, want)
	}
	byName := map[string]*input.Job{}
	for _, job := range sc.Jobs {
		byName[job.Group.Name] = job
	}
	b, copyOfB := byName["b"], byName["b-r2"]
	if copyOfB.Duration != b.Duration || copyOfB.Startup != b.Startup || copyOfB.CheckpointInterval != b.CheckpointInterval ||
		copyOfB.Group.Spec.Queue != "q" || copyOfB.Group.Annotations[input.SubmitAtAnnotation] != "40m0s" {
		t.Errorf("copy of b: %+v, annotations %v; want b's settings, submitted at 40m", copyOfB, copyOfB.Group.Annotations)
	}
	if len(copyOfB.Pods) != 1 || copyOfB.Pods[0].Name != "b-0-r2" || copyOfB.Pods[0].Annotations[scheduling.PodGroupNameAnnotation] != "b-r2" {
		t.Errorf("copy of b's pods: %+v; want b-0-r2 in PodGroup b-r2", copyOfB.Pods)
	}
	if b.Pods[0].Name != "b-0" || b.Group.Annotations[input.SubmitAtAnnotation] != "" {
		t.Errorf("the original b changed: pod %s, annotations %v", b.Pods[0].Name, b.Group.Annotations)
	}
	result, err := sim.Run(context.Background(), sc, sim.Options{Until: 2 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if repeated := jobReport(t, result, "team/a-r3"); repeated.Submitted != 3600 {
		t.Errorf("team/a-r3 submitted at %v s, want 3600", repeated.Submitted)
	}
}

func TestRepeatPendingMistakes(t *testing.T) {
	rate, err := input.ParseRate("1/30m")
	if err != nil {
		t.Fatal(err)
	}
	fast, err := input.ParseRate("1/1ms")
	if err != nil {
		t.Fatal(err)
	}
	onlyRunning := strings.Replace(arrival("team", "run", "q", "sim.kai.scheduler/running-for: 1h"), "spec: {containers", "spec: {nodeName: n0, containers", 1)
	collides := string(pendingMix().Data) + "---\n" + arrival("team", "a-r1", "q", "sim.kai.scheduler/submit-at: 5h")
	for _, tc := range []struct {
		name     string
		scenario string
		add      input.Additions
		want     string
	}{
		{"no pending job", oneNodeOneQueue + onlyRunning, input.Additions{Repeat: rate, Until: time.Hour},
			"repeating the pending mix at 1/30m: the scenario has no pending job"},
		{"no end", string(pendingMix().Data), input.Additions{Repeat: rate},
			"repeating the pending mix at 1/30m needs a time limit: it would never end"},
		{"a copy's name is taken", collides, input.Additions{Repeat: rate, Until: time.Hour},
			"PodGroup team/a-r1, repeat 1 of PodGroup team/a, is also in today.yaml"},
		{"a copy's pod name is taken by an arrival", string(pendingMix().Data), input.Additions{Repeat: rate, Until: time.Hour,
			Arrivals: []input.File{{Name: "arrivals.yaml", Data: []byte(strings.Replace(arrival("team", "x", "q", ""), "name: x-0", "name: a-0-r1", 1))}}},
			"Pod team/a-0-r1, repeat 1 of PodGroup team/a, is also in arrivals.yaml"},
		{"too many copies", string(pendingMix().Data), input.Additions{Repeat: fast, Until: time.Hour},
			"repeating the pending mix at 1/1ms up to 1h0m0s makes more than 100000 copies"},
	} {
		_, _, err := input.Load(input.File{Name: "today.yaml", Data: []byte(tc.scenario)}, tc.add)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}
