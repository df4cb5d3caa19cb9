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
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/explain"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
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
// the min-runtimes given (nil: unset), has a sibling from which reclaimers may come. The
// PodGroup carries the annotations given, as key, value pairs.
func explainTeamJob(t *testing.T, preempt, reclaim *metav1.Duration, annotations ...string) string {
	t.Helper()
	started := now.Add(-2 * time.Minute)
	pg := builders.MakePodGroup("ns", "train").Queue("team").StartedAt(started)
	for i := 0; i+1 < len(annotations); i += 2 {
		pg.Annotation(annotations[i], annotations[i+1])
	}
	group := pg.Obj()
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
func explainJob(t *testing.T, id model.JobID, objects ...client.Object) string {
	t.Helper()
	scheme, err := install.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	return explainPodGroup(t, fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).Build(), id)
}

// explainPodGroup is what kubectl kai explain pg says of job in the cluster reader holds, at
// now, with noDefaults.
func explainPodGroup(t *testing.T, reader client.Reader, job model.JobID) string {
	t.Helper()
	ctx := context.Background()
	c, err := explain.Load(ctx, reader, "kai-scheduler", []byte(noDefaults), clocktesting.NewFakePassiveClock(now))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := c.PodGroup(ctx, &out, job); err != nil {
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

// A waiting job's preemption delay is explained with its window and its end: counted from
// its creation, or from its last eviction once that is later; a bad annotation is named.
func TestExplainTellsAPendingJobsPreemptionDelay(t *testing.T) {
	scheme, err := install.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	node := builders.MakeNode("n1").Allocatable(v1.ResourceCPU, "8").Allocatable(v1.ResourceMemory, "32Gi").MaxPods(110).GPUs(2).Obj()
	for _, c := range []struct {
		name  string
		group *builders.PodGroupWrapper
		want  string
	}{
		{"inside the window, from creation",
			builders.MakePodGroup("ns", "wait").Queue("team").CreatedAt(now.Add(-time.Minute)).PreemptionDelay(5 * time.Minute),
			"Its preemption delay of 5m0s from its creation (2026-01-01T11:59:00Z) ends at 2026-01-01T12:04:00Z (4m0s from now): until then it takes free capacity but evicts no job."},
		{"re-armed by an eviction",
			builders.MakePodGroup("ns", "wait").Queue("team").CreatedAt(now.Add(-time.Hour)).EvictedAt(now.Add(-30 * time.Second)).PreemptionDelay(time.Minute),
			"Its preemption delay of 1m0s from its last eviction (2026-01-01T11:59:30Z) ends at 2026-01-01T12:00:30Z (30s from now)"},
		{"ended",
			builders.MakePodGroup("ns", "wait").Queue("team").CreatedAt(now.Add(-time.Hour)).PreemptionDelay(time.Minute),
			"ended at 2026-01-01T11:01:00Z (59m0s ago): it may evict other jobs."},
		{"a bad annotation",
			builders.MakePodGroup("ns", "wait").Queue("team").Annotation("kai.scheduler/preemption-delay", "5"),
			`Its preemption delay is ignored, so it may evict other jobs at once: annotation kai.scheduler/preemption-delay: "5" is not a duration`},
	} {
		t.Run(c.name, func(t *testing.T) {
			pod := builders.MakePod("ns", "wait-0").PodGroup("wait").GPUs(4).Obj()
			reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(c.group.Obj(), pod, node, builders.MakeQueue("team").Obj()).Build()
			if out := explainPodGroup(t, reader, "ns/wait"); !strings.Contains(out, c.want) {
				t.Errorf("explain says:\n%s\nwant it to say %q", out, c.want)
			}
		})
	}
}

// withStaleness is noDefaults running stalegangeviction too.
var withStaleness = strings.Replace(noDefaults, `"allocate, reclaim, preempt"`, `"allocate, reclaim, preempt, stalegangeviction"`, 1)

// A running gang below its minimum is told when stalegangeviction evicts it: from its failed
// pod's end when one tells it, else at the latest one grace period from now.
func TestExplainTellsAStaleGangWhenItIsEvicted(t *testing.T) {
	for _, c := range []struct {
		name, config string
		failed       bool
		grace        time.Duration
		want         string
	}{
		{"failed pod", withStaleness, true, time.Minute,
			"Short since 2026-01-01T11:59:40Z; stalegangeviction evicts it at 2026-01-01T12:00:40Z (40s from now) when its staleness grace period of 1m0s ends, min-runtime or not."},
		{"deleted pod", withStaleness, false, time.Minute,
			"stalegangeviction evicts it by 2026-01-01T12:01:00Z at the latest (1m0s from now), min-runtime or not."},
		{"disabled", withStaleness, true, -time.Second, "Its staleness grace period is -1s (negative): stalegangeviction never evicts it."},
		{"not configured", noDefaults, true, time.Minute, "The scheduler's configuration runs no stalegangeviction: it is not evicted for it."},
	} {
		t.Run(c.name, func(t *testing.T) {
			scheme, err := install.Scheme()
			if err != nil {
				t.Fatal(err)
			}
			started := now.Add(-time.Hour)
			objects := []client.Object{
				builders.MakePodGroup("ns", "gang").Queue("team").MinMember(3).StartedAt(started).StalenessGracePeriod(c.grace).Obj(),
				builders.MakeNode("n1").Allocatable(v1.ResourceCPU, "8").Allocatable(v1.ResourceMemory, "32Gi").MaxPods(110).GPUs(4).Obj(),
				builders.MakeQueue("team").Obj(),
			}
			for _, name := range []string{"gang-0", "gang-1"} {
				objects = append(objects, builders.MakePod("ns", name).PodGroup("gang").GPUs(1).Node("n1").StartedAt(started).Phase(v1.PodRunning).CreatedAt(started).Obj())
			}
			if c.failed {
				pod := builders.MakePod("ns", "gang-2").PodGroup("gang").GPUs(1).Node("n1").Phase(v1.PodFailed).CreatedAt(started).Obj()
				pod.Status.ContainerStatuses = []v1.ContainerStatus{{State: v1.ContainerState{
					Terminated: &v1.ContainerStateTerminated{FinishedAt: metav1.NewTime(now.Add(-20 * time.Second))}}}}
				objects = append(objects, pod)
			}
			reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).Build()
			ctx := context.Background()
			cluster, err := explain.Load(ctx, reader, "kai-scheduler", []byte(c.config), clocktesting.NewFakePassiveClock(now))
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			if err := cluster.PodGroup(ctx, &out, "ns/gang"); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"A stale gang, holding its resources without progress: its gang has had 2 of the 3 pods it needs.", c.want} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
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

// explain names the workload behind a PodGroup, under its name: the pod grouper's
// kai.scheduler/workload annotation, else the PodGroup's controller; a PodGroup made by hand
// names none, and its explanation is as it was.
func TestExplainNamesTheWorkload(t *testing.T) {
	controller := true
	for _, c := range []struct {
		name   string
		group  func(*v2alpha2.PodGroup)
		want   string
		absent bool
	}{
		{"the grouper's annotation", func(g *v2alpha2.PodGroup) {
			g.Annotations = map[string]string{"kai.scheduler/workload": "PyTorchJob.kubeflow.org/train"}
			// The annotation names the top owner, where the reference may name the gang's
			// object (a CronJob's Job): the annotation wins.
			g.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "train-28", Controller: &controller}}
		}, "PodGroup ns/train\n  workload: PyTorchJob.kubeflow.org/train\n  queue:    team\n", false},
		{"the controller", func(g *v2alpha2.PodGroup) {
			g.OwnerReferences = []metav1.OwnerReference{
				{APIVersion: "v1", Kind: "ConfigMap", Name: "settings"},
				{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: "raycluster", Controller: &controller},
			}
		}, "  workload: RayCluster.ray.io/raycluster\n", false},
		{"the only owner", func(g *v2alpha2.PodGroup) {
			g.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "nightly"}}
		}, "  workload: Job.batch/nightly\n", false},
		{"a core kind", func(g *v2alpha2.PodGroup) {
			g.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "notebook", Controller: &controller}}
		}, "  workload: Pod/notebook\n", false},
		{"made by hand", func(*v2alpha2.PodGroup) {}, "PodGroup ns/train\n  queue:    team\n", true},
		{"two owners, no controller", func(g *v2alpha2.PodGroup) {
			g.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "a"}, {APIVersion: "v1", Kind: "ConfigMap", Name: "b"}}
		}, "PodGroup ns/train\n  queue:    team\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			group := builders.MakePodGroup("ns", "train").Queue("team").Obj()
			c.group(group)
			pod := builders.MakePod("ns", "train-0").PodGroup("train").GPUs(1).Obj()
			node := builders.MakeNode("n1").Allocatable(v1.ResourceCPU, "8").Allocatable(v1.ResourceMemory, "32Gi").MaxPods(110).GPUs(2).Obj()
			out := explainJob(t, "ns/train", group, pod, node, builders.MakeQueue("team").Obj())
			if !strings.Contains(out, c.want) {
				t.Errorf("explain says:\n%s\nwant it to say %q", out, c.want)
			}
			if c.absent && strings.Contains(out, "workload") {
				t.Errorf("explain names a workload of a PodGroup made by hand:\n%s", out)
			}
		})
	}
}
