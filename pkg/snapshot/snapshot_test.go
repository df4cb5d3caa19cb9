package snapshot_test

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/snapshot"
)

var now = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

func gpus(n int64) v1.ResourceList {
	return v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), "nvidia.com/gpu": *resource.NewQuantity(n, resource.DecimalSI)}
}

func queue(name string, quota float64, reclaim *metav1.Duration) *v2.Queue {
	return &v2.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v2.QueueSpec{ReclaimMinRuntime: reclaim,
		Resources: &v2.QueueResources{
			GPU:    v2.QueueResource{Quota: quota, OverQuotaWeight: 1, Limit: -1},
			CPU:    v2.QueueResource{Quota: -1, OverQuotaWeight: 1, Limit: -1},
			Memory: v2.QueueResource{Quota: -1, OverQuotaWeight: 1, Limit: -1},
		}}}
}

// group is a PodGroup created ago before now, stamped started before now when running.
func group(ns, name, q string, created time.Duration, started *time.Duration, annotations map[string]string) *v2alpha2.PodGroup {
	g := &v2alpha2.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations,
		CreationTimestamp: metav1.NewTime(now.Add(-created))},
		Spec: v2alpha2.PodGroupSpec{MinMember: 1, Queue: q, PriorityClassName: "train"}}
	if started != nil {
		if g.Annotations == nil {
			g.Annotations = map[string]string{}
		}
		g.Annotations[scheduling.LastStartTimestampAnnotation] = now.Add(-*started).Format(time.RFC3339Nano)
	}
	return g
}

// pod is a pod of job asking for n GPUs, tolerating the GPU taint; on node since started, or
// pending.
func pod(ns, name, job, scheduler, node string, n int64, started *time.Duration) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1.PodSpec{SchedulerName: scheduler, NodeName: node,
			Tolerations: []v1.Toleration{{Key: "gpu", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}},
			Containers: []v1.Container{{Name: "main", Image: "registry.example/secret-model:1",
				Env:          []v1.EnvVar{{Name: "API_TOKEN", Value: "hunter2"}},
				VolumeMounts: []v1.VolumeMount{{Name: "creds", MountPath: "/creds"}},
				Resources:    v1.ResourceRequirements{Requests: gpus(n), Limits: v1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(n, resource.DecimalSI)}}}},
			Volumes: []v1.Volume{{Name: "creds", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "model-creds"}}}},
		},
		Status: v1.PodStatus{Phase: v1.PodPending}}
	if job != "" {
		p.Annotations = map[string]string{scheduling.PodGroupNameAnnotation: job}
	}
	if started != nil {
		p.CreationTimestamp = metav1.NewTime(now.Add(-*started))
		p.Status = v1.PodStatus{Phase: v1.PodRunning, StartTime: &metav1.Time{Time: now.Add(-*started).Truncate(time.Second)}}
	}
	return p
}

func ago(d time.Duration) *time.Duration { return &d }

// liveCluster is running-jobs.yaml of docs/examples/sim as a live cluster: research's train
// (55 minutes in, an hour of reclaim protection) and short (2 hours in) and an inference
// server of the default scheduler fill an 8-GPU node; prod's eval has waited 10 minutes.
// Around them: a pod without a PodGroup, a finished job, a pending pod of another scheduler.
func liveCluster(t *testing.T) client.Reader {
	t.Helper()
	trainPod := pod("research", "train-0", "train", "kai-scheduler", "n1", 4, ago(55*time.Minute+600*time.Millisecond))
	trainPod.Annotations[snapshot.ExpectedRuntimeAnnotation] = "3h"
	finished := pod("research", "done-0", "done", "kai-scheduler", "n1", 8, ago(3*time.Hour))
	finished.Status.Phase = v1.PodSucceeded
	objects := []client.Object{
		&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"zone": "a"}},
			Spec:   v1.NodeSpec{Taints: []v1.Taint{{Key: "gpu", Value: "true", Effect: v1.TaintEffectNoSchedule}}},
			Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("64"), v1.ResourcePods: resource.MustParse("110"), "nvidia.com/gpu": resource.MustParse("8")}}},
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "train"}, Value: 50},
		queue("research", 0, &metav1.Duration{Duration: time.Hour}), queue("prod", 8, nil),
		pod("inference", "llm-0", "", "default-scheduler", "n1", 2, ago(24*time.Hour)),
		pod("inference", "llm-1", "", "default-scheduler", "", 2, nil),
		group("research", "train", "research", time.Hour, ago(55*time.Minute+600*time.Millisecond), nil), trainPod,
		group("research", "short", "research", 2*time.Hour, ago(2*time.Hour), map[string]string{input.StartupAnnotation: "10m"}),
		pod("research", "short-0", "short", "kai-scheduler", "n1", 2, ago(2*time.Hour)),
		group("prod", "eval", "prod", 10*time.Minute, nil, map[string]string{snapshot.ExpectedRuntimeAnnotation: "soon"}),
		pod("prod", "eval-0", "eval", "kai-scheduler", "", 4, nil),
		group("research", "done", "research", 4*time.Hour, ago(3*time.Hour), nil), finished,
		pod("default", "stray", "", "kai-scheduler", "", 1, nil),
		pod("default", "placed", "", "kai-scheduler", "n1", 0, ago(time.Hour)),
	}
	return fakeReader(t, objects...)
}

