package scale

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	resourcehelper "k8s.io/component-helpers/resource"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
)

// observer watches nodes, pods and PodGroups from outside the scheduler, as an operator's
// tools would, and checks the invariants as each change arrives: it reads only the API
// objects and shares no code with the scheduler's decisions. Times are when the observer saw
// a change, never earlier than when it happened.
type observer struct {
	mu    sync.Mutex
	nodes map[string]*nodeUse
	pods  map[types.UID]*podRecord
	jobs  map[string]*jobRecord
	// minRuntime is the reclaim min-runtime each queue's jobs are owed, as the scenario set it.
	minRuntime map[string]time.Duration
	// cleaning holds the namespaces the suite is emptying: deletions there are its own.
	cleaning   map[string]bool
	violations []string
	// reservations counts the reservation pods present per GPU group; reservationsCreated
	// and reservationsDeleted those seen come and go (see devices_test.go). sharing says the
	// scheduler runs with GPU sharing on the node, where every share needs a reservation.
	reservations                             map[string][]string
	reservationsCreated, reservationsDeleted int
	sharing                                  bool
}

// nodeUse is a node's allocatable resources and what the pods bound to it request.
type nodeUse struct {
	allocatable v1.ResourceList
	used        v1.ResourceList
	ready       bool
	// devices are the shared devices held on the node, by GPU group.
	devices map[string]*device
}

// podRecord is what the observer saw of one pod, and when.
type podRecord struct {
	namespace, name, job, queue string
	request                     v1.ResourceList
	node                        string
	// share is the fraction of a device the pod asks for, in thousandths (0: none); group
	// the device (GPU group) a share was given or a reservation pod holds; holding whether
	// the device is counted as held on node.
	share       int64
	group       string
	reservation bool
	holding     bool
	// observed times of each step; zero until seen.
	created, bound, running, evicted, deleting, deleted time.Time
	// startTime is the start the node reported.
	startTime time.Time
	// evictedBy is the message of the scheduler's DisruptionTarget condition.
	evictedBy string
}

// jobRecord is what the observer saw of one PodGroup.
type jobRecord struct {
	namespace, name, queue string
	created                time.Time
	// stamp is the last start stamp seen, stampSeen when one was first seen.
	stamp, stampSeen time.Time
	// reclaimProtectedUntil is the latest end of a protection against reclaim the status
	// last showed; protectionSeen when a protection was first shown.
	reclaimProtectedUntil, protectionSeen time.Time
	// conditionSeen is when a scheduling condition (why the job waits) was first seen, and
	// conditionReasons the reasons it has shown.
	conditionSeen    time.Time
	conditionReasons map[string]bool
	// evictionLag is, for a protected victim, how long after its protection ended the first
	// of its pods was seen evicted.
	evictionLag *time.Duration
}

func newObserver() *observer {
	return &observer{nodes: map[string]*nodeUse{}, pods: map[types.UID]*podRecord{}, jobs: map[string]*jobRecord{},
		minRuntime: map[string]time.Duration{}, cleaning: map[string]bool{}, reservations: map[string][]string{}}
}

