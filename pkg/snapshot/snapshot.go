package snapshot

import (
	"context"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/kai/v1alpha1"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/conf"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/plugins/minruntime"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/store"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
)

// ExpectedRuntimeAnnotation gives a job its duration (see scheduling.ExpectedRuntimeAnnotation).
const ExpectedRuntimeAnnotation = scheduling.ExpectedRuntimeAnnotation

// Options say what to export and how.
type Options struct {
	// SchedulerName is the scheduler whose pods make up the jobs; pods of others only
	// hold resources on their nodes.
	SchedulerName string
	// AssumeRuntime is what a job without an expected runtime is assumed to need from the
	// snapshot on: a pending job in all, a running job beyond what it has run. 0 assumes
	// such jobs never finish.
	AssumeRuntime time.Duration
	// Include exports pod fields left out by default: "images", "env", "volumes".
	Include []string
	// Source names the cluster in the scenario's header (a kubeconfig context).
	Source string
}

// Includable are the values of Options.Include.
var Includable = []string{"images", "env", "volumes"}

// Cluster is the cluster as read at one moment, ready to write.
type Cluster struct {
	// At is the moment the snapshot is of: the next whole second (model.ShownEnd), so that
	// every time read (whole seconds, as the API keeps them, and the scheduler's stamps,
	// finer) is at or before it.
	At      time.Time
	Nodes   []v1.Node
	Classes []schedulingv1.PriorityClass
	Queues  []v2.Queue
	// Topologies are the cluster's Topologies, in name order; none where the cluster does
	// not serve their CRD.
	Topologies []v1alpha1.Topology
	Jobs       []*Job
	// Fixed are the running pods of other schedulers.
	Fixed []*v1.Pod
	// Left are the pods not exported as the cluster has them, each with why and what became
	// of it.
	Left []string
}

// Job is a PodGroup with its pods and the times the scenario gives it.
type Job struct {
	Group *v2alpha2.PodGroup
	Pods  []*v1.Pod
	// Running says some pods are on nodes (OnNodes > 0); RunningFor is how long since the start its
	// min-runtime counts from; StartNote says when that start is not the stamp's.
	Running    bool
	RunningFor time.Duration
	StartNote  string
	Nodes      []string // the nodes its pods are on, sorted, once each
	OnNodes    int      // how many of its pods are on them
	// Startup is the simulation hint sim.kai.scheduler/startup the live PodGroup carries:
	// kai-sim's duration is the work after it.
	Startup time.Duration
	// Age is how long ago the PodGroup was created.
	Age time.Duration
	// Duration is the scenario's sim.kai.scheduler/duration (0: never finishes), from
	// DurationFrom: the annotation, or "assumed" with Why when it was unusable.
	Duration     time.Duration
	DurationFrom string
	Why          string
}

// Read reads the cluster at now as the scheduler named opts.SchedulerName sees it.
func Read(ctx context.Context, reader client.Reader, now time.Time, opts Options) (*Cluster, error) {
	c := &Cluster{At: model.ShownEnd(now)}
	nodes := &v1.NodeList{}
	classes := &schedulingv1.PriorityClassList{}
	queues := &v2.QueueList{}
	groups := &v2alpha2.PodGroupList{}
	pods := &v1.PodList{}
	for _, list := range []client.ObjectList{nodes, classes, queues, groups, pods} {
		if err := reader.List(ctx, list); err != nil {
			return nil, fmt.Errorf("listing %T: %w", list, err)
		}
	}
	// Topologies are optional, as they are to the scheduler: a cluster without their CRD has
	// none, and its snapshot holds none.
	topologies := &v1alpha1.TopologyList{}
	if err := reader.List(ctx, topologies); err != nil && !meta.IsNoMatchError(err) {
		return nil, fmt.Errorf("listing %T: %w", topologies, err)
	}
	// The scheduler's own view of the same objects gives each running job the start
	// min-runtime counts from: listing again would be another moment.
	converted := store.New(opts.SchedulerName, scheduling.NodePool{})
	for _, objs := range [][]client.Object{items(nodes.Items), items(classes.Items), items(queues.Items), items(groups.Items), items(pods.Items)} {
		for _, o := range objs {
			converted.Upsert(o)
		}
	}
	view, _, err := (&store.Builder{Store: converted}).Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the cluster as the scheduler does: %w", err)
	}
	c.Nodes, c.Classes, c.Queues, c.Topologies = nodes.Items, classes.Items, queues.Items, topologies.Items
	sort.Slice(c.Nodes, func(i, j int) bool { return c.Nodes[i].Name < c.Nodes[j].Name })
	sort.Slice(c.Topologies, func(i, j int) bool { return c.Topologies[i].Name < c.Topologies[j].Name })
	sort.Slice(c.Classes, func(i, j int) bool { return c.Classes[i].Name < c.Classes[j].Name })
	sort.Slice(c.Queues, func(i, j int) bool { return c.Queues[i].Name < c.Queues[j].Name })
	known := map[string]bool{}
	for _, n := range c.Nodes {
		known[n.Name] = true
	}

	byName := map[string]*Job{}
	for i := range groups.Items {
		g := &groups.Items[i]
		byName[g.Namespace+"/"+g.Name] = &Job{Group: g}
	}
	sort.Slice(pods.Items, func(i, j int) bool { return key(&pods.Items[i]) < key(&pods.Items[j]) })
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
			continue // finished: holds nothing
		}
		if pod.Spec.NodeName != "" && !known[pod.Spec.NodeName] {
			c.Left = append(c.Left, fmt.Sprintf("pod %s: on node %s, which is gone; not exported", key(pod), pod.Spec.NodeName))
			continue
		}
		if pod.Spec.SchedulerName != opts.SchedulerName {
			if pod.Spec.NodeName != "" && pod.DeletionTimestamp == nil {
				c.Fixed = append(c.Fixed, pod)
			}
			continue // a pending pod of another scheduler holds nothing yet
		}
		group := pod.Annotations[scheduling.PodGroupNameAnnotation]
		job := byName[pod.Namespace+"/"+group]
		if job == nil {
			why := "no " + scheduling.PodGroupNameAnnotation + " annotation"
			if group != "" {
				why = "its PodGroup " + pod.Namespace + "/" + group + " does not exist"
			}
			if pod.Spec.NodeName != "" && pod.DeletionTimestamp == nil {
				// The scheduler still charges its node for it, and so must the simulation.
				c.Fixed = append(c.Fixed, pod)
				c.Left = append(c.Left, fmt.Sprintf("pod %s: %s; written as holding its node, as a pod of another scheduler", key(pod), why))
				continue
			}
			c.Left = append(c.Left, fmt.Sprintf("pod %s: %s; not exported", key(pod), why))
			continue
		}
		job.Pods = append(job.Pods, pod)
	}

	jobs := map[model.JobID]*model.JobInfo{}
	for _, j := range view.Jobs {
		jobs[j.ID] = j
	}
	for _, job := range byName {
		if len(job.Pods) == 0 {
			continue // finished, or not created yet: nothing to schedule
		}
		c.describe(job, jobs[model.NewJobID(job.Group.Namespace, job.Group.Name)], opts.AssumeRuntime)
		c.Jobs = append(c.Jobs, job)
	}
	sort.Slice(c.Jobs, func(i, j int) bool { return key(c.Jobs[i].Group) < key(c.Jobs[j].Group) })
	sort.Strings(c.Left)
	return c, nil
}

