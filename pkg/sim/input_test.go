package sim_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
)

const inputHead = `apiVersion: v1
kind: Node
metadata: {name: n0}
status: {allocatable: {cpu: "8", memory: 64Gi, nvidia.com/gpu: "4"}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: q}
spec: {resources: {gpu: {quota: 4, limit: -1, overQuotaWeight: 1}, cpu: {quota: -1, limit: -1, overQuotaWeight: 1}, memory: {quota: -1, limit: -1, overQuotaWeight: 1}}}
---
apiVersion: scheduling.run.ai/v2alpha2
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
			sc, err := sim.Parse([]byte(inputHead + line + ending))
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
		_, err := sim.Parse([]byte(inputHead + spec + "\n"))
		want := fmt.Sprintf("document 4 (Pod job-0): %s", field)
		if err == nil || err.Error() != want {
			t.Errorf("error %v, want %q", err, want)
		}
	}
	node := strings.Replace(inputHead, `nvidia.com/gpu: "4"`, `nvidia.com/gpu: "-4"`, 1)
	if _, err := sim.Parse([]byte(node + `spec: {containers: [{name: main, image: w}]}`)); err == nil ||
		!strings.Contains(err.Error(), "document 1 (Node n0): status.allocatable[nvidia.com/gpu]: must be non-negative, got -4") {
		t.Errorf("a node with -4 GPUs: error %v", err)
	}
}

// An empty scenario is a valid, empty result: the JSON contract has arrays, never null.
func TestEmptyScenarioGivesEmptyArrays(t *testing.T) {
	sc, err := sim.Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	result, err := sim.Run(context.Background(), sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := sim.WriteJSON(&out, result); err != nil {
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
