package explain_test

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// A waiting job under a configuration that consolidates is told which jobs a move would
// restart too early: those of its own queue and priority, which reclaim and preempt never
// take, protected by their preempt min-runtime. Without consolidation they are no concern of
// its, and are not named.
func TestExplainNamesTheProtectionsAMoveMeets(t *testing.T) {
	started := now.Add(-2 * time.Minute)
	node := func(name string) client.Object {
		return builders.MakeNode(name).Allocatable(v1.ResourceCPU, "8").Allocatable(v1.ResourceMemory, "32Gi").MaxPods(110).GPUs(4).Obj()
	}
	running := func(name, node string) []client.Object {
		pod := builders.MakePod("ns", name+"-0").PodGroup(name).Node(node).StartedAt(started).Phase(v1.PodRunning).
			Request(v1.ResourceCPU, "1").GPUs(2)
		return []client.Object{builders.MakePodGroup("ns", name).Queue("team").StartedAt(started).Obj(), pod.Obj()}
	}
	objects := []client.Object{
		builders.MakeQueue("team").PreemptMinRuntime(time.Hour).Obj(),
		node("n1"), node("n2"),
		builders.MakePodGroup("ns", "big").Queue("team").Obj(),
		builders.MakePod("ns", "big-0").PodGroup("big").Request(v1.ResourceCPU, "1").GPUs(4).Obj(),
	}
	objects = append(objects, running("left", "n1")...)
	objects = append(objects, running("right", "n2")...)

	consolidating := strings.Replace(noDefaults, `"allocate, reclaim, preempt"`, `"allocate, consolidation, reclaim, preempt"`, 1)
	out, _ := explainJobAndQueue(t, consolidating, "ns/big", "team", objects...)
	expectAll(t, out, "consolidation: victims are protected by min-runtime: ns/left until 2026-01-01T12:58:00Z (1h0m0s from queue team), ns/right until")

	out, _ = explainJobAndQueue(t, noDefaults, "ns/big", "team", objects...)
	if strings.Contains(out, "consolidation") || strings.Contains(out, "ns/left") {
		t.Errorf("without consolidation, the jobs of its own queue and priority are no concern of the waiting job's:\n%s", out)
	}
}
