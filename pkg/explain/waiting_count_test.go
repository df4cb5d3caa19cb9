package explain_test

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	"github.com/kai-minruntime/kai-scheduler/pkg/explain"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// A job waiting with one pod says "1 pod pending", not "1 pods": its count is written with
// the helper kai-sim's report uses.
func TestExplainCountsOnePendingPodInTheSingular(t *testing.T) {
	scheme, err := install.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		builders.MakePodGroup("ns", "wait").Queue("team").Obj(),
		builders.MakePod("ns", "wait-0").PodGroup("wait").GPUs(1).Obj(),
		builders.MakeNode("n1").Allocatable(v1.ResourceCPU, "8").MaxPods(110).GPUs(2).Obj(),
		builders.MakeQueue("team").Obj()).Build()
	ctx := context.Background()
	c, err := explain.Load(ctx, reader, "kai-scheduler", nil, clocktesting.NewFakePassiveClock(now))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := c.PodGroup(ctx, &out, "ns/wait"); err != nil {
		t.Fatal(err)
	}
	expectAll(t, out.String(), "It waits: 1 pod pending.")
}
