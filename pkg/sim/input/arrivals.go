package input

import (
	"fmt"
	"math"
	"math/bits"
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/plural"
	"github.com/kai-minruntime/kai-scheduler/pkg/podgrouper"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/conf"
)

// A snapshot of a cluster holds the jobs running and pending now, and nothing that will be
// submitted later. Arrivals files add those future jobs; repeating the pending mix replays
// today's demand at a rate, so a day can be run forward.

// File is an input file: its name, which errors and descriptions give, and its contents.
type File struct {
	Name string
	Data []byte
}

// Rate is how often a copy of the pending mix is submitted: Count copies every Per.
type Rate struct {
	Count int
	Per   time.Duration
	text  string // as the user wrote it, for the description
}

// ParseRate reads N/DURATION, such as 6/h, 1/30m or 12/1h: a bare unit is one of it.
func ParseRate(value string) (Rate, error) {
	fail := func(reason string) (Rate, error) {
		return Rate{}, fmt.Errorf("want N/DURATION such as 6/h or 1/30m, got %q: %s", value, reason)
	}
	count, per, ok := strings.Cut(value, "/")
	if !ok {
		return fail("no /")
	}
	n, err := strconv.Atoi(count)
	if err != nil || n < 1 {
		return fail(fmt.Sprintf("N must be a positive integer, got %q", count))
	}
	if per != "" && !strings.ContainsAny(per, "0123456789") {
		per = "1" + per // "6/h" reads as six an hour
	}
	d, err := conf.ParseDuration(per)
	if err != nil {
		return fail(err.Error())
	}
	if d <= 0 {
		return fail(fmt.Sprintf("DURATION must be positive, got %q", per))
	}
	if d/time.Duration(n) == 0 {
		return fail("more than one copy a nanosecond")
	}
	return Rate{Count: n, Per: d, text: value}, nil
}

// String is the rate as written, or N/DURATION for one built in code.
func (r Rate) String() string {
	if r.text != "" {
		return r.text
	}
	return fmt.Sprintf("%d/%s", r.Count, r.Per)
}

// copyTime is when copy k is submitted: k*Per/Count, computed without overflow; a time
// beyond what a Duration holds is beyond any horizon.
func (r Rate) copyTime(k int) time.Duration {
	hi, lo := bits.Mul64(uint64(k), uint64(r.Per))
	if hi >= uint64(r.Count) {
		return math.MaxInt64
	}
	at, _ := bits.Div64(hi, lo, uint64(r.Count))
	if at > math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(at)
}

// Additions are the jobs added to a scenario file: those of arrivals files, in the order
// given, then copies of the scenario's pending mix at Repeat (zero: none) up to Until.
type Additions struct {
	Arrivals []File
	Repeat   Rate
	Until    time.Duration
	// NodePoolLabelKey is the node-pool label key the simulation runs with
	// (sim.Options.NodePoolLabelKey), by which the pods of the files' workloads are grouped,
	// one pod grouper per pool (see ParseForPools); empty: one for everything.
	NodePoolLabelKey string
}

// maxRepeats bounds the copies of one run: a rate mistyped by a few orders of magnitude
// must fail at once, not exhaust memory after minutes (2,000 jobs simulate a day in about
// half a minute).
const maxRepeats = 100000

// Load reads a scenario file and adds to it. It returns the scenario and a one-line
// description of what was added ("today.yaml + 14 arrivals from arrivals.yaml + 36
// repeated pending jobs (6/h)"). Errors name the file they are about.
func Load(scenario File, add Additions) (*Scenario, string, error) {
	sc, err := ParseForPools(scenario.Data, add.NodePoolLabelKey)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", scenario.Name, err)
	}
	// Today's mix is the scenario's own: jobs that arrive later are not pending now.
	var mix []*Job
	for _, job := range sc.Jobs {
		if !job.Running && job.SubmitAt <= 0 {
			mix = append(mix, job)
		}
	}
	names := newNameOrigins(sc, scenario.Name)
	description := scenario.Name
	for _, file := range add.Arrivals {
		arrivals, err := parse(file.Data, true, add.NodePoolLabelKey)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", file.Name, err)
		}
		for _, job := range arrivals.Jobs {
			if object, origin, taken := names.taken(job); taken {
				return nil, "", fmt.Errorf("%s: %s is also in %s", file.Name, object, origin)
			}
			names.record(job, file.Name)
		}
		sc.Jobs = append(sc.Jobs, arrivals.Jobs...)
		description += fmt.Sprintf(" + %s from %s", plural.Count(len(arrivals.Jobs), "arrival", "arrivals"), file.Name)
	}
	if add.Repeat.Count > 0 {
		copies, err := repeatPending(mix, add.Repeat, add.Until, names)
		if err != nil {
			return nil, "", err
		}
		sc.Jobs = append(sc.Jobs, copies...)
		description += fmt.Sprintf(" + %s (%s)", plural.Count(len(copies), "repeated pending job", "repeated pending jobs"), add.Repeat)
	}
	sortJobs(sc.Jobs)
	return sc, description, nil
}

