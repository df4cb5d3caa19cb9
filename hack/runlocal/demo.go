package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/app"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	"github.com/kai-minruntime/kai-scheduler/test/testenv"
)

// demoOptions shape the demo.
type demoOptions struct {
	MinRuntime time.Duration
	BurstAfter time.Duration
	Dir        string
	// MetricsAddress is where the scheduler serves /metrics ("" or "0": not served).
	MetricsAddress string
	Out            io.Writer
	// Events, when set, receives every line the timeline prints (for tests).
	Events chan<- string
}

func repoRoot() string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// runDemo runs until ctx ends, or until the scheduler or KWOK stops on its own (an error),
// then stops everything it started.
func runDemo(ctx context.Context, opts demoOptions) error {
	env, err := testenv.Start()
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }() // stops kube-apiserver and etcd, removes their data
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return err
	}
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
	schedulerOpts := app.DefaultOptions()
	schedulerOpts.ListenAddress, schedulerOpts.HealthAddress = "0", "0"
	metricsLine := ""
	if opts.MetricsAddress != "" && opts.MetricsAddress != "0" {
		schedulerOpts.ListenAddress = opts.MetricsAddress
		metricsLine = fmt.Sprintf("\nMetrics (kai_scheduler_min_runtime_* among them): http://%s/metrics\n", opts.MetricsAddress)
	}
	schedulerCtx, stopScheduler := context.WithCancel(ctx)
	defer stopScheduler()
	schedulerDone := make(chan error, 1)
	go func() { schedulerDone <- app.Run(schedulerCtx, env.Config, schedulerOpts) }()

	kubectl := "kubectl"
	if assets := os.Getenv("KUBEBUILDER_ASSETS"); assets != "" {
		if _, err := os.Stat(filepath.Join(assets, "kubectl")); err == nil {
			kubectl = filepath.Join(assets, "kubectl")
		}
	}
	k := fmt.Sprintf("%s --kubeconfig %s", kubectl, kubeconfig)
	fmt.Fprintf(opts.Out, `Local cluster up: kube-apiserver and etcd from ./bin, 2 nodes of 8 GPUs played by KWOK
(its log: %s), kai-scheduler running.
The research queue has reclaimMinRuntime %s; production will reclaim its 16 GPUs after %s.

Look for yourself:
  %s get queues
  %s get pg -A
  %s get pods -A -o wide -w
  %s get pg serve -n production -o jsonpath='{.status.schedulingConditions[0].message}'
  %s get events -A --field-selector involvedObject.kind=PodGroup
%s
Press Ctrl-C to stop everything.

`, kwok.Log, opts.MinRuntime, opts.BurstAfter, k, k, k, k, k, metricsLine)

	start := time.Now()
	timeline := &timeline{c: c, out: opts.Out, events: opts.Events, start: start, seen: map[string]string{}, manifests: manifests}
	burst := time.After(opts.BurstAfter)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(opts.Out, "\nStopping the scheduler, KWOK, kube-apiserver and etcd.")
			<-schedulerDone
			return nil
		case err := <-schedulerDone:
			return fmt.Errorf("the scheduler stopped: %w", err)
		case <-burst:
			if err := apply(ctx, c, filepath.Join(examples, "local", "burst.yaml"), opts.MinRuntime, manifests); err != nil {
				return err
			}
			timeline.say("production submits serve (2 pods x 8 GPUs) and wants its quota back")
		case <-tick.C:
			if err := kwok.Err(); err != nil { // no pod would run or go any more
				stopScheduler() // first: the control plane stops slowly while it still watches
				<-schedulerDone
				return err
			}
			timeline.observe(ctx)
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
	c         client.Client
	out       io.Writer
	events    chan<- string
	start     time.Time
	seen      map[string]string
	manifests map[string]*unstructured.Unstructured
}

func (t *timeline) say(line string) {
	fmt.Fprintf(t.out, "%6.1fs  %s\n", time.Since(t.start).Seconds(), line)
	if t.events != nil {
		t.events <- line
	}
}

func (t *timeline) observe(ctx context.Context) {
	pods := &v1.PodList{}
	groups := &v2alpha2.PodGroupList{}
	if t.c.List(ctx, pods) != nil || t.c.List(ctx, groups) != nil {
		return
	}
	var lines []string
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
			lines = append(lines, fmt.Sprintf("%s %s", key, state))
		}
	}
	// A pod evicted and removed between two looks is never seen terminating: say it is gone,
	// and bring it back as its controller would.
	for key, state := range t.seen {
		if strings.HasPrefix(key, "pod ") && !listed[key] && state != "gone" {
			t.seen[key] = "gone"
			lines = append(lines, key+" gone")
			if manifest := t.manifests[strings.TrimPrefix(key, "pod ")]; manifest != nil {
				if err := t.c.Create(ctx, manifest.DeepCopy()); err != nil {
					lines = append(lines, key+" could not be recreated: "+err.Error())
				} else {
					lines = append(lines, key+" recreated pending by its controller, as a Job's pod would be")
				}
			}
		}
	}
	for _, g := range groups.Items {
		message := ""
		if len(g.Status.SchedulingConditions) > 0 {
			message = g.Status.SchedulingConditions[0].Message
		}
		key := "podgroup " + g.Namespace + "/" + g.Name
		if message != "" && t.seen[key] != message {
			lines = append(lines, fmt.Sprintf("%s waits: %s", key, message))
		}
		t.seen[key] = message
	}
	lines = append(lines, t.protections(groups.Items)...)
	lines = append(lines, t.evictions(ctx)...)
	sort.Strings(lines)
	for _, l := range lines {
		t.say(strings.TrimSpace(l))
	}
}

// protections tells each running job's reclaim protection when the scheduler shows a new one
// on its PodGroup.
func (t *timeline) protections(groups []v2alpha2.PodGroup) []string {
	var lines []string
	for _, g := range groups {
		key := "protection " + g.Namespace + "/" + g.Name
		shown := ""
		if m := g.Status.MinRuntime; m != nil {
			for _, r := range m.Reclaim {
				if r.MinRuntime.Duration > 0 {
					source := api.MinRuntime{Duration: r.MinRuntime.Duration, SetBy: r.SetBy}.Source()
					shown += fmt.Sprintf("; against reclaimers from outside %s until %s (%s from %s)",
						r.FromOutside, r.Until.UTC().Format(time.RFC3339), r.MinRuntime.Duration, source)
				}
			}
		}
		if shown != "" && t.seen[key] != shown {
			lines = append(lines, fmt.Sprintf("podgroup %s/%s is protected%s", g.Namespace, g.Name, shown))
		}
		t.seen[key] = shown
	}
	return lines
}

// evictions tells each eviction the scheduler explained in an event on the victim's PodGroup.
func (t *timeline) evictions(ctx context.Context) []string {
	events := &v1.EventList{}
	if t.c.List(ctx, events) != nil {
		return nil
	}
	var lines []string
	for _, e := range events.Items {
		key := "event " + string(e.UID)
		if e.InvolvedObject.Kind != "PodGroup" || (e.Reason != "Reclaimed" && e.Reason != "Preempted") || t.seen[key] != "" {
			continue
		}
		t.seen[key] = "told"
		lines = append(lines, fmt.Sprintf("podgroup %s/%s %s: %s", e.InvolvedObject.Namespace, e.InvolvedObject.Name, e.Reason, e.Message))
	}
	return lines
}
