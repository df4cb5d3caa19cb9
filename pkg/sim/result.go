package sim

// Event types of the output.
const (
	EventBind     = "Bind"
	EventEvict    = "Evict"
	EventStart    = "Start"
	EventComplete = "Complete"
)

// Event is one thing that happened, at a time in seconds from the start.
type Event struct {
	Time     float64 `json:"time"`
	Type     string  `json:"type"`
	PodGroup string  `json:"podGroup"`
	Queue    string  `json:"queue"`
	// Pod is the pod bound or evicted (Bind and Evict events).
	Pod    string `json:"pod,omitempty"`
	Action string `json:"action,omitempty"`
	// Preemptor is the job an eviction made room for (namespace/name).
	Preemptor string `json:"preemptor,omitempty"`
	Node      string `json:"node,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// JobReport is what happened to one job. Times are seconds from the start; FirstStart and
// Completed are null when it never happened.
type JobReport struct {
	PodGroup         string   `json:"podGroup"`
	Queue            string   `json:"queue"`
	Submitted        float64  `json:"submitted"`
	FirstStart       *float64 `json:"firstStart"`
	Completed        *float64 `json:"completed"`
	Evictions        int      `json:"evictions"`
	WastedGPUSeconds float64  `json:"wastedGPUSeconds"`
	// Waiting are the reasons the scheduler last gave on the PodGroup of a job that had not
	// completed when the simulation ended.
	Waiting []string `json:"waiting,omitempty"`
}

// QueueReport sums a queue's jobs.
type QueueReport struct {
	Queue            string  `json:"queue"`
	Jobs             int     `json:"jobs"`
	Completed        int     `json:"completed"`
	Evictions        int     `json:"evictions"`
	WastedGPUSeconds float64 `json:"wastedGPUSeconds"`
	// MeanWaitSeconds is the mean time from submission to first start of the jobs that started.
	MeanWaitSeconds float64 `json:"meanWaitSeconds"`
}

// Totals sums all jobs.
type Totals struct {
	Jobs             int     `json:"jobs"`
	Completed        int     `json:"completed"`
	Evictions        int     `json:"evictions"`
	WastedGPUSeconds float64 `json:"wastedGPUSeconds"`
	// ProtectedRefusals counts, over all cycles, victims refused to a preemptor because
	// min-runtime still protected them.
	ProtectedRefusals int           `json:"protectedRefusals"`
	SimulatedSeconds  float64       `json:"simulatedSeconds"`
	Queues            []QueueReport `json:"queues"`
}

// Sample is the GPUs each queue's running pods held at a time, for the plot.
type Sample struct {
	Time float64
	GPUs map[string]int64
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
	Series         []Sample `json:"-"`
	Queues         []string `json:"-"`
}
