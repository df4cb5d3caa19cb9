package explain_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	"github.com/kai-minruntime/kai-scheduler/pkg/explain"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

const noDefaults = `actions: "allocate, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: proportion
  - name: minruntime
  - name: predicates
`

// explainTeamJob explains a job of queue team that started two minutes ago; team, with
// the min-runtimes given (nil: unset), has a sibling from which reclaimers may come.
func explainTeamJob(t *testing.T, preempt, reclaim *metav1.Duration) string {
	t.Helper()
	started := now.Add(-2 * time.Minute)
	group := builders.MakePodGroup("ns", "train").Queue("team").StartedAt(started).Obj()
	pod := builders.MakePod("ns", "train-0").PodGroup("train").GPUs(1).Node("n1").StartedAt(started).Obj()
	node := builders.MakeNode("n1").Allocatable(v1.ResourceCPU, "8").Allocatable(v1.ResourceMemory, "32Gi").MaxPods(110).GPUs(2).Obj()
	team := builders.MakeQueue("team")
	if preempt != nil {
		team.PreemptMinRuntime(preempt.Duration)
	}
	if reclaim != nil {
		team.ReclaimMinRuntime(reclaim.Duration)
	}
	other := builders.MakeQueue("other").Obj()
	return explainJob(t, "ns/train", group, pod, node, team.Obj(), other)
}

// explainJob explains job id in a cluster of the given objects, at now.
func explainJob(t *testing.T, id api.JobID, objects ...client.Object) string {
	t.Helper()
	scheme, err := install.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).Build()
	ctx := context.Background()
	c, err := explain.Load(ctx, reader, "kai-scheduler", []byte(noDefaults), clocktesting.NewFakePassiveClock(now))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := c.PodGroup(ctx, &out, id); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// A min-runtime of 0s protects nothing: explain says who may take the job's resources at
// any time, and when the others may, never that a protection ended when the job started.
func TestExplainTellsAZeroMinRuntimeApart(t *testing.T) {
	startedLine := "a protection ended at 2026-01-01T11:58:00Z"
	for _, c := range []struct {
		name             string
		preempt, reclaim *metav1.Duration
		want             []string
	}{{
		name: "reclaim only", reclaim: &metav1.Duration{Duration: 30 * time.Minute},
		want: []string{
			"0s from the default: not protected",
			"30m0s from queue team: protected until 2026-01-01T12:28:00Z (28m0s from now)",
			"A min-runtime of 0s lets higher-priority jobs of queue team take its resources at any time.",
			"No other job can take them before 2026-01-01T12:28:00Z (28m0s from now).",
		},
	}, {
		name: "preempt only", preempt: &metav1.Duration{Duration: 10 * time.Minute},
		want: []string{
			"A min-runtime of 0s lets jobs from outside team take its resources at any time.",
			"No other job can take them before 2026-01-01T12:08:00Z (8m0s from now).",
		},
	}, {
		name: "both", preempt: &metav1.Duration{Duration: 10 * time.Minute}, reclaim: &metav1.Duration{Duration: 30 * time.Minute},
		want: []string{"No job can take its resources before 2026-01-01T12:08:00Z (8m0s from now)."},
	}, {
		name: "neither",
		want: []string{
			"Every min-runtime above is zero: any job that may evict it may do so at any time.",
			"The PodGroup's status shows no protection (kubectl get pg shows no Preempt-Until or Reclaim-Until).",
		},
	}} {
		t.Run(c.name, func(t *testing.T) {
			out := explainTeamJob(t, c.preempt, c.reclaim)
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q", w)
				}
			}
			if strings.Contains(out, startedLine) {
				t.Errorf("output says a 0s protection ended at the start (%q)", startedLine)
			}
			if t.Failed() {
				t.Logf("output:\n%s", out)
			}
		})
	}
}

// A pending gang counted in sub-groups: explain says what it needs, in ready sub-groups, and
// names the replicas short of their minimum.
func TestExplainNamesSubGroupsShortOfTheirMinimum(t *testing.T) {
	group := builders.MakePodGroup("ns", "infer").Queue("team").MinSubGroup(2).
		SubGroup("r-0", 2).SubGroup("r-1", 2).SubGroup("r-2", 2).Obj()
	objects := []client.Object{group, builders.MakeQueue("team").Obj()}
	for r := range 3 {
		for k := range 2 {
			objects = append(objects, builders.MakePod("ns", fmt.Sprintf("infer-%d-%d", r, k)).PodGroup("infer").
				SubGroup(fmt.Sprintf("r-%d", r)).GPUs(1).Obj())
		}
	}
	out := explainJob(t, "ns/infer", objects...)
	for _, w := range []string{
		"gang of 4",
		"gang:     needs 2 of its 3 sub-groups ready (at least 4 pods): 0 are (minSubGroup)",
		"Sub-groups short of their minimum:",
		"sub-group r-2 needs 2 pods: 0 placed",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}
