package sim

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/metrics"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/store"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/memcluster"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// Options of a simulation.
type Options struct {
	// Config is the scheduler configuration (YAML); nil runs the built-in default.
	Config []byte
	// Until stops the simulation at this virtual time; 0 runs until nothing more can happen.
	Until time.Duration
	// Period is the time between scheduling cycles (default 1s).
	Period time.Duration
	// VerifySnapshots checks, before every cycle, that the snapshot the scheduler assembles
	// from the changes it was told of equals one built from full lists of the simulated
	// cluster, and fails the run on the first difference. A self-check for tests: it makes
	// every cycle list and convert the whole cluster.
	VerifySnapshots bool
	// EveryPeriod runs a cycle every period up to Until (which it needs), as a scheduler on
	// a real cluster does, instead of only when something can change (see nextTime). The
	// events are the same; a self-check for tests that the skipped cycles would have decided
	// nothing. The report covers the whole horizon, and protected refusals, counted per
	// cycle, grow with the cycles run.
	EveryPeriod bool
	// NodePoolLabelKey shards the simulated cluster into node pools, as kai-scheduler's
	// --nodepool-label-key does: one scheduler for each value of this label on the
	// scenario's Nodes, Queues and PodGroups, and one for those without it when there are
	// any. Empty runs one scheduler for everything.
	NodePoolLabelKey string
	// PoolConfigs are the configurations (YAML) of named pools, by pool name; a pool without
	// one runs Config.
	PoolConfigs map[string][]byte
	// MaxConsolidationPreemptees, when set, is how many jobs the consolidation action (if
	// configured) may move in a cycle, as kai-scheduler's --max-consolidation-preemptees;
	// unset, its default.
	MaxConsolidationPreemptees *int
	// Metrics, when set, gives the recorder of each pool's scheduler (pool "" when there are
	// no pools), for tests to read what the scheduler would have measured. Unset, a run
	// records nothing: kai-sim moves no metric of the process it runs in.
	Metrics func(pool string) metrics.Recorder
}

// Start is the virtual time at which every simulation begins.
var Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// maxHorizon stops a scenario that would never settle.
const maxHorizon = 365 * 24 * time.Hour

// engine holds one simulation's state.
type engine struct {
	sc        *input.Scenario
	opts      Options
	clock     *clocktesting.FakeClock
	cluster   *memcluster.Cluster
	instances []*instance // one scheduler per node pool, in pool name order
	jobs      []*jobState
	jobByName map[types.NamespacedName]*jobState
	// unsubmitted is the index in jobs (sorted by submission) of the first job not submitted
	// yet; live are the jobs submitted and not completed, in the same order, and
	// completions says some of them completed since live was last compacted.
	unsubmitted int
	live        []*jobState
	completions bool
	result      *report.Result
	// changed tells that something changed that this tick's cycle has not seen (its own
	// binds and evictions, completions after it), so the next cycle may decide more.
	changed    bool
	lastSample map[string]int64
	// lastFairShare is the fair shares of the last sample; fairShare every queue's GPU fair
	// share as the latest cycle of its pool divided it; shareRanges and deservedRanges the
	// range of each queue's GPU fair share and deserved quota while it asked for GPUs.
	lastFairShare, fairShare    map[string]float64
	shareRanges, deservedRanges map[shareKey]*report.Range
	// devices are the nodes' GPU devices as the node side hands them out; deviceErr is the
	// first bind a node could not honour.
	devices   *devicePlugin
	deviceErr error
	// capacity is the GPUs the nodes of the cluster offer (their allocatable, as the pool
	// table counts them), sampled with the queues' GPUs for the plot's capacity line.
	capacity int64
	// demand is each pool's waiting GPU requests as of the latest sample, nodeDemand the same
	// structs by node name, and podShares each pending pod's GPU share, read once: what a
	// sample needs to count the stranded GPUs (devices.go) without allocating. lastAllocated
	// and lastStranded are the latest sample's (MilliGPU); sawShares: some device held shares.
	demand                      map[string]*gpuDemand
	nodeDemand                  map[string]*gpuDemand
	podShares                   map[types.UID]podShare
	lastAllocated, lastStranded int64
	sawShares                   bool
}

