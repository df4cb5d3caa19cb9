package podgrouper_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/podgrouper"
)

// The built-in kinds: a batch Job is one gang of the pods it runs at once, a CronJob's each
// Job its own; a Deployment's pods, across ReplicaSets, one PodGroup of gang one at inference
// priority; a StatefulSet's one PodGroup; a Spark application's driver and executors one
// PodGroup named by its selector; an Argo Workflow is looked through.
func TestBuiltInKinds(t *testing.T) {
	job := func(name string, spec map[string]any) *unstructured.Unstructured {
		return workload("batch/v1", "Job", name, spec)
	}
	cron := workload("batch/v1", "CronJob", "nightly", nil)
	nightlyRun := job("nightly-29000", map[string]any{"parallelism": int64(4)})
	controls(cron, nightlyRun)
	deploy := workload("apps/v1", "Deployment", "serve", nil)
	rs := workload("apps/v1", "ReplicaSet", "serve-7f9", nil)
	controls(deploy, rs)
	sts := workload("apps/v1", "StatefulSet", "db", nil)
	flow := workload("argoproj.io/v1alpha1", "Workflow", "pipeline", nil)
	step := job("pipeline-step", map[string]any{"parallelism": int64(2)})
	controls(flow, step)
	experiment := workload("kubeflow.org/v1beta1", "Experiment", "sweep", nil)
	trial := workload("kubeflow.org/v1beta1", "Trial", "sweep-1", nil)
	controls(experiment, trial)
	tuned := job("tune", map[string]any{"parallelism": int64(2)})
	controls(trial, tuned)
	driver := podOf("spark-driver", map[string]string{podgrouper.SparkAppLabel: "spark-abc"}, nil)
	driverObject := &unstructured.Unstructured{}
	driverObject.SetAPIVersion("v1")
	driverObject.SetKind("Pod")
	driverObject.SetNamespace("ns")
	driverObject.SetName("spark-driver")
	driverObject.SetUID("uid-spark-driver")

	for _, tc := range []struct {
		name      string
		pod       *v1.Pod
		objects   []*unstructured.Unstructured
		group     string
		minMember int32
		priority  string
		workload  string
	}{
		{name: "a Job runs min(parallelism, completions)", pod: podOf("a-0", nil, job("a", map[string]any{"parallelism": int64(8), "completions": int64(3)})),
			objects: []*unstructured.Unstructured{job("a", map[string]any{"parallelism": int64(8), "completions": int64(3)})},
			group:   "pg-a-uid-a", minMember: 3, priority: "train", workload: "Job.batch/a"},
		{name: "a Job of more completions than parallelism runs independent pods", pod: podOf("q-0", nil, job("q", map[string]any{"parallelism": int64(4), "completions": int64(5)})),
			objects: []*unstructured.Unstructured{job("q", map[string]any{"parallelism": int64(4), "completions": int64(5)})},
			group:   "pg-q-uid-q", minMember: 1, priority: "train", workload: "Job.batch/q"},
		{name: "a Katib Trial is looked through", pod: podOf("tune-0", nil, tuned), objects: []*unstructured.Unstructured{experiment, trial, tuned},
			group: "pg-tune-uid-tune", minMember: 2, priority: "train", workload: "Job.batch/tune"},
		{name: "a Job without parallelism is a gang of one", pod: podOf("b-0", nil, job("b", nil)), objects: []*unstructured.Unstructured{job("b", nil)},
			group: "pg-b-uid-b", minMember: 1, priority: "train", workload: "Job.batch/b"},
		{name: "a CronJob's Job is the gang, the CronJob the workload", pod: podOf("nightly-29000-x", nil, nightlyRun),
			objects: []*unstructured.Unstructured{cron, nightlyRun},
			group:   "pg-nightly-29000-uid-nightly-29000", minMember: 4, priority: "train", workload: "CronJob.batch/nightly"},
		{name: "a Deployment's pods share one PodGroup at inference", pod: podOf("serve-7f9-x", nil, rs), objects: []*unstructured.Unstructured{deploy, rs},
			group: "pg-serve-uid-serve", minMember: 1, priority: "inference", workload: "Deployment.apps/serve"},
		{name: "a StatefulSet is one PodGroup", pod: podOf("db-0", nil, sts), objects: []*unstructured.Unstructured{sts},
			group: "pg-db-uid-db", minMember: 1, priority: "train", workload: "StatefulSet.apps/db"},
		{name: "a wrapping Workflow is looked through", pod: podOf("pipeline-step-x", nil, step), objects: []*unstructured.Unstructured{flow, step},
			group: "pg-pipeline-step-uid-pipeline-step", minMember: 2, priority: "train", workload: "Job.batch/pipeline-step"},
		{name: "a Spark driver", pod: driver, group: "spark-abc", minMember: 1, priority: "train"},
		{name: "a Spark executor joins its driver", pod: podOf("spark-exec-1", map[string]string{podgrouper.SparkAppLabel: "spark-abc"}, driverObject),
			objects: []*unstructured.Unstructured{driverObject}, group: "spark-abc", minMember: 1, priority: "train", workload: "Pod/spark-driver"},
		{name: "a bare pod is its own", pod: podOf("solo", nil, nil), group: "pg-solo-uid-solo", minMember: 1, priority: "train"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := groupOf(t, tc.pod, tc.objects...).PodGroup
			if g.Name != tc.group || g.Spec.MinMember != tc.minMember || g.Spec.PriorityClassName != tc.priority {
				t.Errorf("PodGroup %s, gang %d, priority %q; want %s, gang %d, priority %q",
					g.Name, g.Spec.MinMember, g.Spec.PriorityClassName, tc.group, tc.minMember, tc.priority)
			}
			if got := g.Annotations[podgrouper.WorkloadAnnotation]; got != tc.workload {
				t.Errorf("workload %q, want %q", got, tc.workload)
			}
		})
	}
}