// repeatPending copies the pending mix, in its order and cycling through it: copy k
// (from 1) of mix job (k-1) mod len(mix), submitted at k*Per/Count, up to and including
// until.
func repeatPending(mix []*Job, rate Rate, until time.Duration, names nameOrigins) ([]*Job, error) {
	if until <= 0 {
		return nil, fmt.Errorf("repeating the pending mix at %s needs a time limit: it would never end", rate)
	}
	if len(mix) == 0 {
		return nil, fmt.Errorf("repeating the pending mix at %s: the scenario has no pending job (one neither running nor submitted after the start)", rate)
	}
	if rate.copyTime(maxRepeats+1) <= until {
		return nil, fmt.Errorf("repeating the pending mix at %s up to %s makes more than %d copies", rate, until, maxRepeats)
	}
	var copies []*Job
	for k := 1; rate.copyTime(k) <= until; k++ {
		original := mix[(k-1)%len(mix)]
		job := repeatOf(original, k, rate.copyTime(k))
		if object, origin, taken := names.taken(job); taken {
			return nil, fmt.Errorf("%s, repeat %d of PodGroup %s, is also in %s", object, k, original.Key(), origin)
		}
		names.record(job, "the repeats of the pending mix")
		copies = append(copies, job)
	}
	return copies, nil
}

// repeatOf is copy k of a pending job, submitted at at: <name>-r<k>, with pods <pod>-r<k>.
func repeatOf(original *Job, k int, at time.Duration) *Job {
	suffix := "-r" + strconv.Itoa(k)
	job := *original
	job.Group = original.Group.DeepCopy()
	job.Group.Name += suffix
	if job.Group.Annotations == nil {
		job.Group.Annotations = map[string]string{}
	}
	job.Group.Annotations[SubmitAtAnnotation] = at.String()
	job.SubmitAt = at
	job.Pods = make([]*v1.Pod, len(original.Pods))
	if workload, ok := job.Group.Annotations[podgrouper.WorkloadAnnotation]; ok {
		// A copy is another workload of the same shape, as a resubmitted one is.
		job.Group.Annotations[podgrouper.WorkloadAnnotation] = workload + suffix
	}
	for i, template := range original.Pods {
		pod := template.DeepCopy()
		pod.Name += suffix
		pod.Annotations[scheduling.PodGroupNameAnnotation] = job.Group.Name
		job.Pods[i] = pod
	}
	// A suffix can reorder names ("a-r1" sorts after "a-0-r1"); a job's pods are in name order.
	sortPods(job.Pods)
	return &job
}

// checkArrival refuses a job an arrivals file cannot hold: one already running, or
// submitted before the start, belongs in the scenario, which says how long it has been so.
func checkArrival(job *Job) error {
	if job.Running {
		return fmt.Errorf("metadata.annotations.%s: an arrival is submitted at or after the start and is not running yet; a running job belongs in the scenario",
			RunningForAnnotation)
	}
	if job.SubmitAt < 0 {
		return fmt.Errorf("metadata.annotations.%s: %s is before the start; an arrival is submitted at or after it, a job submitted earlier belongs in the scenario",
			SubmitAtAnnotation, job.Group.Annotations[SubmitAtAnnotation])
	}
	return nil
}

// checkArrivalPod refuses a pod an arrivals file cannot hold: one on a node (only a running
// job's pods are), or of another scheduler (which holds a node from the start).
func checkArrivalPod(pod *v1.Pod) error {
	if pod.Spec.NodeName != "" {
		return fmt.Errorf("spec.nodeName %q: an arrival's pods are created pending, on no node", pod.Spec.NodeName)
	}
	if pod.Spec.SchedulerName != SchedulerName {
		return fmt.Errorf("spec.schedulerName %q: an arrivals file holds only the pods of %s jobs", pod.Spec.SchedulerName, SchedulerName)
	}
	return nil
}

// nameOrigins maps each PodGroup and Pod name ("PodGroup ns/name") to the file it came
// from: as on an API server, a name is one object, so an addition may not reuse one.
type nameOrigins map[string]string

func newNameOrigins(sc *Scenario, file string) nameOrigins {
	names := nameOrigins{}
	for _, job := range sc.Jobs {
		names["PodGroup "+job.Key()] = file
		for _, pod := range job.Pods {
			names["Pod "+pod.Namespace+"/"+pod.Name] = file
		}
	}
	for _, pod := range sc.Fixed {
		names["Pod "+pod.Namespace+"/"+pod.Name] = file
	}
	return names
}

// taken names the first of a job's objects whose name is taken, and where it came from.
func (names nameOrigins) taken(job *Job) (object, origin string, ok bool) {
	for _, object := range objectNames(job) {
		if origin, ok := names[object]; ok {
			return object, origin, true
		}
	}
	return "", "", false
}

// record takes the names of a job's objects for origin.
func (names nameOrigins) record(job *Job, origin string) {
	for _, object := range objectNames(job) {
		names[object] = origin
	}
}

// objectNames are "PodGroup ns/name" and "Pod ns/name" for each of the job's pods.
func objectNames(job *Job) []string {
	objects := []string{"PodGroup " + job.Key()}
	for _, pod := range job.Pods {
		objects = append(objects, "Pod "+pod.Namespace+"/"+pod.Name)
	}
	return objects
}

// Key is the job's namespace/name.
func (job *Job) Key() string { return job.Group.Namespace + "/" + job.Group.Name }

func sortPods(pods []*v1.Pod) {
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
}