// podShare is a pod's GPU share as the scheduler reads it: nil for none, refused for one it
// never places (such a pod waits for nothing a device could give).
type podShare struct {
	share   *model.GPUShare
	refused bool
}

// Run simulates the scenario with the real scheduler.
func Run(ctx context.Context, sc *input.Scenario, opts Options) (*report.Result, error) {
	if opts.Period <= 0 {
		opts.Period = time.Second
	}
	if opts.EveryPeriod && opts.Until <= 0 {
		return nil, fmt.Errorf("a cycle every period needs a time limit (Until)")
	}
	pools := poolsOf(sc, opts.NodePoolLabelKey)
	configs, configWarnings, err := loadPoolConfigs(pools, opts)
	if err != nil {
		return nil, err
	}
	ctx = klog.NewContext(ctx, logr.Discard())
	e, err := newEngine(sc, opts, pools, configs)
	if err != nil {
		return nil, err
	}
	horizon := opts.Until
	if horizon <= 0 {
		horizon = maxHorizon
	}
	for {
		now := e.clock.Now()
		e.submit(now)
		e.terminate(now)
		e.reportCheckpoints(now)
		if opts.VerifySnapshots {
			if err := e.verifySnapshot(ctx); err != nil {
				return nil, fmt.Errorf("at %s: %w", now.Sub(Start), err)
			}
		}
		e.changed = false // the cycle sees every change so far
		for _, in := range e.instances {
			cycle := in.loop.RunOnce(ctx)
			for _, n := range cycle.ProtectedRefusals {
				in.report.ProtectedRefusals += n
				e.result.Totals.ProtectedRefusals += n
			}
			e.noteDelayed(cycle.PendingReasons)
			e.noteProtected(cycle.PendingReasons)
			e.noteShares(in.pool.Name, cycle.QueueShares)
			in.answersChangeAt = cycle.AnswersChangeAt
			in.status.Flush(ctx)
		}
		if e.deviceErr != nil {
			return nil, fmt.Errorf("at %s: %w", now.Sub(Start), e.deviceErr)
		}
		e.runPods(now)
		e.failPods(now)
		e.progress(now)
		e.sample(now)
		next, ok := e.nextTime(now)
		if !ok {
			break
		}
		if next.Sub(Start) > horizon {
			e.clock.SetTime(Start.Add(horizon)) // the report covers the whole horizon
			break
		}
		e.clock.SetTime(next)
	}
	if err := e.resolveMinRuntimes(ctx); err != nil {
		return nil, err
	}
	result := e.summarize()
	result.ConfigWarnings = append([]string{}, configWarnings...)
	return result, nil
}

