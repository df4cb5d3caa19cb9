package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/app"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/test/testenv"
)

// demoOptions shape the demo.
type demoOptions struct {
	MinRuntime time.Duration
	BurstAfter time.Duration
	Dir        string
	// MetricsAddress is where the scheduler serves /metrics ("" or "0": not served).
	MetricsAddress string
	// HealthAddress is where the scheduler serves /healthz and /readyz ("" or "0": not served).
	HealthAddress string
	Out           io.Writer
	// Events, when set, receives every line the timeline prints (for tests).
	Events chan<- string
	// Clock times the demo. Required. It plays out in real processes (kube-apiserver,
	// KWOK's pods, the scheduler on its real clock) for a person watching, so the burst and the
	// timeline's seconds are wall time unless a test says otherwise.
	Clock clock.WithTicker
}

func repoRoot() string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// kubectlKai is the command that runs kubectl-kai from source, to paste in the directory
// run-local runs in: `go run ./cmd/kubectl-kai` from the repository (make run-local), with
// `go -C` to the repository from anywhere else.
func kubectlKai() string {
	root, err := filepath.EvalSymlinks(repoRoot())
	if err != nil {
		root = repoRoot()
	}
	if wd, err := os.Getwd(); err == nil {
		if wd, err = filepath.EvalSymlinks(wd); err == nil && wd == root {
			return "go run ./cmd/kubectl-kai"
		}
	}
	return "go -C " + shellQuote(root) + " run ./cmd/kubectl-kai"
}

// shellQuote quotes s for a POSIX shell when it holds anything but the characters of an
// ordinary path.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:@,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// listeners are the ports the demo opens at addresses its flags choose.
func (o demoOptions) listeners() []listener {
	return []listener{
		{Address: o.MetricsAddress, What: "the scheduler's Prometheus /metrics", Flag: "--metrics-address"},
		{Address: o.HealthAddress, What: "the scheduler's /healthz and /readyz", Flag: "--health-address"},
	}
}

