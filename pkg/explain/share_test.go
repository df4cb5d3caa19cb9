package explain_test

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/explain"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// notebookExplainer is issue 38's cluster: research (quota 0) runs 16 GPUs on two 8-GPU
// nodes, production (quota 16) waits with a gang of 2 x 8, and a one-GPU notebook waits in
// default-queue, whose queues have the given GPU quota (-1 as the chart had them, 0 as
// upstream's).
func notebookExplainer(t *testing.T, defaultQuota float64) *explain.Explainer {
	t.Helper()
	started := now.Add(-time.Minute)
	unlimited := v2.QueueResource{Quota: -1, OverQuotaWeight: 1, Limit: -1}
	objects := []client.Object{
		builders.MakeNode("a").Allocatable(v1.ResourceCPU, "64").Allocatable(v1.ResourceMemory, "512Gi").MaxPods(110).GPUs(8).Obj(),
		builders.MakeNode("b").Allocatable(v1.ResourceCPU, "64").Allocatable(v1.ResourceMemory, "512Gi").MaxPods(110).GPUs(8).Obj(),
		builders.MakeQueue("production").GPUQuota(16).Obj(),
		builders.MakeQueue("research").GPUQuota(0).ReclaimMinRuntime(2 * time.Minute).Obj(),
		builders.MakeQueue("default-parent-queue").Resources(v2.QueueResource{Quota: defaultQuota, OverQuotaWeight: 1, Limit: -1}, unlimited, unlimited).Obj(),
		builders.MakeQueue("default-queue").Parent("default-parent-queue").Resources(v2.QueueResource{Quota: defaultQuota, OverQuotaWeight: 1, Limit: -1}, unlimited, unlimited).Obj(),
		builders.MakePodGroup("research", "pretrain").Queue("research").PriorityClass("train").MinMember(2).StartedAt(started).Obj(),
		builders.MakePod("research", "pretrain-0").PodGroup("pretrain").GPUs(8).Node("a").StartedAt(started).Obj(),
		builders.MakePod("research", "pretrain-1").PodGroup("pretrain").GPUs(8).Node("b").StartedAt(started).Obj(),
		builders.MakePodGroup("production", "serve").Queue("production").PriorityClass("train").MinMember(2).Obj(),
		builders.MakePod("production", "serve-0").PodGroup("serve").GPUs(8).Obj(),
		builders.MakePod("production", "serve-1").PodGroup("serve").GPUs(8).Obj(),
		builders.MakePodGroup("default", "notebook").Queue("default-queue").PriorityClass("train").Obj(),
		builders.MakePod("default", "notebook-0").PodGroup("notebook").GPUs(1).Obj(),
	}
	scheme, err := install.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).Build()
	c, err := explain.Load(context.Background(), reader, "kai-scheduler", []byte(noDefaults), clocktesting.NewFakePassiveClock(now))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func explainQueue(t *testing.T, c *explain.Explainer, name string) string {
	t.Helper()
	var out strings.Builder
	if err := c.Queue(context.Background(), &out, name); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func explainPG(t *testing.T, c *explain.Explainer, id string) string {
	t.Helper()
	var out strings.Builder
	if err := c.PodGroup(context.Background(), &out, model.JobID(id)); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func expectLines(t *testing.T, what, out string, want ...string) {
	t.Helper()
	for _, line := range want {
		if !strings.Contains(out, line) {
			t.Errorf("%s does not say %q:\n%s", what, line, out)
		}
	}
}

// A user told "at or above its fair share" finds every number behind the verdict: the
// queue's settings, request, holding, deserved quota and fair share, how its parent's
// share was divided, and what its waiting job would add at each level of its path.
func TestExplainShowsTheNumbersBehindFairShare(t *testing.T) {
	c := notebookExplainer(t, 0)
	expectLines(t, "explain queue production", explainQueue(t, c, "production"),
		"resource  quota  limit  weight  requested  allocated  deserved  fair share",
		"gpu       16     -1     1       16         0          16        16",
		"gpu: it is owed 16 GPUs more of its deserved quota",
		"gpu: the top-level queues share the cluster's 16 GPUs; they deserve 16 in all (default-parent-queue 0, production 16, research 0).",
		"What is left over the quotas (0 GPUs) is shared")
	expectLines(t, "explain queue research", explainQueue(t, c, "research"),
		"gpu       0      -1     1       16         16         0         0",
		"gpu: it holds 16 GPUs above its fair share")
	expectLines(t, "explain pg production/serve", explainPG(t, c, "production/serve"),
		"Fair share, for reclaim (each queue of its path, with this job's 16 GPUs",
		"production: gpu: holds 0, with this job 16; deserved 16, fair share 16",
		"within its deserved quota",
		"At production it stays within its share: it may reclaim from the queues beside production that hold more than theirs.")
}

// A quota of -1 beside finite quotas over-subscribes them; explain says so, and that each
// quota is still owed in full.
func TestExplainTellsOverSubscribedAndUnlimitedQuotas(t *testing.T) {
	c := notebookExplainer(t, -1)
	expectLines(t, "explain queue production", explainQueue(t, c, "production"),
		"they deserve 17 in all (default-parent-queue 1, production 16, research 0).",
		"Their quotas are over-subscribed: each is still owed in full, none is reduced for another, and nothing is left over quota.",
		"Quota -1 makes default-parent-queue deserve all it asks")
	expectLines(t, "explain pg production/serve", explainPG(t, c, "production/serve"),
		"production: gpu: holds 0, with this job 16; deserved 16, fair share 16")
}