// describe gives a job its times: how long ago it was submitted, how long it has run (from
// the start the scheduler counts min-runtime from, by the scheduler's own rule), and how long
// it runs in all.
func (c *Cluster) describe(job *Job, info *model.JobInfo, assume time.Duration) {
	if created := job.Group.CreationTimestamp; !created.IsZero() { // an API server always sets it
		job.Age = max(0, c.At.Sub(created.Time))
	}
	nodes := map[string]bool{}
	for _, pod := range job.Pods {
		if pod.Spec.NodeName != "" && pod.DeletionTimestamp == nil {
			nodes[pod.Spec.NodeName] = true
			job.OnNodes++
		}
	}
	if value, ok := job.Group.Annotations[input.StartupAnnotation]; ok {
		job.Startup, _ = conf.ParseNonNegativeDuration(input.StartupAnnotation, value) // kai-sim names a bad one
	}
	for n := range nodes {
		job.Nodes = append(job.Nodes, n)
	}
	sort.Strings(job.Nodes)
	job.Running = job.OnNodes > 0
	if job.Running {
		job.RunningFor, job.StartNote = c.runningFor(info)
		job.Age = max(job.Age, job.RunningFor) // a PodGroup recreated under its running pods
	}
	expected, found, err := expectedRuntime(job)
	switch {
	case found && err == nil:
		job.Duration, job.DurationFrom = expected, ExpectedRuntimeAnnotation
	default:
		job.DurationFrom = "assumed"
		if err != nil {
			job.Why = err.Error()
		}
		if assume > 0 {
			job.Duration = assume
			if job.Running {
				job.Duration += job.RunningFor
			}
		}
	}
}

// runningFor is how long a running job has run at the snapshot, counted from the start the
// scheduler counts its min-runtime from. The start is rounded up to a whole second, as a
// status rounds protection ends (model.ShownEnd), so that the simulated protection never ends
// before the real one.
func (c *Cluster) runningFor(info *model.JobInfo) (time.Duration, string) {
	if info == nil {
		return 0, "the scheduler does not see this job; counted as just started"
	}
	start, known, note := minruntime.EffectiveStart(info, c.At)
	if !known {
		return 0, "no pod has reported its start yet; counted as just started"
	}
	return c.At.Sub(model.ShownEnd(start)), note
}

// expectedRuntime reads the job's expected runtime from its PodGroup, else from its first pod
// that has one.
func expectedRuntime(job *Job) (time.Duration, bool, error) {
	type owner struct {
		kind string
		obj  client.Object
	}
	owners := []owner{{"PodGroup", job.Group}}
	for _, pod := range job.Pods {
		owners = append(owners, owner{"Pod", pod})
	}
	for _, o := range owners {
		value, ok := o.obj.GetAnnotations()[ExpectedRuntimeAnnotation]
		if !ok {
			continue
		}
		d, err := conf.ParseNonNegativeDuration(ExpectedRuntimeAnnotation, value)
		if err != nil {
			return 0, true, fmt.Errorf("%s %s: %w", o.kind, key(o.obj), err)
		}
		return d, true, nil
	}
	return 0, false, nil
}

// items are pointers to the items of a list, as objects.
func items[T any, PT interface {
	*T
	client.Object
}](list []T) []client.Object {
	out := make([]client.Object, len(list))
	for i := range list {
		out[i] = PT(&list[i])
	}
	return out
}

func key(o client.Object) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}