// runDemo runs until ctx ends, or until the scheduler or KWOK stops on its own (an error),
// then stops everything it started. What can be found wrong before anything starts (a busy
// port, a configuration that would not load) is, so that it fails at once.
func runDemo(ctx context.Context, opts demoOptions) error {
	if opts.Clock == nil {
		return fmt.Errorf("run-local needs a clock to time the demo by")
	}
	releasePorts, err := reservePorts(opts.listeners())
	if err != nil {
		return err
	}
	defer releasePorts() // already released once the scheduler starts; closing twice is harmless
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return err
	}
	// The scheduler runs the chart's configuration, read from a file as the chart mounts it,
	// and told the ConfigMap it comes from; the ConfigMap is where kubectl kai explain reads it.
	config, err := renderChartConfig()
	if err != nil {
		return err
	}
	configFile, err := config.writeFile(opts.Dir)
	if err != nil {
		return err
	}
	policy, warnings, err := app.LoadPolicy(configFile)
	if err != nil {
		return err
	}

	env, err := testenv.Start()
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }() // stops kube-apiserver and etcd, removes their data
	kubeconfig, _ := filepath.Abs(filepath.Join(opts.Dir, "kubeconfig"))
	if err := env.WriteKubeconfig(kubeconfig); err != nil {
		return err
	}
	// KWOK plays the nodes; its kubeconfig and log go beside the demo's kubeconfig.
	kwok, err := env.StartKWOK(opts.Dir)
	if err != nil {
		return err
	}
	defer func() { _ = kwok.Stop() }() // before the control plane: defers run last first
	c := env.Client
	clientset, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		return err
	}
	if err := config.install(ctx, c); err != nil {
		return err
	}
	for name, value := range map[string]int32{"train": 50, "build-preemptible": 75, "build": 100, "inference": 125} {
		if err := c.Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}); err != nil {
			return err
		}
	}
	for _, node := range []string{"gpu-node-a", "gpu-node-b"} {
		if err := testenv.CreateNode(ctx, clientset, node, 8); err != nil {
			return err
		}
	}

	examples := filepath.Join(repoRoot(), "docs", "examples")
	manifests := map[string]*unstructured.Unstructured{} // the demo's pods, to recreate as a Job controller would
	for _, file := range []string{filepath.Join(examples, "queues-default.yaml"), filepath.Join(examples, "local", "demo.yaml")} {
		if err := apply(ctx, c, file, opts.MinRuntime, manifests); err != nil {
			return err
		}
	}
	// The chart's arguments: the configuration file, the ConfigMap it comes from (where the
	// scheduler posts what it made of it), the Lease in the release's namespace.
	schedulerOpts := app.DefaultOptions()
	schedulerOpts.SchedulerConf, schedulerOpts.ConfigMap = configFile, config.Ref()
	schedulerOpts.Policy, schedulerOpts.ConfigWarnings = policy, warnings
	schedulerOpts.LeaderElectionNamespace = chartNamespace
	schedulerOpts.ListenAddress, schedulerOpts.HealthAddress = "0", "0"
	listenersLine := ""
	if !off(opts.MetricsAddress) {
		schedulerOpts.ListenAddress = opts.MetricsAddress
		listenersLine += fmt.Sprintf("\nMetrics (kai_scheduler_min_runtime_* among them): http://%s/metrics\n", opts.MetricsAddress)
	}
	if !off(opts.HealthAddress) {
		schedulerOpts.HealthAddress = opts.HealthAddress
		listenersLine += fmt.Sprintf("Health: http://%s/healthz and /readyz\n", opts.HealthAddress)
	}
	schedulerCtx, stopScheduler := context.WithCancel(ctx)
	defer stopScheduler()
	schedulerDone := make(chan error, 1)
	releasePorts() // the scheduler's listeners take them over
	go func() { schedulerDone <- app.Run(schedulerCtx, env.Config, schedulerOpts) }()

	kubectl := "kubectl"
	if assets := os.Getenv("KUBEBUILDER_ASSETS"); assets != "" {
		if _, err := os.Stat(filepath.Join(assets, "kubectl")); err == nil {
			kubectl = filepath.Join(assets, "kubectl")
		}
	}
	k := fmt.Sprintf("%s --kubeconfig %s", shellQuote(kubectl), shellQuote(kubeconfig))
	explain := func(podGroup, what string) string {
		return kubectlKai() + " explain pg " + podGroup + " --kubeconfig " + shellQuote(kubeconfig) + "   # " + what
	}
	fmt.Fprintf(opts.Out, `Local cluster up: kube-apiserver and etcd from ./bin, 2 nodes of 8 GPUs played by KWOK
(its log: %s), kai-scheduler running the chart's configuration (%s, from ConfigMap %s).
The research queue has reclaimMinRuntime %s; production will reclaim its 16 GPUs %s after research starts.

Look for yourself:
  %s get queues
  %s get pg -A
  %s get pods -A -o wide -w
  %s get pg serve -n production -o jsonpath='{.status.schedulingConditions[0].message}'
  %s get events -A --field-selector involvedObject.kind=PodGroup
  %s describe configmap %s -n %s

Ask the scheduler why a job is protected or waits (kubectl kai explain, run from source; the
same arguments after `+"`kubectl kai`"+` once kubectl-kai is on your PATH):
  %s
  %s
%s
Press Ctrl-C to stop everything.

`, kwok.Log, configFile, config.Ref(), opts.MinRuntime, opts.BurstAfter, k, k, k, k, k, k, config.Ref().Name, config.Ref().Namespace,
		explain("research/pretrain", "running: what protects it, against whom, until when"),
		explain("production/serve", "once production submits it: why it waits"), listenersLine)

	clk := opts.Clock
	timeline := &timeline{c: c, out: opts.Out, events: opts.Events, clock: clk, start: clk.Now(), seen: map[string]string{}, seenAt: map[string]uint64{}, manifests: manifests}
	// The burst is timed from research's start, not from the scheduler's: a scheduler slower
	// to sync its informers would otherwise meet production's job before research's, and the
	// demo would show no reclaim at all.
	var burst <-chan time.Time
	burstArmed := false
	tick := clk.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(opts.Out, "\nStopping the scheduler, KWOK, kube-apiserver and etcd.")
			<-schedulerDone //nolint:errcheck // stopped on purpose, by Ctrl-C: only its end matters, not how.
			return nil
		case err := <-schedulerDone:
			return fmt.Errorf("the scheduler stopped: %w", err)
		case <-burst:
			burst = nil
			if err := apply(ctx, c, filepath.Join(examples, "local", "burst.yaml"), opts.MinRuntime, manifests); err != nil {
				return err
			}
			timeline.say("production submits serve (2 pods x 8 GPUs) and wants its quota back")
		case <-tick.C():
			if err := kwok.Err(); err != nil { // no pod would run or go any more
				stopScheduler() // first: the control plane stops slowly while it still watches
				<-schedulerDone //nolint:errcheck // stopped on purpose: KWOK's error, returned, is the cause.
				return err
			}
			timeline.observe(ctx)
			if !burstArmed && timeline.running("research/") {
				burst, burstArmed = clk.After(opts.BurstAfter), true
			}
		}
	}
}