func newEngine(sc *input.Scenario, opts Options, pools []string, configs map[string]poolConfig) (*engine, error) {
	clk := clocktesting.NewFakeClock(Start)
	cluster := memcluster.New(clk, sc.Nodes, sc.Queues, sc.Classes, sc.Topologies)
	e := &engine{
		sc: sc, opts: opts, clock: clk, cluster: cluster,
		jobByName: map[types.NamespacedName]*jobState{}, result: &report.Result{}, lastSample: map[string]int64{},
		fairShare: map[string]float64{}, shareRanges: map[shareKey]*report.Range{}, deservedRanges: map[shareKey]*report.Range{},
	}
	for _, name := range pools {
		pool := scheduling.NodePool{LabelKey: opts.NodePoolLabelKey, Name: name}
		in, err := e.newInstance(pool, configs[name])
		if err != nil {
			return nil, err
		}
		e.instances = append(e.instances, in)
	}
	e.devices = newDevicePlugin(sc.Nodes)
	e.demand, e.nodeDemand, e.podShares = map[string]*gpuDemand{}, map[string]*gpuDemand{}, map[types.UID]podShare{}
	for _, name := range pools {
		e.demand[name] = &gpuDemand{}
	}
	for _, n := range sc.Nodes {
		e.nodeDemand[n.Name] = e.demand[poolOf(opts.NodePoolLabelKey, n.Labels)]
	}
	// The stores exist: they learn of the cluster as informers would on their first list.
	for _, n := range sc.Nodes {
		cluster.Changed(n)
		gpus := n.Status.Allocatable[model.GPUResourceName]
		e.capacity += gpus.Value()
	}
	for _, q := range sc.Queues {
		cluster.Changed(q)
	}
	for _, pc := range sc.Classes {
		cluster.Changed(pc)
	}
	for _, t := range sc.Topologies {
		cluster.Changed(t)
	}
	for _, template := range sc.Fixed {
		pod := template.DeepCopy()
		pod.UID = types.UID(pod.Namespace + "/" + pod.Name)
		pod.CreationTimestamp = metav1.NewTime(Start)
		pod.Status = v1.PodStatus{Phase: v1.PodRunning, StartTime: &pod.CreationTimestamp}
		e.holdDevices(pod)
		cluster.PutPod(pod)
	}
	for _, job := range sc.Jobs {
		js := newJobState(job, opts.NodePoolLabelKey)
		e.jobs = append(e.jobs, js)
		e.jobByName[types.NamespacedName{Namespace: job.Group.Namespace, Name: job.Group.Name}] = js
	}
	cluster.OnBind = e.onBind
	cluster.OnDelete = e.onDelete
	cluster.OnGroupStatus = e.onGroupStatus
	return e, nil
}

// verifySnapshot compares, for every pool's scheduler, the snapshot assembled from its store
// with one built from lists.
func (e *engine) verifySnapshot(ctx context.Context) error {
	for _, in := range e.instances {
		fromStore, storeProblems, err := in.loop.Builder.Snapshot(ctx)
		if err != nil {
			return err
		}
		listed := &store.Builder{Reader: e.cluster, SchedulerName: input.SchedulerName, Pool: in.pool, Overlay: in.loop.Builder.Overlay}
		fromLists, listProblems, err := listed.Snapshot(ctx)
		if err != nil {
			return err
		}
		// DeepEqual first: a diff of two snapshots is slow, and only a failure needs one.
		//nolint:govet // deepequalerrors: an unparsable node affinity keeps its parse error, which both snapshots must hold alike.
		if !reflect.DeepEqual(fromLists, fromStore) {
			diff := cmp.Diff(fromLists, fromStore, cmp.Exporter(func(reflect.Type) bool { return true }))
			return fmt.Errorf("pool %s: the snapshot from the store differs from one built from lists (-lists +store):\n%s", in.pool, diff)
		}
		if want, got := problemKeys(listProblems), problemKeys(storeProblems); !slices.Equal(want, got) {
			return fmt.Errorf("pool %s: the store reports other problems than lists (-lists +store):\n%s", in.pool, cmp.Diff(want, got))
		}
	}
	return nil
}

func problemKeys(problems []store.Problem) []string {
	keys := make([]string, 0, len(problems))
	for _, p := range problems {
		keys = append(keys, p.Object.GetNamespace()+"/"+p.Object.GetName()+" "+p.Reason+": "+p.Message)
	}
	sort.Strings(keys)
	return keys
}

func (e *engine) seconds(t time.Time) float64 { return t.Sub(Start).Seconds() }

// event records what happened to a whole job (Start, Complete).
func (e *engine) event(t time.Time, typ string, job *jobState) {
	e.result.Events = append(e.result.Events, report.Event{Time: e.seconds(t), Type: typ, PodGroup: job.name(), Queue: job.queue, Pool: job.pool})
}