// What the user sets on the workload reaches its PodGroup: the priority class as a label, top
// owner first, then the pod's spec (when the class exists), then the cluster's per-kind
// default, then the kind's; gang overrides; topology; and a malformed override is reported
// without changing the gang.
func TestWorkloadSettingsReachThePodGroup(t *testing.T) {
	labelled := func(o *unstructured.Unstructured, key, value string) *unstructured.Unstructured {
		o.SetLabels(map[string]string{key: value})
		return o
	}
	annotated := func(o *unstructured.Unstructured, notes map[string]string) *unstructured.Unstructured {
		o.SetAnnotations(notes)
		return o
	}
	withClass := func(p *v1.Pod, class string) *v1.Pod { p.Spec.PriorityClassName = class; return p }
	grouper := func(objects ...*unstructured.Unstructured) *podgrouper.Grouper {
		g := podgrouper.NewGrouper(podgrouper.NewObjectOwners(objects...), clocktesting.NewFakePassiveClock(time.Now()), scheduling.NodePool{})
		g.PriorityClassExists = func(_ context.Context, name string) (bool, error) { return name == "real", nil }
		g.Defaults = func(context.Context) (podgrouper.KindDefaults, error) {
			return podgrouper.KindDefaults{schema.GroupKind{Group: "apps", Kind: "StatefulSet"}: {PriorityName: "build", Preemptibility: v2alpha2.NonPreemptible}}, nil
		}
		return g
	}
	job := func(name string) *unstructured.Unstructured {
		return workload("batch/v1", "Job", name, map[string]any{"parallelism": int64(4)})
	}
	for _, tc := range []struct {
		name    string
		owner   *unstructured.Unstructured
		pod     func(owner *unstructured.Unstructured) *v1.Pod
		check   func(g *v2alpha2.PodGroup) string
		problem string
	}{
		{name: "a priorityClassName label on the workload", owner: labelled(job("l"), podgrouper.PriorityClassLabel, "inference"),
			pod:   func(o *unstructured.Unstructured) *v1.Pod { return withClass(podOf("l-0", nil, o), "real") },
			check: wantPriority("inference")},
		{name: "the pod's spec, when its class exists", owner: job("s"),
			pod:   func(o *unstructured.Unstructured) *v1.Pod { return withClass(podOf("s-0", nil, o), "real") },
			check: wantPriority("real")},
		{name: "not when it does not", owner: job("m"),
			pod:   func(o *unstructured.Unstructured) *v1.Pod { return withClass(podOf("m-0", nil, o), "gone") },
			check: wantPriority("train")},
		{name: "the cluster's per-kind default, and its preemptibility", owner: workload("apps/v1", "StatefulSet", "nb", nil),
			pod: func(o *unstructured.Unstructured) *v1.Pod { return podOf("nb-0", nil, o) },
			check: func(g *v2alpha2.PodGroup) string {
				if g.Spec.PriorityClassName != "build" || g.Spec.Preemptibility != v2alpha2.NonPreemptible {
					return "priority " + g.Spec.PriorityClassName + ", " + string(g.Spec.Preemptibility) + "; want build, non-preemptible"
				}
				return ""
			}},
		{name: "min-member replaces the gang", owner: annotated(job("o"), map[string]string{podgrouper.MinMemberAnnotation: "2"}),
			pod: func(o *unstructured.Unstructured) *v1.Pod { return podOf("o-0", nil, o) }, check: wantGang(2)},
		{name: "batch-min-member on a Job", owner: annotated(job("b"), map[string]string{podgrouper.BatchMinMemberAnnotation: "3"}),
			pod: func(o *unstructured.Unstructured) *v1.Pod { return podOf("b-0", nil, o) }, check: wantGang(3)},
		{name: "batch-min-member is not for a StatefulSet",
			owner: annotated(workload("apps/v1", "StatefulSet", "st", nil), map[string]string{podgrouper.BatchMinMemberAnnotation: "3"}),
			pod:   func(o *unstructured.Unstructured) *v1.Pod { return podOf("st-0", nil, o) }, check: wantGang(1)},
		{name: "a malformed min-member is reported, the gang kept", owner: annotated(job("x"), map[string]string{podgrouper.MinMemberAnnotation: "-2"}),
			pod: func(o *unstructured.Unstructured) *v1.Pod { return podOf("x-0", nil, o) }, check: wantGang(4),
			problem: podgrouper.ReasonWorkloadAnnotationInvalid},
		{name: "topology annotations", owner: annotated(job("t"), map[string]string{podgrouper.TopologyAnnotation: "dc",
			podgrouper.TopologyRequiredPlacementAnnotation: "rack"}),
			pod: func(o *unstructured.Unstructured) *v1.Pod { return podOf("t-0", nil, o) },
			check: func(g *v2alpha2.PodGroup) string {
				if c := g.Spec.TopologyConstraint; c == nil || c.Topology != "dc" || c.RequiredTopologyLevel != "rack" || c.PreferredTopologyLevel != "" {
					return fmt.Sprintf("topology constraint %+v", c)
				}
				return ""
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			grouping, err := grouper(tc.owner).Group(context.Background(), tc.pod(tc.owner))
			if err != nil {
				t.Fatal(err)
			}
			if msg := tc.check(grouping.PodGroup); msg != "" {
				t.Error(msg)
			}
			var reasons []string
			for _, p := range grouping.Problems {
				reasons = append(reasons, p.Reason)
			}
			if strings.Join(reasons, ",") != tc.problem {
				t.Errorf("problems %v, want %q", grouping.Problems, tc.problem)
			}
		})
	}
}