// apply creates every object of a manifest file, with the research queue's min-runtime set,
// and keeps each pod's manifest in pods (by namespace/name).
func apply(ctx context.Context, c client.Client, path string, minRuntime time.Duration, pods map[string]*unstructured.Unstructured) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		if obj.GetKind() == "Queue" && obj.GetName() == "research" {
			if err := unstructured.SetNestedField(obj.Object, minRuntime.String(), "spec", "reclaimMinRuntime"); err != nil {
				return err
			}
		}
		if ns := obj.GetNamespace(); ns != "" {
			if err := c.Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
		}
		if obj.GetKind() == "Pod" {
			pods[obj.GetNamespace()+"/"+obj.GetName()] = obj.DeepCopy()
		}
		if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s: creating %s %s: %w", path, obj.GetKind(), obj.GetName(), err)
		}
	}
}

// timeline prints, as they happen, changes of pods, of PodGroup conditions and protections,
// and the evictions the scheduler reports in events. It also plays the workloads'
// controllers: an evicted pod comes back pending, as a Job's would.
type timeline struct {
	c      client.Client
	out    io.Writer
	events chan<- string
	clock  clock.Clock
	start  time.Time
	seen   map[string]string
	// seenAt is the revision of each pod as last seen: a pod gone between two looks went
	// after it.
	seenAt    map[string]uint64
	manifests map[string]*unstructured.Unstructured
}

func (t *timeline) say(line string) {
	// Seconds since the demo began, as the person watching counts them.
	fmt.Fprintf(t.out, "%6.1fs  %s\n", t.clock.Since(t.start).Seconds(), line)
	if t.events != nil {
		t.events <- line
	}
}

// happening is a line of the timeline and the revision of the write that made it: an
// object's resourceVersion, the etcd revision of its latest write. The cluster run-local
// starts has one etcd, whose revision counts every write to every object, so that it orders
// what one look finds changed as it happened on the cluster, which the timestamps, in whole
// seconds and from several clocks, cannot.
type happening struct {
	at   uint64
	line string
}

// revision is obj's resourceVersion as a number; 0 if it is not one (never on run-local's
// etcd), which leaves the line where it was observed among others alike.
func revision(obj metav1.Object) uint64 {
	n, _ := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	return n
}

// running reports whether some pod whose namespace/name starts with prefix was last seen
// running.
func (t *timeline) running(prefix string) bool {
	for key, state := range t.seen {
		if strings.HasPrefix(key, "pod "+prefix) && strings.HasPrefix(state, "running") {
			return true
		}
	}
	return false
}