// podEvent records a Bind or Evict of one pod.
func (e *engine) podEvent(typ string, job *jobState, pod *v1.Pod, action, preemptor, node, reason string) {
	e.result.Events = append(e.result.Events, report.Event{
		Time: e.seconds(e.clock.Now()), Type: typ, PodGroup: job.name(), Queue: job.queue, Pool: job.pool, Pod: pod.Name,
		Action: action, Preemptor: preemptor, Node: node, Reason: reason,
	})
}

// submit creates the PodGroups and pods of jobs whose time has come. A job submitted before
// the start is as old as it says; a running job's pods that name a node run there, stamped
// with its start as the status updater would have stamped it.
func (e *engine) submit(now time.Time) {
	for ; e.unsubmitted < len(e.jobs); e.unsubmitted++ {
		js := e.jobs[e.unsubmitted]
		if Start.Add(js.spec.SubmitAt).After(now) {
			break // jobs are in submission order
		}
		js.submitted = true
		e.live = append(e.live, js)
		group := js.spec.Group.DeepCopy()
		group.CreationTimestamp = metav1.NewTime(now)
		if js.spec.SubmitAt < 0 {
			group.CreationTimestamp = metav1.NewTime(Start.Add(js.spec.SubmitAt))
		}
		var started time.Time
		if js.spec.Running {
			started = Start.Add(-js.spec.RunningFor)
			group.Annotations[scheduling.LastStartTimestampAnnotation] = scheduling.FormatStartTime(started)
		}
		e.cluster.PutGroup(group)
		for _, template := range js.spec.Pods {
			pod := e.newPod(js, template, group.CreationTimestamp.Time)
			if js.spec.Running && template.Spec.NodeName != "" {
				pod.Spec.NodeName = template.Spec.NodeName
				pod.CreationTimestamp = metav1.NewTime(started)
				pod.Status.Phase, pod.Status.StartTime = v1.PodRunning, &pod.CreationTimestamp
				e.holdDevices(pod)
			}
			e.cluster.PutPod(pod)
		}
		e.refreshPods(js)
		if js.spec.Running {
			e.resume(js, started)
		}
	}
}

// resume takes up the run of a job that started before the simulation: its run, and the
// work of it, count from then. A job whose pods on nodes do not make its gang is not running
// (its run ended as the snapshot was taken): it waits like any other.
func (e *engine) resume(js *jobState, started time.Time) {
	if ready, gpus := js.runningGang(e.devices); ready {
		js.running, js.runStart, js.firstStart, js.gpus = true, started, &started, gpus
	}
}

// createPod recreates, pending, a pod whose termination is over, as a job controller would.
func (e *engine) createPod(js *jobState, template *v1.Pod, now time.Time) {
	e.cluster.PutPod(e.newPod(js, template, now))
	e.refreshPods(js)
}

// newPod is a new pending pod of the job, created at created: the template's node, where a
// running job's pod was when the simulation started, is not where a new one goes.
func (e *engine) newPod(js *jobState, template *v1.Pod, created time.Time) *v1.Pod {
	pod := template.DeepCopy()
	js.generation++
	pod.UID = types.UID(fmt.Sprintf("%s/%s/%d", pod.Namespace, pod.Name, js.generation))
	pod.CreationTimestamp = metav1.NewTime(created)
	pod.Spec.NodeName = ""
	pod.Status = v1.PodStatus{Phase: v1.PodPending}
	return pod
}

// refreshPods re-reads a job's current pods from the cluster, in name order. The engine's
// passes over jobs read this list instead of looking every pod up on every tick.
func (e *engine) refreshPods(js *jobState) {
	js.pods, js.podGPUs = js.pods[:0], js.podGPUs[:0]
	for i, template := range js.spec.Pods {
		if pod := e.cluster.Pod(types.NamespacedName{Namespace: template.Namespace, Name: template.Name}); pod != nil {
			js.pods, js.podGPUs = append(js.pods, pod), append(js.podGPUs, js.templateGPUs[i])
		}
	}
}

