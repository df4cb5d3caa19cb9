package kubectlkai_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/kai/v1alpha1"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/kubectlkai"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
	"github.com/kai-minruntime/kai-scheduler/pkg/version"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

const config = `actions: "allocate, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: proportion
  - name: minruntime
    arguments: {defaultPreemptMinRuntime: 5m, defaultReclaimMinRuntime: 7s}
  - name: predicates
`

// designCluster is the design's reclaim tree (docs/examples) with a job running in leaf2,
// one in leaf3, both started two minutes ago, and one waiting in leaf1.
func designCluster(t *testing.T) client.Client {
	t.Helper()
	started := now.Add(-2 * time.Minute)
	objects := exampleQueues(t, "queues-reclaim-lca-tree.yaml")
	objects = append(objects, job("run2", "leaf2", "n1", &started)...)
	objects = append(objects, job("run3", "leaf3", "n1", &started)...)
	objects = append(objects, job("wait1", "leaf1", "", nil)...)
	return fakeCluster(t, objects...)
}

// fakeCluster is a cluster with the scheduler's ConfigMap, a node of two GPUs and objects.
func fakeCluster(t *testing.T, extra ...client.Object) client.WithWatch {
	t.Helper()
	scheme, err := install.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	objects := []client.Object{
		&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kai-scheduler", Name: "kai-scheduler-config"},
			Data: map[string]string{"scheduler-config.yaml": config}},
		builders.MakeNode("n1").Allocatable(v1.ResourceCPU, "64").Allocatable(v1.ResourceMemory, "256Gi").MaxPods(110).GPUs(2).Obj(),
	}
	objects = append(objects, extra...)
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).Build()
}

// job is a PodGroup of one one-GPU pod: running on node since started, or pending.
func job(name, queue, node string, started *time.Time) []client.Object {
	group := builders.MakePodGroup("ns", name).Queue(queue)
	pod := builders.MakePod("ns", name+"-0").PodGroup(name).GPUs(1).Node(node)
	if started != nil {
		group.StartedAt(*started)
		pod.StartedAt(*started)
	}
	return []client.Object{group.Obj(), pod.Obj()}
}