func (t *timeline) observe(ctx context.Context) {
	pods := &v1.PodList{}
	groups := &v2alpha2.PodGroupList{}
	if t.c.List(ctx, pods) != nil || t.c.List(ctx, groups) != nil {
		return
	}
	var lines []happening
	listed := map[string]bool{}
	for _, p := range pods.Items {
		state := "pending"
		switch {
		case p.DeletionTimestamp != nil:
			state = "evicted"
		case p.Status.Phase == v1.PodRunning:
			state = "running on " + p.Spec.NodeName
		case p.Spec.NodeName != "":
			state = "bound to " + p.Spec.NodeName
		}
		key := "pod " + p.Namespace + "/" + p.Name
		listed[key] = true
		if t.seen[key] != state {
			t.seen[key] = state
			lines = append(lines, happening{revision(&p), fmt.Sprintf("%s %s", key, state)})
		}
		t.seenAt[key] = revision(&p)
	}
	for _, g := range groups.Items {
		message := ""
		if len(g.Status.SchedulingConditions) > 0 {
			message = g.Status.SchedulingConditions[0].Message
		}
		key := "podgroup " + g.Namespace + "/" + g.Name
		if message != "" && t.seen[key] != message {
			lines = append(lines, happening{revision(&g), fmt.Sprintf("%s waits: %s", key, message)})
		}
		t.seen[key] = message
	}
	lines = append(lines, t.protections(groups.Items)...)
	evictions, evictedAt := t.evictions(ctx)
	lines = append(lines, evictions...)
	// A pod evicted and removed between two looks is never seen terminating: say it is gone,
	// and bring it back as its controller would. Its removal left no object to date it: it
	// went after it was last seen, and after the scheduler told its eviction if this look
	// found that too (appended after it, it is told after it at the same revision).
	for _, key := range slices.Sorted(maps.Keys(t.seen)) {
		if state := t.seen[key]; strings.HasPrefix(key, "pod ") && !listed[key] && state != "gone" {
			t.seen[key] = "gone"
			at := max(t.seenAt[key], evictedAt[key])
			lines = append(lines, happening{at, key + " gone"})
			if manifest := t.manifests[strings.TrimPrefix(key, "pod ")]; manifest != nil {
				pod := manifest.DeepCopy()
				if err := t.c.Create(ctx, pod); err != nil {
					lines = append(lines, happening{at, key + " could not be recreated: " + err.Error()})
				} else {
					lines = append(lines, happening{revision(pod), key + " recreated pending by its controller, as a Job's pod would be"})
				}
			}
		}
	}
	// In the order they happened. Lines of one write (a PodGroup's condition and protection)
	// keep the order they were observed in, which lists give by name.
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].at < lines[j].at })
	for _, l := range lines {
		t.say(strings.TrimSpace(l.line))
	}
}

// protections tells each running job's reclaim protection when the scheduler shows a new one
// on its PodGroup.
func (t *timeline) protections(groups []v2alpha2.PodGroup) []happening {
	var lines []happening
	for _, g := range groups {
		key := "protection " + g.Namespace + "/" + g.Name
		shown := ""
		if m := g.Status.MinRuntime; m != nil {
			for _, r := range m.Reclaim {
				if r.MinRuntime.Duration > 0 {
					source := model.MinRuntime{Duration: r.MinRuntime.Duration, SetBy: r.SetBy}.Source()
					shown += fmt.Sprintf("; against reclaimers from outside %s until %s (%s from %s)",
						r.FromOutside, r.Until.UTC().Format(time.RFC3339), r.MinRuntime.Duration, source)
				}
			}
		}
		if shown != "" && t.seen[key] != shown {
			lines = append(lines, happening{revision(&g), fmt.Sprintf("podgroup %s/%s is protected%s", g.Namespace, g.Name, shown)})
		}
		t.seen[key] = shown
	}
	return lines
}

// evictions tells each eviction the scheduler explained in an event on the victim's PodGroup,
// and the revision of the event that told each evicted pod's eviction ("pod NS/NAME"), read
// from the scheduler's message ("Pod NAME evicted by ...").
func (t *timeline) evictions(ctx context.Context) ([]happening, map[string]uint64) {
	events := &v1.EventList{}
	if t.c.List(ctx, events) != nil {
		return nil, nil
	}
	var lines []happening
	evictedAt := map[string]uint64{}
	for _, e := range events.Items {
		key := "event " + string(e.UID)
		if e.InvolvedObject.Kind != "PodGroup" || (e.Reason != "Reclaimed" && e.Reason != "Preempted") || t.seen[key] != "" {
			continue
		}
		t.seen[key] = "told"
		lines = append(lines, happening{revision(&e), fmt.Sprintf("podgroup %s/%s %s: %s", e.InvolvedObject.Namespace, e.InvolvedObject.Name, e.Reason, e.Message)})
		if rest, ok := strings.CutPrefix(e.Message, "Pod "); ok {
			if name, _, ok := strings.Cut(rest, " evicted"); ok {
				evictedAt["pod "+e.InvolvedObject.Namespace+"/"+name] = revision(&e)
			}
		}
	}
	return lines, evictedAt
}
