package sim

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/store"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// jobState is a job's life in the simulation. A job makes progress while its gang runs, as
// the scheduler's gang rule counts it (runningGang): after Startup, useful work accrues; it is
// saved every CheckpointInterval.
// When it falls below that (an eviction), work since the last checkpoint is lost, and
// the job starts over from what was saved once it runs again.
type jobState struct {
	spec       *input.Job
	queue      string
	pool       string // the node pool of its PodGroup, by the scenario's label key
	submitted  bool
	generation int
	// pods are the job's current pods, kept by refreshPods, and podGPUs the GPUs each asks
	// for (templateGPUs, per pod of the spec, read once).
	pods                  []*v1.Pod
	podGPUs, templateGPUs []int64

	// delayed: the scheduler held the job back by its preemption delay at least once.
	delayed  bool
	running  bool
	runStart time.Time
	// saved is the useful work checkpointed before the current run.
	saved time.Duration
	// gpus is what the current run holds, for waste accounting.
	gpus int64
	// reported is the checkpoint last written on the job's PodGroup (see reportCheckpoints);
	// zero before the first.
	reported time.Time

	// failed are the pods (by name) that failed as the scenario asked; they fail once.
	failed map[string]bool
	// seen is what the scheduler told of the job's protection (protection.go).
	seen seenProtection
	// gang is the job as the scheduler's gang rule reads it: its minimum, read from the spec
	// once, and its pods, which runningGang rewrites into gangPods on every call.
	gang     *model.JobInfo
	gangPods []model.PodInfo

	firstStart, completed *time.Time
	evictions             int
	wastedGPUSeconds      float64
}

func newJobState(job *input.Job, poolLabelKey string) *jobState {
	js := &jobState{spec: job, queue: job.Group.Spec.Queue, pool: poolOf(poolLabelKey, job.Group.Labels)}
	for _, pod := range job.Pods {
		js.templateGPUs = append(js.templateGPUs, PodGPUs(pod))
	}
	minMember, minSubGroup, groups := store.JobMinimum(&job.Group.Spec)
	js.gang = &model.JobInfo{MinMember: minMember, MinSubGroup: minSubGroup, SubGroups: groups}
	js.gangPods = make([]model.PodInfo, len(job.Pods)) // a job never has more pods than its spec
	return js
}

// groupKey is the job's PodGroup in the simulated cluster.
func (js *jobState) groupKey() types.NamespacedName {
	return types.NamespacedName{Namespace: js.spec.Group.Namespace, Name: js.spec.Group.Name}
}

func (js *jobState) name() string {
	return js.spec.Key()
}

// useful is the useful work of the current run at t.
func (js *jobState) useful(t time.Time) time.Duration {
	return max(0, t.Sub(js.runStart)-js.spec.Startup)
}

// lastCheckpoint is when the current run last saved its work, as of t: Startup and a whole
// number of checkpoint intervals of useful work after the run's start (the work endRun
// keeps). ok is false before the run's first checkpoint, and for a job that never saves.
func (js *jobState) lastCheckpoint(t time.Time) (time.Time, bool) {
	ci := js.spec.CheckpointInterval
	if !js.running || ci <= 0 {
		return time.Time{}, false
	}
	k := js.useful(t) / ci
	if k < 1 {
		return time.Time{}, false
	}
	return js.runStart.Add(js.spec.Startup + k*ci), true
}

// completionTime is when the current run finishes the job, if it has a duration.
func (js *jobState) completionTime() (time.Time, bool) {
	if js.spec.Duration == 0 {
		return time.Time{}, false
	}
	return js.runStart.Add(js.spec.Startup + js.spec.Duration - js.saved), true
}

// progress starts, ends and completes runs from what the job's pods do now.
func (e *engine) progress(now time.Time) {
	for _, js := range e.active() {
		ready, gpus := js.runningGang(e.devices)
		switch {
		case !js.running && ready:
			js.running, js.runStart, js.gpus = true, now, gpus
			if js.firstStart == nil {
				js.firstStart = &now
			}
			e.event(now, report.EventStart, js)
		case js.running && !ready:
			e.endRun(js, now)
		case js.running:
			js.gpus = max(js.gpus, gpus) // an elastic job that grew wastes more when evicted
		}
		if done, ok := js.completionTime(); js.running && ok && !now.Before(done) {
			e.complete(js, now)
		}
	}
}

// isRunning is a pod doing the job's work.
func isRunning(pod *v1.Pod) bool {
	return pod.Status.Phase == v1.PodRunning && pod.DeletionTimestamp == nil
}

// runningGang reports whether the job's running pods make its gang, as the scheduler counts
// it (model.JobInfo.IsGangSatisfied: minMember pods and each sub-group's minimum, or enough ready
// sub-groups under minSubGroup), and the GPUs those pods hold (MilliGPU: a share counts its
// part of its devices), as the devices say.
func (js *jobState) runningGang(devices *devicePlugin) (ready bool, gpus int64) {
	js.gang.Pods = js.gang.Pods[:0]
	running := false
	for i, pod := range js.pods {
		status := model.Pending
		if isRunning(pod) {
			status, running = model.Running, true
			gpus += devices.gpusOf(pod, js.podGPUs[i])
		}
		js.gangPods[i] = model.PodInfo{Name: pod.Name, SubGroup: pod.Labels[scheduling.SubGroupLabel], Status: status}
		js.gang.Pods = append(js.gang.Pods, &js.gangPods[i])
	}
	// minSubGroup 0 asks for no gang, but a job with no pod running does no work.
	return running && js.gang.IsGangSatisfied(), gpus
}

// endRun accounts for a run cut short: startup time and unsaved work are wasted.
func (e *engine) endRun(js *jobState, now time.Time) {
	useful := js.useful(now)
	kept := time.Duration(0)
	if ci := js.spec.CheckpointInterval; ci > 0 {
		kept = useful / ci * ci
	}
	startup := min(now.Sub(js.runStart), js.spec.Startup)
	js.wastedGPUSeconds += float64(js.gpus) / model.MilliGPU * (startup + useful - kept).Seconds()
	js.saved += kept
	js.running = false
}

// complete finishes the job: its startup was overhead, and its pods and PodGroup leave the
// cluster (a finished job holds nothing, and dropping it keeps later cycles small).
func (e *engine) complete(js *jobState, now time.Time) {
	js.wastedGPUSeconds += float64(js.gpus) / model.MilliGPU * js.spec.Startup.Seconds()
	js.running, js.completed = false, &now
	for _, pod := range js.pods {
		e.removePod(pod)
	}
	js.pods, js.podGPUs = nil, nil
	e.completions = true
	e.cluster.RemoveGroup(e.cluster.Group(js.groupKey()))
	e.changed = true
	e.event(now, report.EventComplete, js)
}

// PodGPUs is how many GPUs a scenario's pod asks for: its containers' requests, or their
// limits where a container sets no request (Kubernetes takes the limit as the request of an
// extended resource).
func PodGPUs(pod *v1.Pod) int64 {
	var n int64
	for _, c := range pod.Spec.Containers {
		if q, ok := c.Resources.Requests[model.GPUResourceName]; ok {
			n += q.Value()
		} else if q, ok := c.Resources.Limits[model.GPUResourceName]; ok {
			n += q.Value()
		}
	}
	return n
}