func wantPriority(name string) func(*v2alpha2.PodGroup) string {
	return func(g *v2alpha2.PodGroup) string {
		if g.Spec.PriorityClassName != name {
			return "priority class " + g.Spec.PriorityClassName + ", want " + name
		}
		return ""
	}
}

func wantGang(n int32) func(*v2alpha2.PodGroup) string {
	return func(g *v2alpha2.PodGroup) string {
		if g.Spec.MinMember != n || g.Spec.MinSubGroup != nil || len(g.Spec.SubGroups) != 0 {
			return fmt.Sprintf("gang %d pods, sub-groups %+v; want %d pods", g.Spec.MinMember, g.Spec.SubGroups, n)
		}
		return ""
	}
}

// An owner the grouper cannot read (deleted, recreated under another UID, forbidden, of a kind
// not served) leaves the pod in a PodGroup of its own, with a problem naming the owner, rather
// than waiting for ever; an owner skipped by annotation anywhere up the chain leaves it alone.
func TestUnreadableOrSkippedOwners(t *testing.T) {
	job := workload("batch/v1", "Job", "train", map[string]any{"parallelism": int64(2)})
	recreated := workload("batch/v1", "Job", "train", nil)
	recreated.SetUID("uid-other")

	t.Run("deleted", func(t *testing.T) {
		grouping := groupOf(t, podOf("train-0", nil, job))
		if grouping.PodGroup.Name != "pg-train-0-uid-train-0" || grouping.PodGroup.Spec.MinMember != 1 {
			t.Errorf("PodGroup %s of gang %d, want the pod's own", grouping.PodGroup.Name, grouping.PodGroup.Spec.MinMember)
		}
		if len(grouping.Problems) != 1 || grouping.Problems[0].Reason != podgrouper.ReasonOwnerUnreadable ||
			!strings.Contains(grouping.Problems[0].Message, "Job train") {
			t.Errorf("problems %v, want one naming Job train", grouping.Problems)
		}
	})
	t.Run("recreated under another UID", func(t *testing.T) {
		grouping := groupOf(t, podOf("train-0", nil, job), recreated)
		if grouping.PodGroup.Name != "pg-train-0-uid-train-0" || len(grouping.Problems) != 1 {
			t.Errorf("PodGroup %s, problems %v; want the pod's own, and a problem", grouping.PodGroup.Name, grouping.Problems)
		}
	})
	t.Run("forbidden", func(t *testing.T) {
		grouper := podgrouper.NewGrouper(ownerReaderFunc(func(metav1.OwnerReference) (*unstructured.Unstructured, error) {
			return nil, apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, "train", nil)
		}), clocktesting.NewFakePassiveClock(time.Now()), scheduling.NodePool{})
		grouping, err := grouper.Group(context.Background(), podOf("train-0", nil, job))
		if err != nil || grouping.PodGroup == nil || len(grouping.Problems) != 1 || !strings.Contains(grouping.Problems[0].Message, "forbidden") {
			t.Errorf("grouping %+v, err %v; want the pod's own PodGroup and a problem saying forbidden", grouping, err)
		}
	})
	t.Run("a malformed workload's override is not for the pod alone", func(t *testing.T) {
		broken := workload("batch/v1", "Job", "broken", map[string]any{"parallelism": int64(-1)})
		broken.SetAnnotations(map[string]string{podgrouper.MinMemberAnnotation: "4"})
		grouping := groupOf(t, podOf("broken-0", nil, broken), broken)
		if g := grouping.PodGroup; g.Name != "pg-broken-0-uid-broken-0" || g.Spec.MinMember != 1 ||
			len(grouping.Problems) != 1 || !strings.Contains(grouping.Problems[0].Message, "spec.parallelism") {
			t.Errorf("PodGroup %s of gang %d, problems %v; want the pod's own gang of one and a problem naming spec.parallelism",
				g.Name, g.Spec.MinMember, grouping.Problems)
		}
	})
	t.Run("a timeout is retried, not reported", func(t *testing.T) {
		grouper := podgrouper.NewGrouper(ownerReaderFunc(func(metav1.OwnerReference) (*unstructured.Unstructured, error) {
			return nil, apierrors.NewTimeoutError("slow", 1)
		}), clocktesting.NewFakePassiveClock(time.Now()), scheduling.NodePool{})
		if _, err := grouper.Group(context.Background(), podOf("train-0", nil, job)); err == nil {
			t.Error("a timeout reading the owner gave a grouping, want an error to retry")
		}
	})
	t.Run("skipped up the chain", func(t *testing.T) {
		cron := workload("batch/v1", "CronJob", "nightly", nil)
		cron.SetAnnotations(map[string]string{scheduling.SkipPodGrouperAnnotation: "true"})
		run := workload("batch/v1", "Job", "nightly-1", nil)
		controls(cron, run)
		grouper := podgrouper.NewGrouper(podgrouper.NewObjectOwners(cron, run), clocktesting.NewFakePassiveClock(time.Now()), scheduling.NodePool{})
		grouping, err := grouper.Group(context.Background(), podOf("nightly-1-x", nil, run))
		if err != nil || grouping.PodGroup != nil {
			t.Errorf("grouping %+v, err %v; want none: the CronJob asks to be skipped", grouping, err)
		}
	})
}

