package report

import (
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// Event types of the output.
const (
	EventBind     = "Bind"
	EventEvict    = "Evict"
	EventStart    = "Start"
	EventComplete = "Complete"
	// EventFail: a pod failed on its own (the scenario's sim.kai.scheduler/fail-after); it
	// holds nothing from then on and is not recreated.
	EventFail = "Fail"
)

// Event is one thing that happened, at a time in seconds from the start.
type Event struct {
	Time     float64 `json:"time"`
	Type     string  `json:"type"`
	PodGroup string  `json:"podGroup"`
	Queue    string  `json:"queue"`
	// Pool is the node pool of the job (none when the cluster has no pools).
	Pool string `json:"pool,omitempty"`
	// Pod is the pod bound, evicted or failed (Bind, Evict and Fail events).
	Pod    string `json:"pod,omitempty"`
	Action string `json:"action,omitempty"`
	// Preemptor is the job an eviction made room for (namespace/name).
	Preemptor string `json:"preemptor,omitempty"`
	Node      string `json:"node,omitempty"`
	Reason    string `json:"reason,omitempty"`
	// GPUDevices are, for a Bind of a pod given GPUs, the 0-based indexes of the node's
	// devices it got (a share: the devices its shares are on).
	GPUDevices []int `json:"gpuDevices,omitempty"`
}

// JobReport is what happened to one job. Times are seconds from the start; FirstStart and
// Completed are null when it never happened.
type JobReport struct {
	PodGroup string `json:"podGroup"`
	// Workload is the workload the pod grouper made the job's PodGroup for (its
	// kai.scheduler/workload annotation, <Kind>[.<group>]/<name>); empty for a PodGroup of
	// the scenario's own.
	Workload         string   `json:"workload,omitempty"`
	Queue            string   `json:"queue"`
	Pool             string   `json:"pool,omitempty"`
	Submitted        float64  `json:"submitted"`
	FirstStart       *float64 `json:"firstStart"`
	Completed        *float64 `json:"completed"`
	Evictions        int      `json:"evictions"`
	WastedGPUSeconds float64  `json:"wastedGPUSeconds"`
	// RunsEnded counts the job's runs that preempt or reclaim ended, as its PodGroup's
	// status.evictions (kubectl's Evictions column) counts them: once per decision however
	// many pods went, where Evictions counts pods. Escalation lengthens its protection by it.
	RunsEnded int `json:"runsEnded"`
	// EscalatedRuns counts the runs whose protection escalation lengthened, as the status
	// showed it (escalatedFrom).
	EscalatedRuns int `json:"escalatedRuns"`
	// LongestProtectionMetSeconds is the longest min-runtime among the protections that
	// refused the job a victim while it waited (0 when none did): a job owed quota starts
	// within that, the victims' grace period and two cycles.
	LongestProtectionMetSeconds float64 `json:"longestProtectionMetSeconds"`
	// Waiting are the reasons the scheduler last gave on the PodGroup of a job that had not
	// completed when the simulation ended.
	Waiting []string `json:"waiting,omitempty"`
	// PreemptionDelayed says the job was held back at least once by its own preemption
	// delay: it wanted to evict others before its window ended.
	PreemptionDelayed bool `json:"preemptionDelayed,omitempty"`
	// Protection is, for a job running when the simulation ended, its min-runtime
	// protection as its PodGroup's status showed it then; absent when it showed none.
	Protection *Protection `json:"protection,omitempty"`
}

// Protection is a PodGroup's status.minRuntime with its times in seconds from an origin (the
// simulation's start).
type Protection struct {
	// Start is the start of the run min-runtime counts from.
	Start   float64         `json:"start"`
	Preempt ProtectionEnd   `json:"preempt"`
	Reclaim []ProtectionEnd `json:"reclaim"`
}

// ProtectionEnd is one min-runtime that applies to a job, who set it and when it ends.
type ProtectionEnd struct {
	// FromOutside is, for reclaim, the queue whose outsiders it holds against.
	FromOutside string `json:"fromOutside,omitempty"`
	MinRuntime  string `json:"minRuntime"`
	// EscalatedFrom is the min-runtime before escalation lengthened it for the job's
	// evictions; absent when it did not.
	EscalatedFrom string `json:"escalatedFrom,omitempty"`
	// SetBy is the queue that set the min-runtime, empty for the scheduler's default, or the
	// job's own annotation key when the job shortened it.
	SetBy string `json:"setBy,omitempty"`
	// Until is when the protection ends; absent for a min-runtime of 0s, which protects
	// nothing.
	Until *float64 `json:"until,omitempty"`
}

// ProtectionOf converts a min-runtime status to seconds from origin; nil for nil.
func ProtectionOf(status *v2alpha2.MinRuntimeStatus, origin time.Time) *Protection {
	if status == nil {
		return nil
	}
	end := func(from string, m v2alpha2.MinRuntimeProtection) ProtectionEnd {
		e := ProtectionEnd{FromOutside: from, MinRuntime: m.MinRuntime.Duration.String(), SetBy: m.SetBy}
		if m.EscalatedFrom != nil {
			e.EscalatedFrom = m.EscalatedFrom.Duration.String()
		}
		if m.Until != nil {
			until := m.Until.Sub(origin).Seconds()
			e.Until = &until
		}
		return e
	}
	p := &Protection{Start: status.Start.Sub(origin).Seconds(), Preempt: end("", status.Preempt), Reclaim: []ProtectionEnd{}}
	for _, r := range status.Reclaim {
		p.Reclaim = append(p.Reclaim, end(r.FromOutside, r.MinRuntimeProtection))
	}
	return p
}

// QueueReport sums the jobs that name a queue, per node pool: the jobs of another pool
// that name it wait on a queue their scheduler does not have.
type QueueReport struct {
	Queue            string  `json:"queue"`
	Pool             string  `json:"pool,omitempty"`
	Jobs             int     `json:"jobs"`
	Completed        int     `json:"completed"`
	Evictions        int     `json:"evictions"`
	WastedGPUSeconds float64 `json:"wastedGPUSeconds"`
	// Started counts the jobs that started, not counting those running at the start (their
	// wait is history); MeanWaitSeconds is their mean time from submission to first start
	// (0 when none started).
	Started         int     `json:"started"`
	MeanWaitSeconds float64 `json:"meanWaitSeconds"`
	// MaxWaitSeconds is the longest of those waits.
	MaxWaitSeconds float64 `json:"maxWaitSeconds"`
	// RunsEnded sums the jobs' RunsEnded, and MostRunsEnded is the most of any one job: how
	// often the worst-treated job of the queue lost its run.
	RunsEnded     int `json:"runsEnded"`
	MostRunsEnded int `json:"mostRunsEnded"`
	// EscalatedRuns sums the jobs' EscalatedRuns: protections escalation lengthened.
	EscalatedRuns int `json:"escalatedRuns"`
	// LongestProtectionMetSeconds is the longest of the jobs' LongestProtectionMetSeconds.
	LongestProtectionMetSeconds float64 `json:"longestProtectionMetSeconds"`
	// GPUFairShare and GPUDeserved are the lowest and highest fair share and deserved quota
	// of GPUs its scheduler gave the queue in the cycles in which it asked for GPUs; absent
	// when it never did (or no proportion plugin divides).
	GPUFairShare *Range `json:"gpuFairShare,omitempty"`
	GPUDeserved  *Range `json:"gpuDeserved,omitempty"`
}

// Range is the lowest and highest of a figure over a run.
type Range struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// String writes a range of GPUs as a table shows it: one number when it never moved,
// lowest-highest otherwise, as queues count GPUs (two decimals at most); "-" for none.
func (r *Range) String() string {
	if r == nil {
		return "-"
	}
	low, high := model.FormatQueueNumber(model.GPU, r.Min*model.MilliGPU), model.FormatQueueNumber(model.GPU, r.Max*model.MilliGPU)
	if low == high {
		return low
	}
	return low + "-" + high
}

// Totals sums all jobs.
type Totals struct {
	Jobs             int     `json:"jobs"`
	Completed        int     `json:"completed"`
	Evictions        int     `json:"evictions"`
	WastedGPUSeconds float64 `json:"wastedGPUSeconds"`
	// RunsEnded, MostRunsEnded and EscalatedRuns are the queues' (see QueueReport).
	RunsEnded     int `json:"runsEnded"`
	MostRunsEnded int `json:"mostRunsEnded"`
	EscalatedRuns int `json:"escalatedRuns"`
	// ProtectedRefusals counts, over all cycles, victims refused to a preemptor because
	// min-runtime still protected them.
	ProtectedRefusals int `json:"protectedRefusals"`
	// DelayedJobs counts the jobs held back at least once by their preemption delay.
	DelayedJobs      int           `json:"delayedJobs"`
	SimulatedSeconds float64       `json:"simulatedSeconds"`
	Queues           []QueueReport `json:"queues"`
	// GPUs is how much of the cluster's GPU capacity was allocated and stranded; absent when
	// no node has a GPU.
	GPUs *GPUReport `json:"gpus,omitempty"`
}

// GPUReport is the share of the cluster's GPUs allocated, and of those stranded, at the end
// and on average over the run. Allocated is what the nodes' devices gave out: devices held
// whole, and the shares on the others (0.5 for half a device), whoever holds them. Stranded
// is free GPU capacity that no pod waiting then could use by its GPU request alone: the room
// left on a device holding shares, or a free device, where no waiting share fits (a share
// needs that much room on the device) and no waiting whole-GPU pod fits (k GPUs need k free
// devices on one node). CPU, memory, node selectors and taints are not read, so stranded
// counts only what the GPUs' own fragmentation keeps from the waiting pods; with no pod
// waiting for GPUs, free capacity is idle and nothing is stranded.
type GPUReport struct {
	// Capacity is the GPUs of the cluster's nodes.
	Capacity int64 `json:"capacity"`
	// Allocated and Stranded are in GPUs at the end of the run; the fractions are of Capacity.
	Allocated         float64 `json:"allocated"`
	AllocatedFraction float64 `json:"allocatedFraction"`
	Stranded          float64 `json:"stranded"`
	StrandedFraction  float64 `json:"strandedFraction"`
	// MeanAllocatedFraction and MeanStrandedFraction are the fractions averaged over the
	// run's time: what a day of arrivals and departures kept busy and left stranded.
	MeanAllocatedFraction float64 `json:"meanAllocatedFraction"`
	MeanStrandedFraction  float64 `json:"meanStrandedFraction"`
	// Shared says some device held GPU shares during the run: a comparison then shows these
	// figures, which whole-GPU runs compare through their queues' GPUs already.
	Shared bool `json:"-"`
}

// PoolReport is what one node pool's scheduler did: the pool's share of the totals, and the
// configuration it ran. A cluster without pools has one, unnamed.
type PoolReport struct {
	// Pool is the pool's name, the value of the node-pool label; empty for the objects
	// without it.
	Pool              string  `json:"pool"`
	Nodes             int     `json:"nodes"`
	GPUs              int64   `json:"gpus"`
	Jobs              int     `json:"jobs"`
	Completed         int     `json:"completed"`
	Evictions         int     `json:"evictions"`
	WastedGPUSeconds  float64 `json:"wastedGPUSeconds"`
	ProtectedRefusals int     `json:"protectedRefusals"`
	// Settings are the scheduler's plugins in order, with the settings they ran with
	// ("minruntime: defaultPreemptMinRuntime=0s ..."), defaults included.
	Settings []string `json:"settings"`
	// Escalation is the minruntime plugin's escalation rule ("×4 per eviction, up to
	// 4h0m0s"); absent when it is off.
	Escalation string `json:"escalation,omitempty"`
	// ConfigWarnings are those of the pool's own configuration (those of the scheduler
	// configuration the other pools share are the result's); always an array.
	ConfigWarnings []string `json:"configWarnings"`
	// MinRuntime is how the pool's minruntime plugin resolved the min-runtimes of its jobs'
	// queues when the run ended; nil when the pool's scheduler runs without the plugin. A
	// comparison reads it to tell when a queue's own value outweighs a compared default.
	MinRuntime *PoolMinRuntime `json:"-"`
}

// PoolMinRuntime is the minruntime plugin's node-pool defaults and what they resolved to for
// the queues of the pool's jobs.
type PoolMinRuntime struct {
	DefaultPreempt, DefaultReclaim time.Duration
	// Queues are the queues of the pool's jobs, in name order.
	Queues []QueueMinRuntime
}

// QueueMinRuntime is what the min-runtimes of one queue's jobs resolve to: against
// preemption, and against reclaim one per level (outermost first; none when no other queue
// can reclaim them), each with the queue that set it or, for none, the pool's default.
type QueueMinRuntime struct {
	Queue   string
	Preempt ResolvedMinRuntime
	Reclaim []ResolvedMinRuntime
}

// ResolvedMinRuntime is one resolved min-runtime and the queue that set it ("" for the
// pool's default).
type ResolvedMinRuntime struct {
	Duration time.Duration
	SetBy    string
}

// Sample is the GPUs each queue's running pods held at a time, each queue's fair share of
// GPUs as the latest cycle divided them, and the GPUs of the cluster's nodes then, for the
// plot: what the queues leave of Capacity is idle.
type Sample struct {
	Time      float64
	GPUs      map[string]float64 // held by each queue's running pods (a share: its part)
	FairShare map[string]float64
	Capacity  int64
	// Allocated is the GPUs the nodes' devices had given out (shares included) and Stranded
	// the free GPUs no waiting pod could use, as GPUReport counts them.
	Allocated, Stranded float64
}

// Result is the outcome of a simulation.
type Result struct {
	Events []Event     `json:"events"`
	Jobs   []JobReport `json:"jobs"`
	Totals Totals      `json:"totals"`
	// Problems are what the scheduler reported wrong in the scenario (always an array).
	Problems []Problem `json:"problems"`
	// Warnings name what a scheduler should never do, such as evicting a job again and again
	// for the same preemptor; empty when all went well.
	Warnings []string `json:"warnings"`
	// ConfigWarnings name what the scheduler configuration asked for that this scheduler
	// does not do (upstream KAI-Scheduler actions and plugins it skips, defaults it
	// applied); always an array.
	ConfigWarnings []string `json:"configWarnings"`
	// Pools are the node pools, each with its own scheduler, in name order.
	Pools  []PoolReport `json:"pools"`
	Series []Sample     `json:"-"`
	Queues []string     `json:"-"`
}

// Problem is something wrong in the scenario that the scheduler reported as it does on a
// cluster, with a Warning event about the object: a queue whose parent is missing or loops, a
// pod whose PodGroup does not exist, an unreadable start stamp. Each is reported once, when
// first seen (again if it goes away and comes back).
type Problem struct {
	Time    float64 `json:"time"`
	Kind    string  `json:"kind"`
	Name    string  `json:"name"`
	Reason  string  `json:"reason"`
	Message string  `json:"message"`
}

// Variant is one configuration of a comparison and its result: sim.Compare fills Result,
// WriteComparison and WritePlot show the variants side by side.
type Variant struct {
	Name   string
	Config []byte
	Result *Result
}
