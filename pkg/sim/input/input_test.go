package input_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/internal/simtest"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// inputHead is a scenario of one job whose one pod's spec follows.
const inputHead = oneNodeOneQueue + `apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: job}
spec: {minMember: 1, queue: q}
---
apiVersion: v1
kind: Pod
metadata: {name: job-0, annotations: {pod-group-name: job}}
`

// The last line of a file — here the pod's whole spec — must survive whatever its length and
// whether or not a newline ends it: lines at the YAML reader's 4096-byte buffer once vanished.
func TestParseKeepsTheLastLineWhateverItsLength(t *testing.T) {
	spec := `spec: {containers: [{name: main, image: w, resources: {requests: {nvidia.com/gpu: "3"}}}]}`
	for _, length := range []int{4095, 4096, 4097, 1 << 20} {
		for _, ending := range []string{"", "\n"} {
			line := spec + strings.Repeat(" ", length-len(spec))
			sc, err := input.Parse([]byte(inputHead + line + ending))
			if err != nil {
				t.Fatalf("line of %d bytes, ending %q: %v", length, ending, err)
			}
			pod := sc.Jobs[0].Pods[0]
			if len(pod.Spec.Containers) != 1 || pod.Spec.Containers[0].Resources.Requests.Name("nvidia.com/gpu", "").Value() != 3 {
				t.Fatalf("line of %d bytes, ending %q: the pod's spec was lost: %+v", length, ending, pod.Spec)
			}
		}
	}
}

func TestParseRefusesNegativeQuantitiesNamingTheDocument(t *testing.T) {
	for field, spec := range map[string]string{
		"spec.containers[0].resources.requests[nvidia.com/gpu]: must be non-negative, got -4": `spec: {containers: [{name: main, image: w, resources: {requests: {nvidia.com/gpu: "-4"}}}]}`,
		"spec.containers[0].resources.limits[cpu]: must be non-negative, got -1":              `spec: {containers: [{name: main, image: w, resources: {limits: {cpu: "-1"}}}]}`,
		"spec.overhead[memory]: must be non-negative, got -1Gi":                               `spec: {overhead: {memory: -1Gi}, containers: [{name: main, image: w}]}`,
	} {
		_, err := input.Parse([]byte(inputHead + spec + "\n"))
		want := fmt.Sprintf("document 4 (Pod job-0): %s", field)
		if err == nil || err.Error() != want {
			t.Errorf("error %v, want %q", err, want)
		}
	}
	node := strings.Replace(inputHead, `nvidia.com/gpu: "4"`, `nvidia.com/gpu: "-4"`, 1)
	if _, err := input.Parse([]byte(node + `spec: {containers: [{name: main, image: w}]}`)); err == nil ||
		!strings.Contains(err.Error(), "document 1 (Node n0): status.allocatable[nvidia.com/gpu]: must be non-negative, got -4") {
		t.Errorf("a node with -4 GPUs: error %v", err)
	}
}