// start feeds the observer from informers until ctx ends, and returns once they have synced.
func (o *observer) start(ctx context.Context, cfg *rest.Config) error {
	scheme, err := install.Scheme()
	if err != nil {
		return err
	}
	informers, err := ctrlcache.New(cfg, ctrlcache.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	handlers := map[client.Object]toolscache.ResourceEventHandlerFuncs{
		&v1.Node{}: {AddFunc: o.node, UpdateFunc: func(_, obj any) { o.node(obj) }},
		&v1.Pod{}: {AddFunc: o.pod, UpdateFunc: func(_, obj any) { o.pod(obj) },
			DeleteFunc: func(obj any) { o.podDeleted(obj) }},
		&v2alpha2.PodGroup{}: {AddFunc: o.podGroup, UpdateFunc: func(_, obj any) { o.podGroup(obj) },
			DeleteFunc: func(obj any) { o.podGroupDeleted(obj) }},
	}
	for obj, handler := range handlers {
		informer, err := informers.GetInformer(ctx, obj)
		if err != nil {
			return err
		}
		if _, err := informer.AddEventHandler(handler); err != nil {
			return err
		}
	}
	go func() { _ = informers.Start(ctx) }()
	if !informers.WaitForCacheSync(ctx) {
		return fmt.Errorf("the observer's informers did not sync")
	}
	return nil
}

func (o *observer) violate(format string, args ...any) {
	if len(o.violations) < 100 {
		o.violations = append(o.violations, fmt.Sprintf(format, args...))
	} else if len(o.violations) == 100 {
		o.violations = append(o.violations, "... (more violations left out)")
	}
}

func (o *observer) node(obj any) {
	node := obj.(*v1.Node)
	o.mu.Lock()
	defer o.mu.Unlock()
	use := o.nodes[node.Name]
	if use == nil {
		use = &nodeUse{used: v1.ResourceList{}}
		o.nodes[node.Name] = use
	}
	use.allocatable = node.Status.Allocatable
	use.ready = slices.ContainsFunc(node.Status.Conditions, func(c v1.NodeCondition) bool {
		return c.Type == v1.NodeReady && c.Status == v1.ConditionTrue
	})
}

// readyNodes counts the nodes reported Ready.
func (o *observer) readyNodes() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, use := range o.nodes {
		if use.ready {
			n++
		}
	}
	return n
}

func (o *observer) pod(obj any) {
	pod := obj.(*v1.Pod)
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	rec := o.pods[pod.UID]
	if rec == nil {
		rec = &podRecord{namespace: pod.Namespace, name: pod.Name, created: now,
			job: pod.Annotations[scheduling.PodGroupNameAnnotation], queue: pod.Labels[scheduling.QueueLabel],
			request: resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})}
		rec.request[v1.ResourcePods] = resource.MustParse("1") // every pod takes one of the node's slots
		rec.share = shareOf(pod)
		if rec.reservation = isReservation(pod); rec.reservation {
			// Its GPU is its device's, counted once with the device's shares.
			rec.group, rec.node = pod.Labels[scheduling.GPUGroupLabel], pod.Spec.NodeName // made bound
			delete(rec.request, gpuResource)
			o.reserve(rec, 1)
		}
		o.pods[pod.UID] = rec
	}
	if rec.share > 0 && !rec.holding {
		// The binder labels a share with its device before binding it; a pending share may
		// carry a group promised to it, which a new placement changes: the group bound is
		// the one it holds.
		rec.group = pod.Labels[scheduling.GPUGroupLabel]
	}
	if pod.Spec.NodeName != "" && rec.bound.IsZero() {
		rec.bound, rec.node = now, pod.Spec.NodeName
		o.charge(rec, 1)
	} else if !rec.bound.IsZero() && !rec.holding && rec.group != "" {
		o.charge(rec, 0) // labelled only after its bind
	}
	if pod.Status.Phase == v1.PodRunning && rec.running.IsZero() {
		rec.running = now
		if pod.Status.StartTime != nil {
			rec.startTime = pod.Status.StartTime.Time
		}
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.DisruptionTarget && c.Status == v1.ConditionTrue && c.Reason == "PreemptionByScheduler" && rec.evicted.IsZero() {
			rec.evicted, rec.evictedBy = now, c.Message
			o.checkEviction(rec)
		}
	}
	if pod.DeletionTimestamp != nil && rec.deleting.IsZero() {
		rec.deleting = now
		if rec.evicted.IsZero() && !o.cleaning[rec.namespace] && !rec.reservation {
			o.violate("pod %s/%s is being deleted, but not by the scheduler (no DisruptionTarget condition): lost", rec.namespace, rec.name)
		}
	}
}