// active lists the jobs submitted and not completed, the only ones a tick looks at.
func (e *engine) active() []*jobState {
	if e.completions {
		e.live = slices.DeleteFunc(e.live, func(js *jobState) bool { return js.completed != nil })
		e.completions = false
	}
	return e.live
}

// terminate removes evicted pods whose grace period is over and recreates them pending, and
// the failed pods of a job none of whose pods is on a node any more.
func (e *engine) terminate(now time.Time) {
	var gone []*v1.Pod
	for _, js := range e.active() {
		gone = gone[:0] // collected first: recreating a pod rewrites js.pods
		for _, pod := range js.pods {
			if pod.DeletionTimestamp != nil && !now.Before(pod.DeletionTimestamp.Add(GracePeriod(pod))) {
				gone = append(gone, pod)
			}
		}
		// Once none of its pods is on a node any more, the workload restarts: it recreates its
		// failed pods with the ones evicted.
		restarts := true
		for _, pod := range js.pods {
			if pod.Spec.NodeName != "" && pod.Status.Phase != v1.PodFailed && !slices.Contains(gone, pod) {
				restarts = false
			}
		}
		for _, pod := range js.pods {
			if restarts && pod.Status.Phase == v1.PodFailed {
				gone = append(gone, pod)
			}
		}
		for _, pod := range gone {
			e.removePod(pod)
			for _, template := range js.spec.Pods {
				if template.Name == pod.Name {
					e.createPod(js, template, now)
				}
			}
		}
	}
}

// reportCheckpoints is the workloads telling the scheduler when they last saved their work,
// as a training job that checkpoints writes kai.scheduler/last-checkpoint-timestamp on its
// PodGroup: each running job with a checkpoint interval reports the latest checkpoint of its
// run, at the virtual time it was taken. Only a new checkpoint is written, so a day of
// thousands of jobs writes about one annotation per job and interval. The annotation outlives
// the run, as a workload's would; the scheduler clamps it to the start of the next run.
//
// A checkpoint asks for no cycle of its own (nextTime does not wait for one): it only orders
// victims that are otherwise equal, which matters to a cycle that evicts, and such cycles run
// for their own reasons (a submission, a termination, a protection ending) and read the
// latest checkpoint then.
func (e *engine) reportCheckpoints(now time.Time) {
	for _, js := range e.active() {
		at, ok := js.lastCheckpoint(now)
		if !ok || at.Equal(js.reported) {
			continue
		}
		js.reported = at
		group := e.cluster.Group(js.groupKey())
		if group.Annotations == nil {
			group.Annotations = map[string]string{}
		}
		group.Annotations[scheduling.LastCheckpointTimestampAnnotation] = scheduling.FormatStartTime(at)
		e.cluster.Changed(group)
	}
}

// failAt is when a running pod fails as the scenario asks; ok is false if it does not.
func (js *jobState) failAt(pod *v1.Pod) (time.Time, bool) {
	after, ok := js.spec.FailAfter[pod.Name]
	if !ok || js.failed[pod.Name] || pod.Status.Phase != v1.PodRunning || pod.DeletionTimestamp != nil || pod.Status.StartTime == nil {
		return time.Time{}, false
	}
	return pod.Status.StartTime.Add(after), true
}