// A scenario where nothing happens (a node, no queue, no job) is a valid, empty result: the
// JSON contract has arrays, never null.
func TestScenarioWithoutJobsGivesEmptyArrays(t *testing.T) {
	sc, err := input.Parse([]byte("apiVersion: v1\nkind: Node\nmetadata: {name: n0}\nstatus: {allocatable: {cpu: \"8\"}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	result, err := sim.Run(context.Background(), sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := report.WriteJSON(&out, result); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"events": []`, `"jobs": []`, `"queues": []`, `"warnings": []`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %s:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "null") {
		t.Errorf("output has null:\n%s", out.String())
	}
}

func queueDoc(name, parent string) string {
	return fmt.Sprintf(`apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: %s}
spec: {parentQueue: "%s", resources: {gpu: {quota: 2, limit: -1, overQuotaWeight: 1}, cpu: {quota: -1, limit: -1, overQuotaWeight: 1}, memory: {quota: -1, limit: -1, overQuotaWeight: 1}}}
---
`, name, parent)
}

func jobDoc(name, queue string, minMember, pods int) string {
	doc := fmt.Sprintf(`apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: %s, annotations: {sim.kai.scheduler/duration: 1m}}
spec: {minMember: %d, queue: %s}
---
`, name, minMember, queue)
	for i := range pods {
		doc += fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s-%d, annotations: {pod-group-name: %s}}
spec: {containers: [{name: main, image: w, resources: {requests: {nvidia.com/gpu: "1"}}}]}
---
`, name, i, name)
	}
	return doc
}

// Broken input is reported as the scheduler reports it on a cluster — Warning events about
// invalid queues, reasons on the PodGroups of jobs that cannot run — never silently.
func TestBrokenScenariosAreReported(t *testing.T) {
	scenario := `apiVersion: v1
kind: Node
metadata: {name: n0}
status: {allocatable: {cpu: "8", memory: 64Gi, nvidia.com/gpu: "4"}}
---
` + queueDoc("ok", "") + queueDoc("orphan", "gone") + queueDoc("a", "b") + queueDoc("b", "a") +
		jobDoc("fine", "ok", 1, 1) + jobDoc("in-orphan", "orphan", 1, 1) + jobDoc("nowhere", "missing", 1, 1) +
		jobDoc("short", "ok", 3, 2)
	sc, err := input.Parse([]byte(scenario))
	if err != nil {
		t.Fatal(err)
	}
	r, err := sim.Run(context.Background(), sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	problems := map[string]string{}
	for _, p := range r.Problems {
		problems[p.Kind+" "+p.Name] = p.Reason + ": " + p.Message
	}
	for object, want := range map[string]string{
		"Queue orphan": `InvalidQueue: parent queue "gone" does not exist`,
		"Queue a":      "InvalidQueue: parent cycle: a -> b -> a",
		"Queue b":      "InvalidQueue: parent cycle: a -> b -> a",
	} {
		if problems[object] != want {
			t.Errorf("%s reported as %q, want %q (all: %v)", object, problems[object], want, problems)
		}
	}
	waiting := map[string]string{}
	for _, j := range r.Jobs {
		waiting[j.PodGroup] = strings.Join(j.Waiting, "; ")
	}
	for job, want := range map[string]string{
		"default/in-orphan": `queue "orphan" is invalid: parent queue "gone" does not exist`,
		"default/nowhere":   `queue "missing" does not exist`,
		"default/short":     "gang needs 3 pods but the job has only 2",
	} {
		if !strings.Contains(waiting[job], want) {
			t.Errorf("%s waits with %q, want it to say %q", job, waiting[job], want)
		}
	}
	if waiting["default/fine"] != "" || r.Totals.Completed != 1 {
		t.Errorf("the healthy job must run and complete: waiting %q, %d completed", waiting["default/fine"], r.Totals.Completed)
	}
	var text bytes.Buffer
	if err := report.WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Problems reported by the scheduler", `Queue orphan: InvalidQueue: parent queue "gone" does not exist`,
		"Jobs still waiting, and why", `default/nowhere: queue "missing" does not exist`} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text output lacks %q:\n%s", want, text.String())
		}
	}
}

func TestDuplicateObjectsAreAnError(t *testing.T) {
	_, err := input.Parse([]byte(queueDoc("q", "") + queueDoc("q", "")))
	if err == nil || err.Error() != "document 2 (Queue q): the same Queue as document 1; names must be unique" {
		t.Fatalf("error %v", err)
	}
	_, err = input.Parse([]byte(jobDoc("j", "q", 1, 1) + jobDoc("j", "q", 1, 0)))
	if err == nil || !strings.Contains(err.Error(), "document 3 (PodGroup default/j): the same PodGroup as document 1") {
		t.Fatalf("error %v", err)
	}
}

// YAML scalars that are text to Kubernetes (a label value 3, a selector value true) read as
// text, as they always did: a scenario file that worked keeps working.
func TestScalarsReadAsTextWhereKubernetesWantsText(t *testing.T) {
	sc, err := input.Parse([]byte(`apiVersion: v1
kind: Node
metadata: {name: n1, labels: {zone: 3, fast: true}}
status:
  allocatable: {cpu: "8", memory: 8Gi, nvidia.com/gpu: 1, pods: 110}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := sc.Nodes[0].Labels; got["zone"] != "3" || got["fast"] != "true" {
		t.Fatalf("labels %v, want zone=3 and fast=true as text", got)
	}
}

// A file with nothing in it is refused, as an empty scheduler configuration is: it is far
// more often a snapshot or a redirect gone wrong than a cluster of nothing.
func TestEmptyFilesAreRefused(t *testing.T) {
	for name, data := range map[string]string{
		"no bytes":             "",
		"blank lines":          "\n  \n\n",
		"only comments":        "# my cluster\n# to do\n",
		"only separators":      "---\n---\n",
		"comments in docs":     "# one\n---\n# two\n---\n",
		"empty YAML documents": "--- # a\n{}\n---\nnull\n---\n~\n",
	} {
		t.Run(name, func(t *testing.T) {
			want := "the scenario is empty; write its Nodes, Queues, PodGroups and Pods, or pass no file for the built-in comparison"
			if _, err := input.Parse([]byte(data)); err == nil || err.Error() != want {
				t.Errorf("scenario %q: error %v, want %q", data, err, want)
			}
			want = "arrivals.yaml: the arrivals file is empty; write the PodGroups and Pods that arrive, or pass no --arrivals"
			_, _, err := input.Load(input.File{Name: "today.yaml", Data: []byte(inputHead + "spec: {containers: [{name: main}]}\n")},
				input.Additions{Arrivals: []input.File{{Name: "arrivals.yaml", Data: []byte(data)}}})
			if err == nil || err.Error() != want {
				t.Errorf("arrivals %q: error %v, want %q", data, err, want)
			}
		})
	}
}

// A document that does not decode is told in the terms of the YAML written, naming the
// document (by kind and name, or by its lines when it has none) and the field: never the
// JSON it passes through or a Go type it is decoded into.
func TestDecodeErrorsSpeakYAMLNotGo(t *testing.T) {
	node := "apiVersion: v1\nkind: Node\nmetadata: {name: n0}\n"
	for _, tc := range []struct {
		name, data, want string
	}{
		{"text", "hello world\n", `document 1 (line 1): must be a Kubernetes object (a mapping with apiVersion, kind and metadata), got the text "hello world"`},
		{"long text", "This is the scenario we talked about on Monday, with the new nodes\n",
			`document 1 (line 1): must be a Kubernetes object (a mapping with apiVersion, kind and metadata), got the text "This is the scenario we talked about on..."`},
		{"number", "# a comment first\n\n42\n", "document 1 (line 3): must be a Kubernetes object (a mapping with apiVersion, kind and metadata), got 42"},
		{"list", node + "---\n- a\n- b\n", "document 2 (lines 5-6): must be a Kubernetes object (a mapping with apiVersion, kind and metadata), got a list"},
		{"apiVersion a number", "apiVersion: 1\nkind: Node\n", "document 1 (lines 1-2): apiVersion: must be a string, got a number"},
		{"metadata a list", "apiVersion: v1\nkind: Node\nmetadata: [n0]\n", "document 1 (lines 1-3): metadata: must be a mapping, got a list"},
		{"no kind", "name: n0\ngpus: 8\n", "document 1 (lines 1-2): has no apiVersion and kind; a scenario holds Kubernetes objects: " +
			"v1 Node or Pod, scheduling.run.ai/v2 Queue, scheduling.run.ai/v2alpha2 PodGroup, scheduling.k8s.io/v1 PriorityClass, " +
			"kai.scheduler/v1alpha1 Topology, or a workload of another group (batch/v1 Job, kubeflow.org/v1 PyTorchJob) that owns pods of the file"},
		{"a scheduler configuration", "actions: allocate, reclaim\ntiers: []\n",
			"document 1 (lines 1-2): has actions but no apiVersion and kind: this is a scheduler configuration, not a scenario (kai-sim takes it with --scheduler-conf)"},
		{"a list for a bool", node + "spec: {unschedulable: [yes]}\n", "document 1 (Node n0): spec.unschedulable: must be true or false, got a list"},
		{"a string for a list", inputHead + "spec: {containers: main}\n", "document 4 (Pod job-0): spec.containers: must be a list, got a string"},
		{"text for a number, after text read from a number", strings.Replace(inputHead, "{name: job-0,", "{name: job-0, labels: {zone: 3},", 1) +
			"spec: {containers: [{name: main, ports: [{containerPort: http}]}]}\n",
			"document 4 (Pod job-0): spec.containers.ports.containerPort: must be a whole number, got a string"},
		{"a number too large", inputHead + "spec: {containers: [{name: main, ports: [{containerPort: 3000000000}]}]}\n",
			"document 4 (Pod job-0): spec.containers.ports.containerPort: must be a whole number from -2147483648 to 2147483647, got 3000000000"},
		{"a mapping for a string", node + "spec: {providerID: {id: 1}}\n", "document 1 (Node n0): spec.providerID: must be a string, got a mapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := input.Parse([]byte(tc.data))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error %v\nwant       %s", err, tc.want)
			}
			for _, leak := range []string{"Go ", "sim.", "documentHead", "json", "JSON", "struct", "v1.", "int32", "[]"} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("error %q names %q, which means nothing to whoever wrote the file", err, leak)
				}
			}
		})
	}
}