func (o *observer) podDeleted(obj any) {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	pod := obj.(*v1.Pod)
	o.mu.Lock()
	defer o.mu.Unlock()
	rec := o.pods[pod.UID]
	if rec == nil {
		return
	}
	if !rec.deleted.IsZero() {
		o.violate("pod %s/%s deleted twice", rec.namespace, rec.name)
		return
	}
	rec.deleted = time.Now()
	if rec.reservation {
		o.reserve(rec, -1) // the scheduler's collector deletes them: no workload is lost
	} else if rec.evicted.IsZero() && !o.cleaning[rec.namespace] {
		o.violate("pod %s/%s was deleted, but not by the scheduler (no DisruptionTarget condition): lost", rec.namespace, rec.name)
	}
	if !rec.bound.IsZero() {
		o.charge(rec, -1)
	}
}

// charge adds (sign 1) or removes (-1) a bound pod's request on its node, and the device it
// holds if it shares one (sign 0 adds the device alone, for a share labelled after its
// bind), and reports the node if what its pods request exceeds what it has. GPUs are
// counted whole and by device (gpusInUse).
func (o *observer) charge(rec *podRecord, sign int) {
	use := o.nodes[rec.node]
	if use == nil {
		if sign > 0 {
			o.violate("pod %s/%s is bound to %s, a node that does not exist", rec.namespace, rec.name, rec.node)
		}
		return
	}
	for name, q := range rec.request {
		if sign == 0 {
			break
		}
		sum := use.used[name]
		if sign > 0 {
			sum.Add(q)
		} else {
			sum.Sub(q)
		}
		use.used[name] = sum
		if have := use.allocatable[name]; sign > 0 && name != gpuResource && sum.Cmp(have) > 0 {
			o.violate("node %s over-committed in %s: its pods request %s, it has %s (when %s/%s was bound)",
				rec.node, name, sum.String(), have.String(), rec.namespace, rec.name)
		}
	}
	switch {
	case rec.group != "" && sign >= 0 && !rec.holding:
		rec.holding = true
		o.holdDevice(use, rec, 1)
	case rec.holding && sign < 0:
		rec.holding = false
		o.holdDevice(use, rec, -1)
	}
	whole := rec.request[gpuResource]
	if have := use.allocatable[gpuResource]; sign >= 0 && (rec.holding || !whole.IsZero()) && use.gpusInUse() > have.Value() {
		o.violate("node %s over-committed in %s: %d in use (whole GPUs and shared devices), it has %d (when %s/%s was bound)",
			rec.node, gpuResource, use.gpusInUse(), have.Value(), rec.namespace, rec.name)
	}
}

// checkEviction reports a pod evicted before the job it belongs to has run for the
// min-runtime its queue is owed, counted from its start stamp or, with none, from its pods'
// reported start; and records for the job how long after its protection ended it went.
func (o *observer) checkEviction(rec *podRecord) {
	job := o.jobs[rec.namespace+"/"+rec.job]
	if job == nil {
		return
	}
	owed := o.minRuntime[job.queue]
	if owed == 0 {
		return
	}
	start := job.stamp
	if start.IsZero() {
		for _, p := range o.pods {
			if p.namespace == rec.namespace && p.job == rec.job && !p.startTime.IsZero() && (start.IsZero() || p.startTime.Before(start)) {
				start = p.startTime
			}
		}
	}
	if start.IsZero() {
		return // never ran: nothing to protect
	}
	end := start.Add(owed)
	if rec.evicted.Before(end) {
		o.violate("job %s/%s evicted %s before its %s of protection ended (start %s)",
			rec.namespace, rec.job, end.Sub(rec.evicted).Round(time.Millisecond), owed, start.Format(time.RFC3339Nano))
	}
	if job.evictionLag == nil {
		lag := rec.evicted.Sub(end)
		job.evictionLag = &lag
	}
}