// The pods of one workload read its owner chain once between them, however many they are and
// however they interleave with another workload's; after the chain's time to live it is read
// again, so a resized workload's next PodGroup sees the new size.
func TestOwnerChainReadOncePerWorkload(t *testing.T) {
	deploy := workload("apps/v1", "Deployment", "serve", nil)
	rs := workload("apps/v1", "ReplicaSet", "serve-1", nil)
	controls(deploy, rs)
	job := workload("batch/v1", "Job", "train", nil)
	objects := podgrouper.NewObjectOwners(deploy, rs, job)
	var reads atomic.Int32
	counting := ownerReaderFunc(func(ref metav1.OwnerReference) (*unstructured.Unstructured, error) {
		reads.Add(1)
		return objects.ReadOwner(context.Background(), "ns", ref)
	})
	clk := clocktesting.NewFakePassiveClock(time.Now())
	grouper := podgrouper.NewGrouper(counting, clk, scheduling.NodePool{})
	for i := range 50 {
		for _, owner := range []*unstructured.Unstructured{rs, job} {
			if _, err := grouper.Group(context.Background(), podOf(owner.GetName()+"-"+string(rune('a'+i%26))+string(rune('a'+i/26)), nil, owner)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := reads.Load(); got != 3 {
		t.Errorf("100 pods of two workloads read %d owners, want 3 (ReplicaSet and Deployment, and Job, once each)", got)
	}
	clk.SetTime(clk.Now().Add(time.Hour))
	if _, err := grouper.Group(context.Background(), podOf("train-late", nil, job)); err != nil {
		t.Fatal(err)
	}
	if got := reads.Load(); got != 4 {
		t.Errorf("an hour later, %d reads in all, want the Job read again (4)", got)
	}
}

// The defaults ConfigMap's table: each mistake is named by its entry.
func TestParseKindDefaults(t *testing.T) {
	table, err := podgrouper.ParseKindDefaults(`
- {typeName: Notebook, group: kubeflow.org, priorityName: build-preemptible, preemptibility: preemptible}
- {typeName: Deployment, group: apps, priorityName: inference}
`)
	if err != nil {
		t.Fatal(err)
	}
	if got := table[schema.GroupKind{Group: "kubeflow.org", Kind: "Notebook"}]; got.PriorityName != "build-preemptible" || got.Preemptibility != v2alpha2.Preemptible {
		t.Errorf("Notebook's default %+v", got)
	}
	for data, want := range map[string]string{
		"- {group: apps, priorityName: x}":                                 "entry 0: typeName is empty",
		"- {typeName: Job, group: batch, preemptibility: sometimes}":       `preemptibility "sometimes"`,
		"- {typeName: Job, group: batch}\n- {typeName: Job, group: batch}": "entry 1: Job.batch is listed twice",
		"- {typeName: Job, group: batch, priority: train}":                 `unknown field "priority"`,
	} {
		if _, err := podgrouper.ParseKindDefaults(data); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseKindDefaults(%q) = %v, want an error containing %q", data, err, want)
		}
	}
}

type ownerReaderFunc func(ref metav1.OwnerReference) (*unstructured.Unstructured, error)

func (f ownerReaderFunc) ReadOwner(_ context.Context, _ string, ref metav1.OwnerReference) (*unstructured.Unstructured, error) {
	return f(ref)
}

// Owners written without UIDs (a kai-sim file's) are still told apart: each Job's pods get
// their own Job's PodGroup, named pg-<job>.
func TestOwnersWithoutUIDs(t *testing.T) {
	a, b := workload("batch/v1", "Job", "a", nil), workload("batch/v1", "Job", "b", nil)
	a.SetUID("")
	b.SetUID("")
	grouper := podgrouper.NewGrouper(podgrouper.NewObjectOwners(a, b), clocktesting.NewFakePassiveClock(time.Now()), scheduling.NodePool{})
	for _, owner := range []*unstructured.Unstructured{a, b, a} {
		pod := podOf(owner.GetName()+"-0", nil, owner)
		pod.OwnerReferences[0].UID = ""
		grouping, err := grouper.Group(context.Background(), pod)
		if err != nil {
			t.Fatal(err)
		}
		if want := "pg-" + owner.GetName(); grouping.PodGroup.Name != want {
			t.Errorf("a pod of Job %s grouped into %s, want %s", owner.GetName(), grouping.PodGroup.Name, want)
		}
	}
}

// What a user sets on a wrapper (an Argo Workflow's queue and priority) reaches the PodGroup
// of the workload it wraps, before what the workload sets, as upstream copies it down; and a
// step pod the Workflow owns itself is grouped on its own, in the Workflow's queue.
func TestWrappersSettingsReachTheWorkload(t *testing.T) {
	flow := workload("argoproj.io/v1alpha1", "Workflow", "pipeline", nil)
	flow.SetLabels(map[string]string{scheduling.QueueLabel: "research", podgrouper.PriorityClassLabel: "build"})
	step := workload("batch/v1", "Job", "pipeline-train", map[string]any{"parallelism": int64(2)})
	step.SetLabels(map[string]string{scheduling.QueueLabel: "other", "app": "train"})
	controls(flow, step)

	g := groupOf(t, podOf("pipeline-train-0", nil, step), flow, step).PodGroup
	if g.Name != "pg-pipeline-train-uid-pipeline-train" || g.Spec.Queue != "research" || g.Spec.PriorityClassName != "build" ||
		g.Labels["app"] != "train" || g.Spec.MinMember != 2 {
		t.Errorf("PodGroup %s in queue %s at %s, labels %v, gang %d; want the Job's gang in the Workflow's queue and priority, with the Job's labels",
			g.Name, g.Spec.Queue, g.Spec.PriorityClassName, g.Labels, g.Spec.MinMember)
	}
	g = groupOf(t, podOf("pipeline-step-1", nil, flow), flow).PodGroup
	if g.Name != "pg-pipeline-step-1-uid-pipeline-step-1" || g.Spec.Queue != "research" {
		t.Errorf("the Workflow's own step pod is in PodGroup %s, queue %s; want its own, in research", g.Name, g.Spec.Queue)
	}
}

// An owner of a kind the grouper has no rule for is not read (the chart grants no read of
// it): it stands as its reference names it. Above a workload with a rule (a Flyte workflow
// above a PyTorchJob) it is looked through, so the workload keeps its gang; as a pod's only
// owner (a DaemonSet) it is the PodGroup's owner, one PodGroup of gang one for its pods. A
// known owner that cannot be read above another leaves the pod grouped by the owners below.
func TestOwnersOfKindsWithoutRules(t *testing.T) {
	flyte := workload("flyte.lyft.com/v1alpha1", "FlyteWorkflow", "wf", nil)
	train := workload("kubeflow.org/v1", "PyTorchJob", "train", map[string]any{"pytorchReplicaSpecs": map[string]any{
		"Master": map[string]any{"replicas": int64(1)}, "Worker": map[string]any{"replicas": int64(3)}}})
	controls(flyte, train)
	rollout := workload("argoproj.io/v1alpha1", "Rollout", "web", nil)
	rs := workload("apps/v1", "ReplicaSet", "web-7f9", nil)
	controls(rollout, rs)
	daemons := workload("apps/v1", "DaemonSet", "agent", nil)
	cron := workload("batch/v1", "CronJob", "nightly", nil)
	run := workload("batch/v1", "Job", "nightly-1", map[string]any{"parallelism": int64(2)})
	controls(cron, run)

	var reads []string
	objects := podgrouper.NewObjectOwners(train, rs, run) // neither Flyte, the Rollout, the DaemonSet nor the CronJob
	grouper := podgrouper.NewGrouper(ownerReaderFunc(func(ref metav1.OwnerReference) (*unstructured.Unstructured, error) {
		reads = append(reads, ref.Kind)
		return objects.ReadOwner(context.Background(), "ns", ref)
	}), clocktesting.NewFakePassiveClock(time.Now()), scheduling.NodePool{})
	for _, tc := range []struct {
		pod     *v1.Pod
		group   string
		gang    int32
		problem string
		reads   string
	}{
		{pod: podOf("train-worker-0", map[string]string{"training.kubeflow.org/replica-type": "worker"}, train),
			group: "pg-train-uid-train", gang: 4, reads: "PyTorchJob"},
		{pod: podOf("web-7f9-a", nil, rs), group: "pg-web-7f9-uid-web-7f9", gang: 1, reads: "ReplicaSet"},
		{pod: podOf("agent-x", nil, daemons), group: "pg-agent-uid-agent", gang: 1},
		{pod: podOf("nightly-1-a", nil, run), group: "pg-nightly-1-uid-nightly-1", gang: 2, problem: "CronJob nightly", reads: "Job,CronJob"},
	} {
		reads = nil
		grouping, err := grouper.Group(context.Background(), tc.pod)
		if err != nil {
			t.Fatal(err)
		}
		g := grouping.PodGroup
		if g.Name != tc.group || g.Spec.MinMember != tc.gang {
			t.Errorf("pod %s: PodGroup %s of gang %d, want %s of %d", tc.pod.Name, g.Name, g.Spec.MinMember, tc.group, tc.gang)
		}
		if got := strings.Join(reads, ","); got != tc.reads {
			t.Errorf("pod %s: read %q, want %q", tc.pod.Name, got, tc.reads)
		}
		switch {
		case tc.problem == "" && len(grouping.Problems) != 0:
			t.Errorf("pod %s: problems %v, want none", tc.pod.Name, grouping.Problems)
		case tc.problem != "" && (len(grouping.Problems) != 1 || !strings.Contains(grouping.Problems[0].Message, tc.problem)):
			t.Errorf("pod %s: problems %v, want one naming %s", tc.pod.Name, grouping.Problems, tc.problem)
		}
	}
}

// A workload whose sub-groups the API server would refuse (here a JobSet whose replicated
// jobs "a" and "a-replica-0" both name a sub-group "a-replica-0") is reported and its pods
// grouped alone, rather than waiting for ever for a PodGroup that can never be made.
func TestUnstorableSubGroupsAreReported(t *testing.T) {
	replicated := func(name string) map[string]any {
		return map[string]any{"name": name, "replicas": int64(1), "template": map[string]any{"spec": map[string]any{"parallelism": int64(1)}}}
	}
	js := workload("jobset.x-k8s.io/v1alpha2", "JobSet", "clash", map[string]any{"replicatedJobs": []any{replicated("a"), replicated("a-replica-0")}})
	job := workload("batch/v1", "Job", "clash-a-0", nil)
	controls(js, job)
	pod := podOf("clash-a-0-x", map[string]string{"jobset.sigs.k8s.io/replicatedjob-name": "a", "jobset.sigs.k8s.io/job-index": "0"}, job)
	grouping := groupOf(t, pod, js, job)
	if g := grouping.PodGroup; g.Name != "pg-clash-a-0-x-uid-clash-a-0-x" || len(g.Spec.SubGroups) != 0 {
		t.Errorf("PodGroup %s with sub-groups %v, want the pod's own", g.Name, g.Spec.SubGroups)
	}
	if len(grouping.Problems) != 1 || !strings.Contains(grouping.Problems[0].Message, `two sub-groups named "a-replica-0"`) {
		t.Errorf("problems %v, want one naming the clash", grouping.Problems)
	}
}

// A Spark application's PodGroup is owned by its driver, whichever pod comes first; in client
// mode, whose executors have no owner and whose driver runs outside the cluster, by no one:
// an executor that owned it would take it away when dynamic allocation removes that executor.
func TestSparkApplicationsOwner(t *testing.T) {
	labels := func(role string) map[string]string {
		return map[string]string{podgrouper.SparkAppLabel: "spark-1", "spark-role": role}
	}
	driver := podOf("driver", labels("driver"), nil)
	driverObject := workload("v1", "Pod", "driver", nil)
	owner := func(g *v2alpha2.PodGroup) string {
		if len(g.OwnerReferences) == 0 {
			return "none"
		}
		return g.OwnerReferences[0].Kind + " " + g.OwnerReferences[0].Name
	}
	for name, tc := range map[string]struct {
		pod     *v1.Pod
		objects []*unstructured.Unstructured
		want    string
	}{
		"the driver":                 {pod: driver, want: "Pod driver"},
		"an executor of the driver":  {pod: podOf("exec-1", labels("executor"), driverObject), objects: []*unstructured.Unstructured{driverObject}, want: "Pod driver"},
		"an executor in client mode": {pod: podOf("exec-2", labels("executor"), nil), want: "none"},
	} {
		if got := owner(groupOf(t, tc.pod, tc.objects...).PodGroup); got != tc.want {
			t.Errorf("%s: the PodGroup is owned by %s, want %s", name, got, tc.want)
		}
	}
}