func exampleQueues(t *testing.T, file string) []client.Object {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", file))
	if err != nil {
		t.Fatal(err)
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var queues []client.Object
	for {
		q := &v2.Queue{}
		if err := decoder.Decode(q); errors.Is(err, io.EOF) {
			return queues
		} else if err != nil {
			t.Fatal(err)
		}
		queues = append(queues, q)
	}
}

func explain(t *testing.T, c client.Client, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	connect := func(string, string) (client.Reader, string, error) { return c, "ns", nil }
	code := kubectlkai.Run(context.Background(), args, &stdout, &stderr, connect, clocktesting.NewFakePassiveClock(now))
	return stdout.String(), stderr.String(), code
}

// explainOK runs the plugin like explain and fails the test unless it succeeds; it returns
// what it printed.
func explainOK(t *testing.T, c client.Client, args ...string) string {
	t.Helper()
	out, stderr, code := explain(t, c, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	return out
}

func expectLines(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q", w)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}

// A running job of leaf3 is told who may reclaim it from when, and which queue's value
// applied: on the path a → b → d → leaf3 only d has a sibling (c), so reclaimers can only
// come from beside d, and d's own 60s applies to them.
func TestExplainRunningJobOnTheDesignTree(t *testing.T) {
	out := explainOK(t, designCluster(t), "explain", "podgroup", "ns/run3")
	expectLines(t, out,
		"queue:    a → b → d → leaf3",
		"Running since 2026-01-01T11:58:00Z (2m0s ago).",
		"Against preemption (higher-priority jobs of queue leaf3):",
		"5m0s from the default: protected until 2026-01-01T12:03:00Z (3m0s from now)",
		"resolved: leaf3 does not set it → d does not set it → b does not set it → a does not set it → the default (the minruntime plugin's defaultPreemptMinRuntime, 5m0s)",
		"Against reclaim (jobs of other queues; reclaimResolveMethod lca):",
		"from outside d:", "1m0s from queue d: ended at 2026-01-01T11:59:00Z (1m0s ago)",
		"resolved: d sets reclaimMinRuntime 1m0s",
		"Some job may take its resources now: a protection ended at 2026-01-01T11:59:00Z.",
		"The PodGroup's status does not show this protection yet",
	)
}

// A waiting job of leaf1 is told which running jobs protect themselves against it now: the
// one in leaf2 (its sibling's 180s), not the one in leaf3 (d's 60s are over).
func TestExplainWaitingJobNamesTheProtectionsItMeets(t *testing.T) {
	out := explainOK(t, designCluster(t), "explain", "pg", "wait1")
	expectLines(t, out,
		"It waits: 1 pod pending.",
		"The scheduler has not said why yet",
		"reclaim: victims are protected by min-runtime: ns/run2 until 2026-01-01T12:01:00Z (3m0s from queue leaf2); the first protection ends at 2026-01-01T12:01:00Z",
	)
	if strings.Contains(out, "ns/run3") {
		t.Errorf("run3's protection against leaf1 ended a minute ago, yet it is named:\n%s", out)
	}
}

// A queue with children lists what each leaf below it gets.
func TestExplainQueueListsItsLeaves(t *testing.T) {
	out := explainOK(t, designCluster(t), "explain", "queue", "c")
	expectLines(t, out,
		"path:     a → b → c",
		"settings: preemptMinRuntime not set, reclaimMinRuntime not set",
		"defaults: defaultPreemptMinRuntime 5m0s, defaultReclaimMinRuntime 7s; reclaimResolveMethod lca",
		"Only leaf queues hold jobs. The 2 leaves under c get:",
		"Jobs of leaf1:", "from outside c: 10m0s from queue b", "from outside leaf1 (inside c): 0s from queue leaf1",
		"Jobs of leaf2:", "from outside leaf2 (inside c): 3m0s from queue leaf2",
		"jobs: 0 running (0 protected against some jobs, 0 against all), 1 waiting",
		// run2 started 2m ago: its 3m beside leaf2 and b's 10m beside c still hold.
		"jobs: 1 running (1 protected against some jobs, 1 against all), 0 waiting",
	)
}

func TestMistakesAreNamedAllAtOnce(t *testing.T) {
	_, stderr, code := explain(t, designCluster(t), "explain", "nodes", "x", "--config-map", "nonamespace")
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	expectLines(t, stderr, `explain: unknown kind "nodes"`, `--config-map: want NAMESPACE/NAME, got "nonamespace"`, "kubectl kai --help")

	_, stderr, code = explain(t, designCluster(t), "explain", "queue", "c", "--config-map", "kai-scheduler/other")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	expectLines(t, stderr, "ConfigMap kai-scheduler/other not found.", "--config-map NAMESPACE/NAME", "--config-file FILE", "--default-config")

	_, stderr, code = explain(t, designCluster(t), "explain", "queue", "nosuch")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	expectLines(t, stderr, `queue "nosuch" not found`)
}

// Without the scheduler's ConfigMap where explain looks (a cluster installed without the
// chart, a ConfigMap that holds its configuration under another key, or one the user may not
// read), the error names every way to give it the configuration, and each way works.
func TestNoConfigurationNamesEveryWayOut(t *testing.T) {
	everyWay := []string{
		"explain needs the scheduler's configuration; give it with one of:",
		"--config-map NAMESPACE/NAME  the ConfigMap the scheduler's --scheduler-conf is mounted from",
		"(the chart's: RELEASE-config in the release namespace)",
		"--config-file FILE           the file the scheduler reads with --scheduler-conf",
		"--default-config             the built-in configuration, when the scheduler runs without",
	}
	forbidden := interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if _, ok := obj.(*v1.ConfigMap); ok {
			return apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, key.Name, errors.New("RBAC: no"))
		}
		return c.Get(ctx, key, obj, opts...)
	}}
	otherKey := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kai-system", Name: "kai-config"}, Data: map[string]string{"config.yaml": config}}
	for _, tc := range []struct {
		name    string
		cluster client.Client
		args    []string
		want    string
	}{
		{"no ConfigMap", withoutConfigMap(t), nil,
			"kubectl-kai: ConfigMap kai-scheduler/kai-scheduler-config not found.\n"},
		{"another key", withoutConfigMap(t, otherKey), []string{"--config-map", "kai-system/kai-config"},
			`kubectl-kai: ConfigMap kai-system/kai-config has no key "scheduler-config.yaml" (its keys: config.yaml).`},
		{"not allowed to read it", interceptor.NewClient(withoutConfigMap(t), forbidden), nil,
			`kubectl-kai: reading ConfigMap kai-scheduler/kai-scheduler-config: configmaps "kai-scheduler-config" is forbidden: RBAC: no.`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := explain(t, tc.cluster, append([]string{"explain", "queue", "c"}, tc.args...)...)
			if code != 1 {
				t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr)
			}
			expectLines(t, stderr, append([]string{tc.want, `--config-key KEY if the key is not "scheduler-config.yaml"`}, everyWay...)...)
		})
	}
	// Each way out works.
	file := filepath.Join(t.TempDir(), "scheduler-config.yaml")
	if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--default-config"},
		{"--config-file", file},
		{"--config-map", "kai-system/kai-config", "--config-key", "config.yaml"},
	} {
		explainOK(t, withoutConfigMap(t, otherKey), append([]string{"explain", "queue", "c"}, args...)...)
	}
}

