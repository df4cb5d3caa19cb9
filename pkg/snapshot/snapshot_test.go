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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/snapshot"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

var now = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// pod is a pod asking for n GPUs and a CPU, tolerating the GPU taint, with what a snapshot
// leaves out unless asked: its image, a token in its environment, a Secret's volume.
func pod(ns, name string, n int64) *builders.PodWrapper {
	return builders.MakePod(ns, name).GPUs(n).Request(v1.ResourceCPU, "1").
		Toleration(v1.Toleration{Key: "gpu", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}).
		Image("registry.example/secret-model:1").Env("API_TOKEN", "hunter2").SecretVolume("creds", "model-creds", "/creds")
}

// runningFor puts p on node, created and started ago before now (a kubelet's start time is
// whole seconds).
func runningFor(p *builders.PodWrapper, node string, ago time.Duration) *builders.PodWrapper {
	return p.Node(node).CreatedAt(now.Add(-ago)).StartedAt(now.Add(-ago).Truncate(time.Second))
}

// group is a PodGroup of queue q, of priority class train, created ago before now.
func group(ns, name, q string, ago time.Duration) *builders.PodGroupWrapper {
	return builders.MakePodGroup(ns, name).Queue(q).PriorityClass("train").CreatedAt(now.Add(-ago))
}

// liveCluster is running-jobs.yaml of docs/examples/sim as a live cluster: research's train
// (55 minutes in, an hour of reclaim protection) and short (2 hours in) and an inference
// server of the default scheduler fill an 8-GPU node; prod's eval has waited 10 minutes.
// Around them: a pod without a PodGroup, a finished job, a pending pod of another scheduler.
func liveCluster(t *testing.T) client.Reader {
	t.Helper()
	trainRan := 55*time.Minute + 600*time.Millisecond
	objects := []client.Object{
		builders.MakeNode("n1").Label("zone", "a").Taint(v1.Taint{Key: "gpu", Value: "true", Effect: v1.TaintEffectNoSchedule}).
			Allocatable(v1.ResourceCPU, "64").MaxPods(110).GPUs(8).Obj(),
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "train"}, Value: 50},
		builders.MakeQueue("research").GPUQuota(0).ReclaimMinRuntime(time.Hour).Obj(), builders.MakeQueue("prod").GPUQuota(8).Obj(),
		runningFor(pod("inference", "llm-0", 2).SchedulerName("default-scheduler"), "n1", 24*time.Hour).Obj(),
		pod("inference", "llm-1", 2).SchedulerName("default-scheduler").Obj(),
		group("research", "train", "research", time.Hour).StartedAt(now.Add(-trainRan)).Obj(),
		runningFor(pod("research", "train-0", 4).PodGroup("train"), "n1", trainRan).Annotation(snapshot.ExpectedRuntimeAnnotation, "3h").Obj(),
		group("research", "short", "research", 2*time.Hour).StartedAt(now.Add(-2*time.Hour)).Annotation(input.StartupAnnotation, "10m").Obj(),
		runningFor(pod("research", "short-0", 2).PodGroup("short"), "n1", 2*time.Hour).Obj(),
		group("prod", "eval", "prod", 10*time.Minute).Annotation(snapshot.ExpectedRuntimeAnnotation, "soon").Obj(),
		pod("prod", "eval-0", 4).PodGroup("eval").Obj(),
		group("research", "done", "research", 4*time.Hour).StartedAt(now.Add(-3 * time.Hour)).Obj(),
		runningFor(pod("research", "done-0", 8).PodGroup("done"), "n1", 3*time.Hour).Phase(v1.PodSucceeded).Obj(),
		pod("default", "stray", 1).Obj(),
		runningFor(pod("default", "placed", 0), "n1", time.Hour).Obj(),
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
	gangPod := func(name string) *builders.PodWrapper { return pod("research", name, 1).PodGroup("gang") }
	reader := fakeReader(t,
		builders.MakeNode("n1").GPUs(8).Obj(), builders.MakeQueue("research").GPUQuota(8).Obj(),
		group("research", "gang", "research", time.Hour).MinMember(3).StartedAt(now.Add(-time.Hour)).Obj(),
		runningFor(gangPod("gang-0"), "n1", time.Hour).Obj(),
		// The fake client keeps a deleted object only with a finalizer.
		runningFor(gangPod("gang-1"), "n1", time.Hour).Finalizer("example.com/hold").DeletedAt(now.Add(-time.Second)).Obj(),
		gangPod("gang-2").Obj())
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

