package explain_test

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// A waiting job that must run in one rack is shown its racks, roomiest first, with what each
// has free and which jobs there min-runtime protects from it, until when.
func TestExplainShowsEachRackWithItsFreeRoomAndProtectedJobs(t *testing.T) {
	started := now.Add(-2 * time.Minute)
	rackNode := func(name, rack string) client.Object {
		return builders.MakeNode(name).Label("example.com/rack", rack).Allocatable(v1.ResourceCPU, "8").
			Allocatable(v1.ResourceMemory, "32Gi").MaxPods(110).GPUs(8).Obj()
	}
	objects := []client.Object{
		builders.MakeTopology("dc", "example.com/rack=rack"),
		builders.MakeQueue("team").Obj(), builders.MakeQueue("other").ReclaimMinRuntime(30 * time.Minute).Obj(),
		rackNode("n1", "r1"), rackNode("n2", "r1"), rackNode("n3", "r2"), rackNode("n4", "r2"),
		builders.MakePodGroup("ns", "wait").Queue("team").MinMember(2).InTopology("dc", "rack", "").Obj(),
		builders.MakePod("ns", "wait-0").PodGroup("wait").GPUs(8).Obj(),
		builders.MakePod("ns", "wait-1").PodGroup("wait").GPUs(8).Obj(),
		builders.MakePodGroup("ns", "guarded").Queue("other").StartedAt(started).Obj(),
		builders.MakePod("ns", "guarded-0").PodGroup("guarded").Node("n1").StartedAt(started).Phase(v1.PodRunning).GPUs(4).Obj(),
	}
	out := explainJob(t, "ns/wait", objects...)
	expectAll(t, out,
		"It must run inside one rack of topology dc.",
		"It asks for 16 GPUs",
		"Its rack domains, roomiest first:",
		"r2: 16 GPUs free, 0 GPUs releasing, of 16 GPUs (2 nodes)\n      no job here is protected from it by min-runtime",
		"r1: 12 GPUs free, 0 GPUs releasing, of 16 GPUs (2 nodes)\n      reclaim: victims are protected by min-runtime: ns/guarded until 2026-01-01T12:28:00Z")
	if strings.Index(out, "r2: ") > strings.Index(out, "r1: ") {
		t.Errorf("the roomier rack r2 should come first:\n%s", out)
	}
}

// A constraint naming a topology that does not exist is said plainly.
func TestExplainSaysWhenTheTopologyDoesNotExist(t *testing.T) {
	objects := []client.Object{
		builders.MakeQueue("team").Obj(),
		builders.MakeNode("n1").Allocatable(v1.ResourceCPU, "8").Allocatable(v1.ResourceMemory, "32Gi").MaxPods(110).GPUs(8).Obj(),
		builders.MakePodGroup("ns", "wait").Queue("team").InTopology("nowhere", "rack", "").Obj(),
		builders.MakePod("ns", "wait-0").PodGroup("wait").GPUs(1).Obj(),
	}
	expectAll(t, explainJob(t, "ns/wait", objects...),
		`Its topology constraint cannot be met: its topologyConstraint names topology "nowhere", which does not exist.`)
}