// withoutConfigMap is the design cluster without the scheduler's ConfigMap where explain
// looks by default, plus extra objects.
func withoutConfigMap(t *testing.T, extra ...client.Object) client.WithWatch {
	t.Helper()
	c := fakeCluster(t, append(exampleQueues(t, "queues-reclaim-lca-tree.yaml"), extra...)...)
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kai-scheduler", Name: "kai-scheduler-config"}}
	if err := c.Delete(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	return c
}

// --version prints what kubectl-kai is on stdout and exits 0, with no command and without
// connecting to any cluster.
func TestVersionPrintsAndExits(t *testing.T) {
	var stdout, stderr bytes.Buffer
	connect := func(string, string) (client.Reader, string, error) {
		t.Error("--version connected to a cluster")
		return nil, "", errors.New("no cluster")
	}
	code := kubectlkai.Run(context.Background(), []string{"--version"}, &stdout, &stderr, connect, clocktesting.NewFakePassiveClock(now))
	if code != 0 {
		t.Fatalf("--version exited %d: %s", code, stderr.String())
	}
	if want := version.Line("kubectl-kai") + "\n"; stdout.String() != want {
		t.Errorf("--version printed %q, want %q", stdout.String(), want)
	}
	if !strings.HasPrefix(stdout.String(), "kubectl-kai ") || stderr.Len() > 0 {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}

// On the design's preemption tree, a parent queue lists what each leaf's jobs get and from
// where: p-leaf1 sets its own 300s, p-leaf2 inherits p-b's 600s.
func TestExplainQueueOnThePreemptionTree(t *testing.T) {
	started := now.Add(-10 * time.Minute)
	c := fakeCluster(t, append(exampleQueues(t, "queues-preempt-tree.yaml"), job("low", "p-leaf2", "n1", &started)...)...)
	out := explainOK(t, c, "explain", "queue", "p-b")
	expectLines(t, out,
		"path:     p-a → p-b",
		"settings: preemptMinRuntime 10m0s, reclaimMinRuntime not set",
		"Only leaf queues hold jobs. The 2 leaves under p-b get:",
		"Jobs of p-leaf1:\n  against preemption: 5m0s from queue p-leaf1",
		"Jobs of p-leaf2:\n  against preemption: 10m0s from queue p-b",
		// p-leaf1 and p-leaf2 are each other's only neighbours: reclaim can only come from there.
		"against reclaim:\n    from outside p-leaf2: 7s from the default\n",
	)
	out = explainOK(t, c, "explain", "pg", "ns/low")
	expectLines(t, out,
		"10m0s from queue p-b: ended at 2026-01-01T12:00:00Z (0s ago)",
		"resolved: p-leaf2 does not set it → p-c does not set it → p-b sets preemptMinRuntime 10m0s",
	)
}

func TestSnapshotCommand(t *testing.T) {
	_, stderr, code := explain(t, designCluster(t), "snapshot", "today.yaml", "--include", "images,secrets", "--assume-runtime", "-1h")
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	expectLines(t, stderr, `snapshot takes no arguments, got ["today.yaml"] (it writes to standard output)`,
		`--include: unknown field "secrets" (known: images, env, volumes)`, "--assume-runtime: must not be negative, got -1h0m0s")

	out := explainOK(t, designCluster(t), "snapshot", "--context", "lab")
	expectLines(t, out, "# kai-sim scenario: a snapshot of context lab at 2026-01-01T12:00:00Z, by kubectl kai snapshot.",
		"# 1 nodes, 7 queues, 3 jobs (2 running, 1 pending), 0 pods that only hold their nodes.",
		"# ns/run2: running for 2m0s on n1; duration assumed: 2h0m0s more (--assume-runtime)")
	if _, err := input.Parse([]byte(out)); err != nil {
		t.Fatalf("kai-sim cannot read the snapshot: %v\n%s", err, out)
	}
}

// The snapshot command writes the cluster's Topologies, which kai-sim reads back, and its
// help says it does.
func TestSnapshotCommandWritesTopologies(t *testing.T) {
	_, help, code := explain(t, designCluster(t), "--help")
	if code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	expectLines(t, help, "snapshot writes the cluster as a kai-sim scenario: nodes, Topologies, PriorityClasses,")
	topology := &v1alpha1.Topology{ObjectMeta: metav1.ObjectMeta{Name: "racks"},
		Spec: v1alpha1.TopologySpec{Levels: []v1alpha1.TopologyLevel{{NodeLabel: "example.com/rack", Alias: "rack"}}}}
	out := explainOK(t, fakeCluster(t, topology), "snapshot")
	expectLines(t, out, "# Topologies: racks.", "apiVersion: kai.scheduler/v1alpha1\nkind: Topology\nmetadata:\n  name: racks\n")
	sc, err := input.Parse([]byte(out))
	if err != nil {
		t.Fatalf("kai-sim cannot read the snapshot: %v\n%s", err, out)
	}
	if len(sc.Topologies) != 1 || sc.Topologies[0].Name != "racks" || sc.Topologies[0].Spec.Levels[0] != topology.Spec.Levels[0] {
		t.Errorf("kai-sim reads topologies %+v, want racks", sc.Topologies)
	}
}