// A job's preemption delay goes into the scenario as it is set; its eviction and checkpoint
// stamps, absolute times kai-sim's clock would misread, do not (the delay counts from the
// job's submission there, and checkpoints come from the checkpoint-interval hint).
func TestSnapshotKeepsThePreemptionDelayButNotTheStamps(t *testing.T) {
	reader := fakeReader(t, builders.MakeNode("n1").GPUs(8).Obj(), builders.MakeQueue("prod").GPUQuota(8).Obj(),
		group("prod", "eval", "prod", 10*time.Minute).PreemptionDelay(5*time.Minute).EvictedAt(now.Add(-time.Minute)).
			CheckpointedAt(now.Add(-2*time.Minute)).
			Annotation("kai.scheduler/preemption-delay", "7m").Obj(),
		pod("prod", "eval-0", 4).PodGroup("eval").Obj())
	out := write(t, reader, snapshot.Options{SchedulerName: "kai-scheduler", AssumeRuntime: time.Hour})
	for _, want := range []string{"preemptionDelay: 5m0s", "kai.scheduler/preemption-delay: 7m"} {
		if !strings.Contains(out, want) {
			t.Errorf("the scenario lacks %q:\n%s", want, out)
		}
	}
	for _, stamp := range []string{"last-eviction-timestamp", "last-checkpoint-timestamp"} {
		if strings.Contains(out, stamp) {
			t.Errorf("the scenario keeps the %s:\n%s", stamp, out)
		}
	}
}

// A job's eviction count goes into the scenario, so that kai-sim escalates its protection as
// the scheduler would; when the last eviction was, and the job's checkpoint stamp, absolute
// times kai-sim's clock would misread, do not. kai-sim reads the count back.
func TestSnapshotKeepsTheEvictionCountButNotItsTimes(t *testing.T) {
	g := group("research", "train", "research", 10*time.Minute).
		Annotation("kai.scheduler/last-checkpoint-timestamp", now.Add(-time.Minute).Format(time.RFC3339)).Obj()
	g.Status.Evictions = &v2alpha2.EvictionCount{Total: 3, Preempt: 1, Reclaim: 2, Last: metav1.NewMicroTime(now.Add(-time.Hour))}
	reader := fakeReader(t, builders.MakeNode("n1").GPUs(8).Obj(), builders.MakeQueue("research").GPUQuota(8).Obj(), g,
		pod("research", "train-0", 4).PodGroup("train").Obj())
	out := write(t, reader, snapshot.Options{SchedulerName: "kai-scheduler", AssumeRuntime: time.Hour})
	for _, unwanted := range []string{"last-checkpoint-timestamp", now.Add(-time.Hour).UTC().Format("2006-01-02T15:04")} {
		if strings.Contains(out, unwanted) {
			t.Errorf("the scenario keeps %q:\n%s", unwanted, out)
		}
	}
	sc, err := input.Parse([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	got := sc.Jobs[0].Group.Status.Evictions
	if got == nil || got.Total != 3 || got.Preempt != 1 || got.Reclaim != 2 || !got.Last.IsZero() {
		t.Errorf("kai-sim reads the count back as %+v, want 3 (1 preempt, 2 reclaim) and no time", got)
	}
}

// A GPU share goes into the scenario as it asks and where it is: its gpu-fraction (or
// gpu-memory), its device's runai-gpu-group label, and the node's device memory; kai-sim runs
// it on that device, and charges its queue the fraction.
func TestSnapshotKeepsGPUShares(t *testing.T) {
	reader := fakeReader(t, builders.MakeNode("n1").Allocatable(v1.ResourceCPU, "64").MaxPods(110).GPUs(1).Label("nvidia.com/gpu.memory", "40960").Obj(),
		builders.MakeQueue("prod").GPUQuota(1).Obj(),
		group("prod", "notebook", "prod", time.Hour).StartedAt(now.Add(-time.Hour)).Obj(),
		runningFor(pod("prod", "notebook-0", 0).PodGroup("notebook"), "n1", time.Hour).
			Annotation("gpu-fraction", "0.5").Label("runai-gpu-group", "group-a").Obj(),
		group("prod", "server", "prod", time.Minute).Obj(),
		pod("prod", "server-0", 0).PodGroup("server").Annotation("gpu-memory", "10240").Obj())
	out := write(t, reader, snapshot.Options{SchedulerName: "kai-scheduler", AssumeRuntime: time.Hour})
	for _, want := range []string{"gpu-fraction: \"0.5\"", "runai-gpu-group: group-a", "gpu-memory: \"10240\"", "nvidia.com/gpu.memory: \"40960\""} {
		if !strings.Contains(out, want) {
			t.Errorf("the scenario lacks %q:\n%s", want, out)
		}
	}
	sc, err := input.Parse([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	result, err := sim.Run(context.Background(), sc, sim.Options{Until: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	bound := false
	for _, e := range result.Events {
		if e.Type == "Bind" && e.Pod == "server-0" {
			bound = true
			if !reflect.DeepEqual(e.GPUDevices, []int{0}) {
				t.Errorf("the server's quarter share went to devices %v, want the notebook's device 0 beside it", e.GPUDevices)
			}
		}
	}
	if !bound {
		t.Errorf("the server's share was never bound: %+v", result.Events)
	}
}