// failPods is the kubelet seeing a pod's container exit with an error: the pod fails, holds
// nothing any more, and stays until its workload restarts (see terminate).
func (e *engine) failPods(now time.Time) {
	for _, js := range e.active() {
		for _, pod := range js.pods {
			if at, ok := js.failAt(pod); !ok || now.Before(at) {
				continue
			}
			if js.failed == nil {
				js.failed = map[string]bool{}
			}
			js.failed[pod.Name] = true
			e.devices.release(pod)
			pod.Status.Phase = v1.PodFailed
			pod.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "main", State: v1.ContainerState{
				Terminated: &v1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", FinishedAt: metav1.NewTime(now)}}}}
			e.cluster.Changed(pod)
			e.changed = true
			e.podEvent(report.EventFail, js, pod, "", "", pod.Spec.NodeName, "the scenario's "+input.FailAfterAnnotation)
		}
	}
}

// GracePeriod is how long a deleted pod takes to terminate: its termination grace period, or
// Kubernetes' default of 30s when it sets none.
func GracePeriod(pod *v1.Pod) time.Duration {
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		return time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	return 30 * time.Second
}

// runPods is the kubelet: bound pods start running now.
func (e *engine) runPods(now time.Time) {
	for _, js := range e.active() {
		for _, pod := range js.pods {
			if pod.Spec.NodeName != "" && pod.Status.Phase == v1.PodPending && pod.DeletionTimestamp == nil {
				// Not a change the scheduler acts on (bound and running pods count alike), so
				// it does not by itself call for another cycle.
				started := metav1.NewTime(now)
				pod.Status.Phase, pod.Status.StartTime = v1.PodRunning, &started
				e.cluster.Changed(pod)
			}
		}
	}
}

func (e *engine) jobOf(pod *v1.Pod) *jobState {
	return e.jobByName[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Annotations["pod-group-name"]}]
}

func (e *engine) onBind(pod *v1.Pod, node string) {
	e.changed = true
	devices, err := e.devices.bind(pod, node)
	if err != nil && e.deviceErr == nil {
		e.deviceErr = err
	}
	if js := e.jobOf(pod); js != nil {
		e.podEvent(report.EventBind, js, pod, "allocate", "", node, "")
		e.result.Events[len(e.result.Events)-1].GPUDevices = devices
	}
}

// holdDevices gives a pod that runs from the start the devices it holds; a share placed
// before the simulation (by the scheduler it replays) carries the GPU groups that scheduler
// gave it, which are the ones this scheduler reads for a share without any.
func (e *engine) holdDevices(pod *v1.Pod) {
	if share, err := model.ParseGPUShare(pod); err == nil && share != nil && len(model.GPUGroupsOf(pod)) == 0 {
		if pod.Labels == nil {
			pod.Labels = map[string]string{}
		}
		maps.Copy(pod.Labels, model.GPUGroupLabels(model.OwnGPUGroups(pod.Spec.NodeName, string(pod.UID), share.Devices)))
	}
	if _, err := e.devices.bind(pod, pod.Spec.NodeName); err != nil && e.deviceErr == nil {
		e.deviceErr = err
	}
}

// removePod removes a pod whose termination is over, and the devices it held with it.
func (e *engine) removePod(pod *v1.Pod) {
	e.devices.release(pod)
	delete(e.podShares, pod.UID) // a recreated pod has a new UID: the entry would only grow
	e.cluster.RemovePod(pod)
}

// onDelete records an eviction with the action and reason the scheduler wrote into the
// pod's DisruptionTarget condition just before deleting it.
func (e *engine) onDelete(pod *v1.Pod) {
	e.changed = true
	js := e.jobOf(pod)
	if js == nil {
		return
	}
	js.evictions++
	var action framework.ActionType
	var preemptor model.JobID
	reason := ""
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.DisruptionTarget {
			reason = c.Message
			action, preemptor, _ = framework.EvictionAction(c.Message)
		}
	}
	e.podEvent(report.EventEvict, js, pod, string(action), string(preemptor), pod.Spec.NodeName, reason)
}