func (o *observer) podGroup(obj any) {
	pg := obj.(*v2alpha2.PodGroup)
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	key := pg.Namespace + "/" + pg.Name
	job := o.jobs[key]
	if job == nil {
		job = &jobRecord{namespace: pg.Namespace, name: pg.Name, queue: pg.Spec.Queue, created: now}
		o.jobs[key] = job
	}
	if value, ok := pg.Annotations[scheduling.LastStartTimestampAnnotation]; ok {
		stamp, err := time.Parse(time.RFC3339Nano, value)
		switch {
		case err != nil:
			o.violate("job %s has an unreadable start stamp %q", key, value)
		case job.stampSeen.IsZero():
			job.stamp, job.stampSeen = stamp, now
		case !stamp.Equal(job.stamp):
			// No scenario runs a job twice: a job's start never moves.
			o.violate("the start stamp of job %s moved from %s to %s", key, job.stamp.Format(time.RFC3339Nano), value)
			job.stamp = stamp
		}
	}
	if s := pg.Status.MinRuntime; s != nil {
		job.reclaimProtectedUntil = time.Time{}
		for _, level := range s.Reclaim {
			if level.Until != nil && level.Until.After(job.reclaimProtectedUntil) {
				job.reclaimProtectedUntil = level.Until.Time
			}
		}
		if job.protectionSeen.IsZero() {
			job.protectionSeen = now
		}
	}
	if len(pg.Status.SchedulingConditions) > 0 && job.conditionSeen.IsZero() {
		job.conditionSeen = now
	}
	for _, c := range pg.Status.SchedulingConditions {
		for _, r := range c.Reasons {
			if job.conditionReasons == nil {
				job.conditionReasons = map[string]bool{}
			}
			job.conditionReasons[r.Reason] = true
		}
	}
}

func (o *observer) podGroupDeleted(obj any) {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	pg := obj.(*v2alpha2.PodGroup)
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.cleaning[pg.Namespace] {
		o.violate("PodGroup %s/%s was deleted during the scenario: lost", pg.Namespace, pg.Name)
	}
}

// podCount counts the pods of a namespace (and queue, unless empty) that match.
func (o *observer) podCount(namespace, queue string, match func(*podRecord) bool) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, p := range o.pods {
		if p.namespace == namespace && (queue == "" || p.queue == queue) && match(p) {
			n++
		}
	}
	return n
}

func isRunning(p *podRecord) bool {
	return !p.running.IsZero() && p.deleting.IsZero() && p.deleted.IsZero()
}
func isBound(p *podRecord) bool { return !p.bound.IsZero() && p.deleted.IsZero() }

// isEvicted: the scheduler marked the pod as its victim and deleted it. (A scheduler killed
// between the two leaves a pod marked but running; Kubernetes' disruption controller clears
// such a stale mark.)
func isEvicted(p *podRecord) bool  { return !p.evicted.IsZero() && !p.deleting.IsZero() }
func isPresent(p *podRecord) bool  { return p.deleted.IsZero() }
func isUnplaced(p *podRecord) bool { return p.bound.IsZero() && p.deleted.IsZero() }

// lastTime is the latest time of a pod step among a namespace's (and queue's) pods.
func (o *observer) lastTime(namespace, queue string, step func(*podRecord) time.Time) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	var last time.Time
	for _, p := range o.pods {
		if p.namespace == namespace && (queue == "" || p.queue == queue) && step(p).After(last) {
			last = step(p)
		}
	}
	return last
}

// conditions counts the namespace's jobs that have been told why they wait.
func (o *observer) conditions(namespace string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, job := range o.jobs {
		if job.namespace == namespace && !job.conditionSeen.IsZero() {
			n++
		}
	}
	return n
}

// conditionReasons counts, per reason, the namespace's jobs whose condition has shown it.
func (o *observer) conditionReasons(namespace string) map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	counts := map[string]int{}
	for _, job := range o.jobs {
		if job.namespace == namespace {
			for r := range job.conditionReasons {
				counts[r]++
			}
		}
	}
	return counts
}