func fakeReader(t *testing.T, objects ...client.Object) client.Reader {
	t.Helper()
	scheme, err := install.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).Build()
}

func write(t *testing.T, reader client.Reader, opts snapshot.Options) string {
	t.Helper()
	cluster, err := snapshot.Read(context.Background(), reader, now, opts)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := cluster.Write(&out, opts); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestSnapshotRunsInKaiSimAsTheClusterIs(t *testing.T) {
	opts := snapshot.Options{SchedulerName: "kai-scheduler", AssumeRuntime: 2 * time.Hour, Source: "context lab"}
	out := write(t, liveCluster(t), opts)
	for _, want := range []string{
		"# kai-sim scenario: a snapshot of context lab at 2026-11-23T10:00:00Z, by kubectl kai snapshot.",
		"# 1 nodes, 2 queues, 3 jobs (2 running, 1 pending), 2 pods that only hold their nodes.",
		"# Durations: 1 jobs from kai.scheduler/expected-runtime; 2 assumed (--assume-runtime 2h0m0s: 2h0m0s from the snapshot on).",
		"# Assumed: prod/eval, research/short",
		"# pod default/stray: no pod-group-name annotation; not exported",
		"# pod default/placed: no pod-group-name annotation; written as holding its node, as a pod of another scheduler",
		"# research/train: running for 55m0s on n1; runs 3h0m0s in all (kai.scheduler/expected-runtime)",
		"# research/short: running for 2h0m0s on n1; duration assumed: 2h0m0s more (--assume-runtime)",
		"# prod/eval: pending for 10m0s; duration assumed: 2h0m0s more (--assume-runtime)\n#   kai.scheduler/expected-runtime is unusable: PodGroup prod/eval: kai.scheduler/expected-runtime: invalid duration \"soon\"",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the snapshot lacks %q", want)
		}
	}
	for _, secret := range []string{"secret-model", "hunter2", "API_TOKEN", "model-creds", "/creds", "done-0", "llm-1"} {
		if strings.Contains(out, secret) {
			t.Errorf("the snapshot exports %q, which it should leave out", secret)
		}
	}
	if t.Failed() {
		t.Logf("snapshot:\n%s", out)
	}

	sc, err := input.Parse([]byte(out))
	if err != nil {
		t.Fatalf("kai-sim cannot read the snapshot: %v\n%s", err, out)
	}
	if len(sc.Nodes) != 1 || len(sc.Nodes[0].Spec.Taints) != 1 || sc.Nodes[0].Labels["zone"] != "a" {
		t.Errorf("node %+v: want its taint and labels kept", sc.Nodes)
	}
	if len(sc.Fixed) != 2 || sc.Fixed[0].Name != "placed" || sc.Fixed[1].Name != "llm-0" {
		t.Errorf("pods that only hold their node %v: want placed (ours, without a PodGroup) and the running llm-0", sc.Fixed)
	}
	type times struct {
		running                   bool
		runningFor, submit, total time.Duration
	}
	want := map[string]times{
		"research/train": {true, 55 * time.Minute, -time.Hour, 3 * time.Hour},
		// 4 hours in all, of which its startup is not work: kai-sim adds it back.
		"research/short": {true, 2 * time.Hour, -2 * time.Hour, 4*time.Hour - 10*time.Minute},
		"prod/eval":      {false, 0, -10 * time.Minute, 2 * time.Hour},
	}
	for _, job := range sc.Jobs {
		name := job.Group.Namespace + "/" + job.Group.Name
		if got := (times{job.Running, job.RunningFor, job.SubmitAt, job.Duration}); got != want[name] {
			t.Errorf("%s: %+v, want %+v", name, got, want[name])
		}
		delete(want, name)
	}
	if len(want) != 0 {
		t.Errorf("jobs missing from the scenario: %v", want)
	}

	r, err := sim.Run(context.Background(), sc, sim.Options{Until: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Events) != 0 {
		t.Errorf("the first cycle did %+v; train is protected for 5 more minutes and short alone frees too little", r.Events)
	}
	for _, j := range r.Jobs {
		if j.PodGroup == "prod/eval" && !strings.Contains(strings.Join(j.Waiting, "\n"), "research/train until 2026-01-01T00:05:00Z") {
			t.Errorf("eval waits for %q; want train's protection to end 5 minutes in, as on the cluster", j.Waiting)
		}
		if j.PodGroup == "research/train" && (j.Protection == nil || j.Protection.Reclaim[0].Until == nil || *j.Protection.Reclaim[0].Until != 300) {
			t.Errorf("train's protection %+v: want its reclaim protection to end at 300 s", j.Protection)
		}
	}
}

func TestSnapshotIncludesWhatIsAskedFor(t *testing.T) {
	out := write(t, liveCluster(t), snapshot.Options{SchedulerName: "kai-scheduler", Include: []string{"images", "env", "volumes"}})
	for _, want := range []string{"image: registry.example/secret-model:1", "value: hunter2", "secretName: model-creds", "mountPath: /creds"} {
		if !strings.Contains(out, want) {
			t.Errorf("asked for images, env and volumes, the snapshot lacks %q", want)
		}
	}
	if _, err := input.Parse([]byte(out)); err != nil {
		t.Fatalf("kai-sim cannot read the snapshot: %v", err)
	}
}

// With --assume-runtime 0 a job without an expected runtime never finishes; a running job
// past its expected runtime finishes as the simulation starts.
func TestSnapshotDurations(t *testing.T) {
	out := write(t, liveCluster(t), snapshot.Options{SchedulerName: "kai-scheduler"})
	if !strings.Contains(out, "# research/short: running for 2h0m0s on n1; duration assumed: never finishes") {
		t.Errorf("short should be said never to finish:\n%s", out)
	}
	sc, err := input.Parse([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	for _, job := range sc.Jobs {
		if job.Group.Name == "short" && job.Duration != 0 {
			t.Errorf("short runs %s, want forever (0)", job.Duration)
		}
	}
}

// A gang with fewer pods on nodes than it needs keeps them there, and its comment says it
// waits for the rest; a pod being deleted is written pending, as its controller will
// recreate it.
func TestSnapshotPartialGangAndTerminatingPod(t *testing.T) {
	gang := group("research", "gang", "research", time.Hour, ago(time.Hour), nil)
	gang.Spec.MinMember = 3
	leaving := pod("research", "gang-1", "gang", "kai-scheduler", "n1", 1, ago(time.Hour))
	leaving.DeletionTimestamp = &metav1.Time{Time: now.Add(-time.Second)}
	leaving.Finalizers = []string{"example.com/hold"} // the fake client keeps a deleted object only with one
	reader := fakeReader(t,
		&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: v1.NodeStatus{Allocatable: v1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")}}},
		queue("research", 8, nil), gang,
		pod("research", "gang-0", "gang", "kai-scheduler", "n1", 1, ago(time.Hour)), leaving,
		pod("research", "gang-2", "gang", "kai-scheduler", "", 1, nil))
	out := write(t, reader, snapshot.Options{SchedulerName: "kai-scheduler", AssumeRuntime: time.Hour})
	want := "# research/gang: running for 1h0m0s on n1; only 1 of the 3 pods its gang needs are on nodes: they hold them, and it waits for the rest"
	if !strings.Contains(out, want) {
		t.Errorf("the snapshot lacks %q:\n%s", want, out)
	}
	sc, err := input.Parse([]byte(out))
	if err != nil {
		t.Fatalf("kai-sim cannot read the snapshot: %v\n%s", err, out)
	}
	nodes := map[string]string{}
	for _, p := range sc.Jobs[0].Pods {
		nodes[p.Name] = p.Spec.NodeName
	}
	if want := map[string]string{"gang-0": "n1", "gang-1": "", "gang-2": ""}; !reflect.DeepEqual(nodes, want) {
		t.Errorf("pods on nodes %v, want %v: the one being deleted is recreated pending", nodes, want)
	}
}
