package explain_test

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// A waiting job is told only the protections of jobs on nodes its pods could use: a job on a
// node whose taint it does not tolerate, on a node its selector does not pick, or on a node
// without GPUs frees nothing for it, and is counted apart with why its node is refused.
func TestExplainLeavesOutProtectionsOnNodesThePodCannotUse(t *testing.T) {
	started := now.Add(-2 * time.Minute)
	taint := v1.Taint{Key: "dedicated", Value: "infer", Effect: v1.TaintEffectNoSchedule}
	gpuNode := func(name, pool string) *builders.NodeWrapper {
		return builders.MakeNode(name).Label("pool", pool).Allocatable(v1.ResourceCPU, "8").
			Allocatable(v1.ResourceMemory, "32Gi").MaxPods(110).GPUs(2)
	}
	// running is a job of queue running on node, protected when its queue is other.
	running := func(name, queue, node string, gpus int64) []client.Object {
		pod := builders.MakePod("ns", name+"-0").PodGroup(name).Node(node).StartedAt(started).Phase(v1.PodRunning).
			Request(v1.ResourceCPU, "1")
		if gpus > 0 {
			pod.GPUs(gpus)
		}
		return []client.Object{builders.MakePodGroup("ns", name).Queue(queue).StartedAt(started).Obj(), pod.Obj()}
	}
	cluster := func(tolerate bool) []client.Object {
		wait := builders.MakePod("ns", "wait-0").PodGroup("wait").GPUs(2).NodeSelector("pool", "gpu")
		if tolerate {
			wait.Toleration(v1.Toleration{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "infer", Effect: v1.TaintEffectNoSchedule})
		}
		objects := []client.Object{
			builders.MakeQueue("team").Obj(), builders.MakeQueue("other").ReclaimMinRuntime(30 * time.Minute).Obj(),
			builders.MakeQueue("open").Obj(),
			builders.MakePodGroup("ns", "wait").Queue("team").Obj(), wait.Obj(),
			gpuNode("n1", "gpu").Obj(),
			gpuNode("n2", "gpu").Taint(taint).Obj(),
			gpuNode("n3", "cpu").Obj(),
			builders.MakeNode("n4").Label("pool", "gpu").Allocatable(v1.ResourceCPU, "8").Allocatable(v1.ResourceMemory, "32Gi").MaxPods(110).Obj(),
		}
		objects = append(objects, running("near", "other", "n1", 2)...)
		objects = append(objects, running("tainted", "other", "n2", 1)...)
		objects = append(objects, running("unprotected", "open", "n2", 1)...) // no min-runtime: nothing to tell
		objects = append(objects, running("unselected", "other", "n3", 2)...)
		objects = append(objects, running("gpuless", "other", "n4", 0)...)
		return objects
	}

	out := explainJob(t, "ns/wait", cluster(false)...)
	shown, hidden, _ := strings.Cut(out, "not shown")
	expectAll(t, shown, "Min-runtime protections it meets now (among running jobs it could take from on nodes its pods can use",
		"victims are protected by min-runtime: ns/near until 2026-01-01T12:28:00Z")
	for _, name := range []string{"ns/tainted", "ns/unselected", "ns/gpuless", "ns/unprotected"} {
		if strings.Contains(shown, name) {
			t.Errorf("%s runs on a node the pod cannot use, yet its protection is told:\n%s", name, out)
		}
	}
	expectAll(t, out, "3 protected jobs on nodes this job's pods cannot use are not shown (evicting them would make no room for this job):",
		"  ns/gpuless on n4 (Insufficient nvidia.com/gpu)",
		"  ns/tainted on n2 (node(s) had untolerated taint {dedicated: infer})",
		"  ns/unselected on n3 (node(s) didn't match Pod's node affinity/selector)")
	if strings.Contains(hidden, "ns/unprotected") {
		t.Errorf("a job no min-runtime protects is counted among the protected ones:\n%s", out)
	}

	// Tolerating the taint makes n2 usable: its protected job is told, the others still not.
	out = explainJob(t, "ns/wait", cluster(true)...)
	shown, _, _ = strings.Cut(out, "not shown")
	expectAll(t, shown, "ns/tainted until")
	expectAll(t, out, "2 protected jobs on nodes this job's pods cannot use are not shown")
}

// One protected job left out is told in the singular.
func TestExplainCountsOneProtectionLeftOutInTheSingular(t *testing.T) {
	started := now.Add(-2 * time.Minute)
	out := explainJob(t, "ns/wait",
		builders.MakeQueue("team").Obj(), builders.MakeQueue("other").ReclaimMinRuntime(30*time.Minute).Obj(),
		builders.MakePodGroup("ns", "wait").Queue("team").Obj(),
		builders.MakePod("ns", "wait-0").PodGroup("wait").GPUs(1).Obj(),
		builders.MakeNode("n1").Allocatable(v1.ResourceCPU, "8").MaxPods(110).GPUs(1).
			Taint(v1.Taint{Key: "dedicated", Value: "infer", Effect: v1.TaintEffectNoExecute}).Obj(),
		builders.MakePodGroup("ns", "run").Queue("other").StartedAt(started).Obj(),
		builders.MakePod("ns", "run-0").PodGroup("run").GPUs(1).Node("n1").StartedAt(started).Phase(v1.PodRunning).Obj())
	expectAll(t, out, "No running job it could take from on nodes its pods can use is protected by min-runtime now.",
		"1 protected job on nodes this job's pods cannot use is not shown (evicting it would make no room for this job):",
		"  ns/run on n1 (node(s) had untolerated taint {dedicated: infer})")
}

func expectAll(t *testing.T, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("lacks %q:\n%s", w, text)
		}
	}
}