// meanConditionDelay is the mean time, in seconds, from a job's creation until it was told
// why it waits, over the namespace's jobs that were told.
func (o *observer) meanConditionDelay(namespace string) float64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	var sum time.Duration
	n := 0
	for _, job := range o.jobs {
		if job.namespace == namespace && !job.conditionSeen.IsZero() {
			sum += job.conditionSeen.Sub(job.created)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum.Seconds() / float64(n)
}

// forget drops what the observer holds of a namespace the suite has emptied.
func (o *observer) forget(namespace string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for uid, p := range o.pods {
		if p.namespace == namespace {
			delete(o.pods, uid)
		}
	}
	for key, job := range o.jobs {
		if job.namespace == namespace {
			delete(o.jobs, key)
		}
	}
}

// timeline counts, per second since began, the namespace's pods seen bound, running,
// marked as victims and gone in that second: how a scenario unfolded.
func (o *observer) timeline(namespace string, began time.Time) []Second {
	o.mu.Lock()
	defer o.mu.Unlock()
	counts := map[int]*Second{}
	at := func(t time.Time) *Second {
		k := int(t.Sub(began) / time.Second)
		if counts[k] == nil {
			counts[k] = &Second{Second: k}
		}
		return counts[k]
	}
	for _, p := range o.pods {
		if p.namespace != namespace {
			continue
		}
		if !p.bound.IsZero() {
			at(p.bound).Bound++
		}
		if !p.running.IsZero() {
			at(p.running).Running++
		}
		if !p.evicted.IsZero() {
			at(p.evicted).Evicted++
		}
		if !p.deleted.IsZero() {
			at(p.deleted).Deleted++
		}
	}
	seconds := make([]Second, 0, len(counts))
	for _, c := range counts {
		seconds = append(seconds, *c)
	}
	slices.SortFunc(seconds, func(a, b Second) int { return a.Second - b.Second })
	return seconds
}

// takeViolations returns the violations seen so far and forgets them.
func (o *observer) takeViolations() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	v := o.violations
	o.violations = nil
	return v
}

// writeAudit is what the observer found of the start stamps and protection statuses of a
// namespace's jobs that ran and are still running.
type writeAudit struct {
	// Jobs is how many jobs ran; Unstamped of them have no start stamp, and, of those owed a
	// min-runtime, Unprotected show no protection and WrongProtection one that ends before
	// their stamp and min-runtime say.
	Jobs, Unstamped, Unprotected, WrongProtection int
	// StampLag is, per job, how long after its first pod ran its stamp was seen (0 if before).
	StampLag []time.Duration
	// EvictionLag is, per protected victim, how long after its protection ended it was evicted.
	EvictionLag []time.Duration
}

// auditWrites looks at every job of the namespace that has run.
func (o *observer) auditWrites(namespace string) writeAudit {
	o.mu.Lock()
	defer o.mu.Unlock()
	var a writeAudit
	// Per job: when its first pod was seen running, and whether one still runs.
	firstRunning, running := map[string]time.Time{}, map[string]bool{}
	for _, p := range o.pods {
		if p.namespace != namespace || p.running.IsZero() {
			continue
		}
		if first, ok := firstRunning[p.job]; !ok || p.running.Before(first) {
			firstRunning[p.job] = p.running
		}
		if p.deleted.IsZero() && p.evicted.IsZero() {
			running[p.job] = true
		}
	}
	keys := make([]string, 0, len(o.jobs))
	for key, job := range o.jobs {
		if job.namespace == namespace {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	for _, key := range keys {
		job := o.jobs[key]
		first, ran := firstRunning[job.name]
		if !ran {
			continue
		}
		a.Jobs++
		if job.evictionLag != nil {
			a.EvictionLag = append(a.EvictionLag, *job.evictionLag)
		}
		if job.stampSeen.IsZero() {
			a.Unstamped++
		} else {
			a.StampLag = append(a.StampLag, max(0, job.stampSeen.Sub(first)))
		}
		owed := o.minRuntime[job.queue]
		if owed == 0 || !running[job.name] {
			continue
		}
		switch {
		case job.protectionSeen.IsZero():
			a.Unprotected++
		case !job.stamp.IsZero() && job.reclaimProtectedUntil.Before(job.stamp.Add(owed).Truncate(time.Second)):
			a.WrongProtection++
		}
	}
	return a
}