// YAML that does not parse is told with the line of the file, not of its document, and
// the document's lines; CRLF line ends read as LF.
func TestInvalidYAMLNamesTheLinesOfTheFile(t *testing.T) {
	node := "apiVersion: v1\nkind: Node\nmetadata: {name: n0}\n"
	for _, tc := range []struct {
		name, data, want string
	}{
		{"second document", node + "---\n# n1\napiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n   labels: x\n",
			"document 2 (lines 6-10): invalid YAML: line 10: mapping values are not allowed in this context"},
		{"a key twice", node + "---\napiVersion: v1\nkind: Node\nkind: Pod\n", `document 2 (lines 5-7): invalid YAML: line 7: key "kind" already set in map`},
		{"unclosed", "apiVersion: v1\nkind: Node\nmetadata: {name: n0\n", "document 1 (lines 1-3): invalid YAML: line 3: did not find expected ',' or '}'"},
		{"CRLF", strings.ReplaceAll(node, "\n", "\r\n") + "---\r\napiVersion: v1\r\nkind: [Node\r\n",
			"document 2 (lines 5-6): invalid YAML: line 6: did not find expected ',' or ']'"},
		{"a tab", node + "---\n\t\n", "document 2 (line 5): invalid YAML: found character that cannot start any token"},
		{"binary", "\x89PNG\r\n\x1a\n\x00\x00", "document 1 (lines 1-3): invalid YAML: invalid leading UTF-8 octet"},
		{"separator", node + "--- !Node\n", `line 4: invalid document separator "--- !Node": only a comment may follow ---`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := input.Parse([]byte(tc.data))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error %v\nwant       %s", err, tc.want)
			}
		})
	}
	sc, err := input.Parse([]byte(strings.ReplaceAll(inputHead+"spec: {containers: [{name: main}]}\n", "\n", "\r\n")))
	if err != nil || len(sc.Nodes) != 1 || len(sc.Queues) != 1 || len(sc.Jobs) != 1 {
		t.Fatalf("a CRLF scenario does not read: %v", err)
	}
}