// nextTime is when the next cycle runs: one period on after a tick that changed something;
// otherwise the first time something can change (a submission, a termination, a completion,
// a protection that held a victim back ending), on the period grid. A cycle in between would
// see the same cluster, get the same answers and decide nothing. ok is false when nothing
// can happen any more.
func (e *engine) nextTime(now time.Time) (time.Time, bool) {
	if e.changed || e.opts.EveryPeriod {
		return now.Add(e.opts.Period), true
	}
	var next time.Time
	consider := func(t time.Time) {
		if t.After(now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for _, in := range e.instances {
		consider(in.answersChangeAt)
	}
	if e.unsubmitted < len(e.jobs) {
		consider(Start.Add(e.jobs[e.unsubmitted].spec.SubmitAt))
	}
	for _, js := range e.active() {
		for _, pod := range js.pods {
			if pod.DeletionTimestamp != nil {
				consider(pod.DeletionTimestamp.Add(GracePeriod(pod)))
			}
			if at, ok := js.failAt(pod); ok {
				consider(at)
			}
		}
		if js.running {
			if done, ok := js.completionTime(); ok {
				consider(done)
			}
		}
	}
	if next.IsZero() {
		return next, false
	}
	periods := (next.Sub(Start) + e.opts.Period - 1) / e.opts.Period
	return Start.Add(periods * e.opts.Period), true
}

// sample records the GPUs each queue holds, its fair share of GPUs and the cluster's GPUs,
// when any of them changed.
func (e *engine) sample(now time.Time) {
	gpus := map[string]int64{} // MilliGPU: compared exactly, in whole numbers
	for _, js := range e.active() {
		for i, pod := range js.pods {
			if pod.Status.Phase == v1.PodRunning {
				gpus[js.queue] += e.devices.gpusOf(pod, js.podGPUs[i])
			}
		}
	}
	same := maps.Equal(gpus, e.lastSample)
	allocated, stranded := e.gpuUse()
	same = same && allocated == e.lastAllocated && stranded == e.lastStranded
	series := e.result.Series
	if !same || !maps.Equal(e.fairShare, e.lastFairShare) || len(series) == 0 || series[len(series)-1].Capacity != e.capacity {
		fair := e.fairShares()
		held := make(map[string]float64, len(gpus))
		for q, n := range gpus {
			held[q] = float64(n) / model.MilliGPU
		}
		e.result.Series = append(e.result.Series, report.Sample{Time: e.seconds(now), GPUs: held, FairShare: fair, Capacity: e.capacity,
			Allocated: float64(allocated) / model.MilliGPU, Stranded: float64(stranded) / model.MilliGPU})
		e.lastSample, e.lastFairShare = gpus, fair
		e.lastAllocated, e.lastStranded = allocated, stranded
	}
}

// gpuUse is what the nodes' devices have given out now, and the free GPU capacity that no
// pending pod could use (MilliGPU), counted from the pods waiting in each pool.
func (e *engine) gpuUse() (allocated, stranded int64) {
	if e.capacity == 0 {
		return 0, 0
	}
	for _, want := range e.demand {
		want.reset()
	}
	for _, js := range e.active() {
		want := e.demand[js.pool]
		for i, pod := range js.pods {
			if pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil || pod.Status.Phase != v1.PodPending {
				continue
			}
			s, ok := e.podShares[pod.UID]
			if !ok {
				share, err := model.ParseGPUShare(pod)
				s = podShare{share: share, refused: err != nil}
				e.podShares[pod.UID] = s
			}
			if !s.refused {
				want.note(js.podGPUs[i], s.share)
			}
		}
	}
	if !e.sawShares {
		e.sawShares = e.devices.sharing()
	}
	return e.devices.allocated(), e.devices.stranded(e.nodeDemand)
}

// noteDelayed marks the jobs a cycle held back by their preemption delay, for the report.
func (e *engine) noteDelayed(pending map[model.JobID][]model.PendingReason) {
	e.eachReason(pending, model.ReasonPreemptionDelayNotElapsed, func(js *jobState, _ model.PendingReason) { js.delayed = true })
}

// eachReason calls note for every pending reason of the given kind a cycle left, with the
// job's state. The map's order decides nothing: notes only mark or keep maxima.
func (e *engine) eachReason(pending map[model.JobID][]model.PendingReason, reason string, note func(*jobState, model.PendingReason)) {
	for id, reasons := range pending {
		for _, r := range reasons {
			if r.Reason != reason {
				continue
			}
			if js := e.jobByName[id.NamespacedName()]; js != nil {
				note(js, r)
			}
		}
	}
}