func TestParseErrorsNameDocumentAndField(t *testing.T) {
	valid := string(simtest.Example(t, "preempt-tree.yaml"))
	tests := []struct {
		name, scenario, want string
	}{
		{"misspelt field", strings.Replace(valid, "minMember: 1", "minMembr: 1", 1), `(PodGroup demo/low-1): unknown field "minMembr"`},
		{"unknown kind", "apiVersion: v1\nkind: Service\nmetadata: {name: x}\n", `document 1: unsupported kind "Service"`},
		{"bad simulation duration", strings.Replace(valid, `sim.kai.scheduler/duration: "2h"`, `sim.kai.scheduler/duration: "two hours"`, 1),
			`metadata.annotations.sim.kai.scheduler/duration: invalid duration "two hours"`},
		{"pod of a missing PodGroup", strings.Replace(valid, "annotations: {pod-group-name: high-2}", "annotations: {pod-group-name: nobody}", 1),
			`annotation pod-group-name names PodGroup "nobody"`},
		// Without the annotation, the pod is told it has none, not that it names PodGroup "".
		{"pod without a PodGroup", strings.Replace(valid, "annotations: {pod-group-name: high-2}", "annotations: {}", 1),
			`Pod demo/high-2-0: has no pod-group-name annotation, so it belongs to no job: add metadata.annotations.pod-group-name with the name of its PodGroup`},
		{"pod-group-name as a label", strings.Replace(valid, "annotations: {pod-group-name: high-2}", "labels: {pod-group-name: high-2}", 1),
			`pod-group-name is a label here, and KAI reads it as an annotation: move it to metadata.annotations (pod-group-name: high-2)`},
		{"empty pod-group-name", strings.Replace(valid, "annotations: {pod-group-name: high-2}", `annotations: {pod-group-name: ""}`, 1),
			`its pod-group-name annotation is empty`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := input.Parse([]byte(tt.scenario))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// A key under sim.kai.scheduler/ that kai-sim does not read is an error naming the object, the
// line it is written on and the closest annotation kai-sim knows: a misspelt duration once
// left its job running forever, and the run stopped at 0:00:01 without a word.
func TestParseRefusesUnknownSimulationKeys(t *testing.T) {
	group := "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata:\n  name: job\n  annotations:\n    %s\nspec: {minMember: 1, queue: q}\n---\n"
	pod := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: job-0\n  annotations:\n    pod-group-name: job\n    %s\nspec: {containers: [{name: main, image: w}]}\n"
	// oneNodeOneQueue is 10 lines: the group's annotation is on line 16, the pod's on 25.
	for _, c := range []struct{ groupKey, podKey, want string }{
		{"sim.kai.scheduler/durration: 1h", "x: y", "document 3 (PodGroup job): line 16: metadata.annotations.sim.kai.scheduler/durration: " +
			"kai-sim has no such annotation; did you mean sim.kai.scheduler/duration? (it reads sim.kai.scheduler/checkpoint-interval, " +
			"sim.kai.scheduler/duration, sim.kai.scheduler/fail-after, sim.kai.scheduler/running-for, sim.kai.scheduler/startup, sim.kai.scheduler/submit-at)"},
		{"sim.kai.scheduler/submitAt: 5m", "x: y", "did you mean sim.kai.scheduler/submit-at?"},
		{"x: y", "sim.kai.scheduler/failafter: 1m", "document 4 (Pod job-0): line 25: metadata.annotations.sim.kai.scheduler/failafter: " +
			"kai-sim has no such annotation; did you mean sim.kai.scheduler/fail-after?"},
		{"sim.kai.scheduler/fail-after: 1m", "x: y", "document 3 (PodGroup job): line 16: metadata.annotations.sim.kai.scheduler/fail-after: " +
			"kai-sim reads it on a Pod, not on a PodGroup: move it there"},
		{"x: y", "sim.kai.scheduler/duration: 1m", "document 4 (Pod job-0): line 25: metadata.annotations.sim.kai.scheduler/duration: " +
			"kai-sim reads it on a PodGroup, not on a Pod: move it there"},
	} {
		_, err := input.Parse([]byte(oneNodeOneQueue + fmt.Sprintf(group, c.groupKey) + fmt.Sprintf(pod, c.podKey)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s / %s: error %v, want %q", c.groupKey, c.podKey, err, c.want)
		}
	}
	labelled := strings.Replace(oneNodeOneQueue, "metadata: {name: n0}", "metadata: {name: n0, labels: {sim.kai.scheduler/duration: 1h}}", 1)
	want := "document 1 (Node n0): line 3: metadata.labels.sim.kai.scheduler/duration: kai-sim reads its settings from annotations, not labels"
	if _, err := input.Parse([]byte(labelled + fmt.Sprintf(group, "x: y") + fmt.Sprintf(pod, "x: y"))); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a label: error %v, want %q", err, want)
	}
	// The annotations kai-sim knows, on the kinds they are read on, are read.
	sc, err := input.Parse([]byte(oneNodeOneQueue + fmt.Sprintf(group, "sim.kai.scheduler/duration: 1h\n    sim.kai.scheduler/startup: 1m") +
		fmt.Sprintf(pod, "sim.kai.scheduler/fail-after: 1m")))
	if err != nil || sc.Jobs[0].Duration != time.Hour || sc.Jobs[0].FailAfter["job-0"] != time.Minute {
		t.Errorf("known annotations: %v", err)
	}
}
