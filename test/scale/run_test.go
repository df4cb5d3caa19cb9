package scale

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// run is one scenario: its namespace and queues, the scheduler processes it started, and the
// figures it records.
type run struct {
	name, namespace string
	began           time.Time
	procs           []*schedulerProcess
	current         *schedulerProcess
	queues          []string
	result          *Result
	// args are the scenario's own scheduler flags, after the chart's (GPU sharing's).
	args []string
	// writesBefore are the API server's counts of writes when the scenario began.
	writesBefore map[string]float64
}

// newRun starts a scenario in a namespace of its own. The scheduler is not started yet.
func newRun(name string) *run {
	r := &run{name: name, namespace: "scale-" + name, began: time.Now(), writesBefore: serverWrites(),
		result: &Result{Scenario: name, Label: settings.label, Nodes: settings.nodes, Figures: map[string]float64{}}}
	Expect(cluster.client.Create(cluster.ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.namespace}})).To(Succeed())
	cluster.observer.takeViolations() // what came before is another scenario's
	cluster.observer.takeReservationCounts()
	cluster.observer.setSharing(false)
	return r
}

// startScheduler starts a scheduler process as the chart runs it.
func (r *run) startScheduler() {
	port, err := freePort()
	Expect(err).NotTo(HaveOccurred())
	args := cluster.chart.schedulerArgs(cluster.configFile, cluster.kubeconfig, schedulerNamespace, port)
	if settings.profile {
		args = append(args, "--profiling")
	}
	args = append(args, r.args...)
	args = append(args, settings.args...)
	log := filepath.Join(settings.out, fmt.Sprintf("%s-scheduler-%d.log", r.name, len(r.procs)))
	p, err := startSchedulerProcess(settings.binary, args, schedulerNamespace, log, port)
	Expect(err).NotTo(HaveOccurred())
	// A scenario that fails before finish must not leave its scheduler running: it would
	// hold the Lease, and every later scenario's scheduler would wait for it.
	DeferCleanup(func() {
		select {
		case <-p.exited:
		default:
			p.kill()
		}
	})
	r.procs = append(r.procs, p)
	r.current = p
}

// waitLeading waits until the current scheduler holds the Lease, and so schedules: after a
// crash, only once the dead one's Lease has expired, as on a real cluster.
func (r *run) waitLeading() {
	Eventually(r.current.leading).WithTimeout(time.Minute).WithPolling(250*time.Millisecond).Should(BeTrue(),
		"the scheduler leads (log %s)", r.current.log)
}

// crashScheduler kills the scheduler (SIGKILL, as a node failure or an OOM kill would) and
// starts a new one at once, which must take over from what the API server holds.
func (r *run) crashScheduler() {
	if settings.profile {
		r.current.saveHeapProfile(filepath.Join(settings.out, fmt.Sprintf("%s-%d.heap.pprof", r.name, len(r.procs)-1)))
	}
	r.current.kill()
	r.result.Crashes++
	r.startScheduler()
}

// stopScheduler stops the scheduler as a rollout does (SIGTERM) and returns how long it
// took to exit.
func (r *run) stopScheduler() time.Duration {
	took, clean := r.current.terminate(30 * time.Second)
	r.current = nil
	Expect(clean).To(BeTrue(), "the scheduler exits within 30s of SIGTERM")
	return took
}

// createQueue creates a top-level queue with a GPU quota and, unless zero, a reclaim
// min-runtime, which the observer holds the scheduler to.
func (r *run) createQueue(name string, gpuQuota float64, reclaimMinRuntime time.Duration) {
	q := builders.MakeQueue(r.name + "-" + name).GPUQuota(gpuQuota)
	if reclaimMinRuntime > 0 {
		q.ReclaimMinRuntime(reclaimMinRuntime)
		cluster.observer.mu.Lock()
		cluster.observer.minRuntime[q.Name] = reclaimMinRuntime
		cluster.observer.mu.Unlock()
	}
	Expect(cluster.client.Create(cluster.ctx, q.Obj())).To(Succeed())
	r.queues = append(r.queues, q.Name)
}

// jobs describes a batch of identical jobs to submit. Each pod asks for gpus whole GPUs or,
// when fraction is set ("0.5"), for that share of one device instead, prepared as the GPU
// sharing webhook prepares it (the run must share GPUs: see shareGPUs). Each PodGroup carries
// topology, unless nil.
type jobs struct {
	queue, prefix, priorityClass string
	count, pods                  int
	gpus                         int64
	fraction                     string
	topology                     *v2alpha2.TopologyConstraint
}

// submit creates the jobs, each a PodGroup (a gang of all its pods) and its pods, from 32
// goroutines, and returns when it began and ended.
func (r *run) submit(j jobs) (began, ended time.Time) {
	queue := r.name + "-" + j.queue
	if j.priorityClass == "" {
		j.priorityClass = "train"
	}
	began = time.Now()
	Expect(inParallel(j.count, func(i int) error {
		name := fmt.Sprintf("%s-%05d", j.prefix, i)
		pg := builders.MakePodGroup(r.namespace, name).MinMember(int32(j.pods)).Queue(queue).PriorityClass(j.priorityClass)
		if t := j.topology; t != nil {
			pg.InTopology(t.Topology, t.RequiredTopologyLevel, t.PreferredTopologyLevel)
		}
		if err := cluster.client.Create(cluster.ctx, pg.Obj()); err != nil {
			return err
		}
		for p := range j.pods {
			// Labelled with its queue, as a pod the pod grouper would group.
			pod := builders.MakePod(r.namespace, fmt.Sprintf("%s-%d", name, p)).PodGroup(name).Queue(queue).
				Image("trainer").Request(v1.ResourceCPU, "1")
			obj, err := asked(pod, j)
			if err != nil {
				return err
			}
			if err := cluster.client.Create(cluster.ctx, obj); err != nil {
				return err
			}
		}
		return nil
	})).To(Succeed())
	return began, time.Now()
}

// timeout is how long any wait of a scenario may take before the scheduler counts as
// stuck: generous, since it bounds liveness, not speed.
func timeout() time.Duration { return 3*time.Minute + time.Duration(settings.nodes)*time.Second }

// waitRunning waits until n pods of the queue run, and returns when the last was seen
// running.
func (r *run) waitRunning(queue string, n int) time.Time {
	queue = r.name + "-" + queue
	Eventually(func() int { return cluster.observer.podCount(r.namespace, queue, isRunning) }).WithTimeout(timeout()).
		Should(BeNumerically(">=", n), "pods of %s running (%s)", queue, r.progress())
	return cluster.observer.lastTime(r.namespace, queue, func(p *podRecord) time.Time { return p.running })
}

// waitBound waits until at least n pods of the queue are bound, and returns when the last
// was seen bound.
func (r *run) waitBound(queue string, n int) time.Time {
	queue = r.name + "-" + queue
	Eventually(func() int { return cluster.observer.podCount(r.namespace, queue, isBound) }).WithTimeout(timeout()).
		Should(BeNumerically(">=", n), "pods of %s bound (%s)", queue, r.progress())
	return cluster.observer.lastTime(r.namespace, queue, func(p *podRecord) time.Time { return p.bound })
}

// progress says where the scenario's pods are, for a wait that times out.
func (r *run) progress() string {
	o := cluster.observer
	return fmt.Sprintf("pods: %d unplaced, %d bound, %d running, %d evicted; scheduler log %s",
		o.podCount(r.namespace, "", isUnplaced), o.podCount(r.namespace, "", isBound),
		o.podCount(r.namespace, "", isRunning), o.podCount(r.namespace, "", isEvicted), r.current.logOrNone())
}

func (p *schedulerProcess) logOrNone() string {
	if p == nil {
		return "(none running)"
	}
	return p.log
}

// settle gives the scheduler time to write what it owes (stamps, protection statuses),
// waiting until every running job shows them, or the timeout.
func (r *run) settle(within time.Duration) {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		a := cluster.observer.auditWrites(r.namespace)
		if a.Unstamped == 0 && a.Unprotected == 0 {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// finish stops the scheduler, records the figures every scenario has (memory, API
// requests, shutdown, what was written, the invariants), writes the result, empties the
// namespace and deletes the queues; then fails the spec if an invariant was broken.
//
// The scheduler is stopped as soon as the scenario's work is done, when it has the most left
// to write: what it had not written by the time it exited counts as unwritten at shutdown.
// A new scheduler is then started to make that good (a running job without a stamp is
// stamped by the next leader), and the checks are made on what it leaves.
func (r *run) finish() {
	res := r.result
	if r.current != nil {
		if settings.profile {
			r.current.saveHeapProfile(filepath.Join(settings.out, r.name+".heap.pprof"))
		}
		res.ShutdownSeconds = r.stopScheduler().Seconds() // the busy shutdown's, not the repair's below
	}
	r.settle(2 * time.Second) // the observer sees what landed before the exit
	atShutdown := cluster.observer.auditWrites(r.namespace)
	res.UnwrittenAtShutdown = atShutdown.Unstamped + atShutdown.Unprotected
	if res.UnwrittenAtShutdown > 0 {
		r.startScheduler()
		r.settle(time.Minute) // a scheduler that stamps what it finds unstamped does so at once
		r.stopScheduler()
	}
	cycleSeconds := 0.0
	for _, p := range r.procs {
		p.mu.Lock()
		res.PeakRSSMB = max(res.PeakRSSMB, float64(p.peakRSS)/(1<<20))
		res.ProcessRSSMB = append(res.ProcessRSSMB, float64(p.peakRSS)/(1<<20))
		res.APIRequests += p.requests
		res.APIWrites += p.writes
		res.Cycles += p.cycles
		res.StatusWritesGivenUp += p.givenUp
		res.DecisionsDropped += p.dropped
		cycleSeconds += p.cycleSeconds
		p.mu.Unlock()
	}
	if res.Cycles > 0 {
		res.CycleSeconds = cycleSeconds / res.Cycles
	}
	res.Timeline = cluster.observer.timeline(r.namespace, r.began)
	res.ConditionReasons = cluster.observer.conditionReasons(r.namespace)
	res.ServerWrites = map[string]float64{}
	for k, n := range serverWrites() {
		if d := n - r.writesBefore[k]; d > 0 {
			res.ServerWrites[k] = d
		}
	}
	res.PodsBound = cluster.observer.podCount(r.namespace, "", func(p *podRecord) bool { return !p.bound.IsZero() })
	if res.PodsBound > 0 {
		res.APIRequestsPerPod = res.APIRequests / float64(res.PodsBound)
		res.APIWritesPerPod = res.APIWrites / float64(res.PodsBound)
	}
	res.ReservationPodsCreated, res.ReservationPodsDeleted = cluster.observer.takeReservationCounts()
	audit := cluster.observer.auditWrites(r.namespace)
	res.Writes = summarize(audit)
	res.Violations = cluster.observer.takeViolations()
	res.Seconds = time.Since(r.began).Seconds()
	Expect(res.write()).To(Succeed())
	cluster.mu.Lock()
	cluster.results = append(cluster.results, res)
	cluster.mu.Unlock()
	r.cleanUp()

	Expect(res.Violations).To(BeEmpty(), "invariants broken in %s", r.name)
	Expect(audit.Unstamped).To(BeZero(), "running jobs without a start stamp in %s", r.name)
	Expect(audit.Unprotected).To(BeZero(), "protected jobs whose status shows no protection in %s", r.name)
	Expect(audit.WrongProtection).To(BeZero(), "protected jobs whose status shows a protection ending too soon in %s", r.name)
}

// serverWrites reads the API server's counts of the writes it took (apiserver_request_total),
// by verb and resource.
func serverWrites() map[string]float64 {
	raw, err := cluster.clientset.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(cluster.ctx)
	if err != nil {
		return nil
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		return nil
	}
	counts := map[string]float64{}
	for _, m := range families["apiserver_request_total"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		switch labels["verb"] {
		case "POST", "PUT", "PATCH", "DELETE", "create", "update", "patch", "delete":
		default:
			continue
		}
		key := strings.ToLower(labels["verb"]) + " " + labels["resource"]
		if labels["subresource"] != "" {
			key += "/" + labels["subresource"]
		}
		counts[key] += m.GetCounter().GetValue()
	}
	return counts
}

// cleanUp deletes the scenario's pods, PodGroups and queues, and waits until the pods are
// gone, so the next scenario starts on empty nodes.
func (r *run) cleanUp() {
	o := cluster.observer
	o.mu.Lock()
	o.cleaning[r.namespace] = true
	o.mu.Unlock()
	c, ctx := cluster.client, cluster.ctx
	// Deleting thousands of pods may outlast the API server's request timeout on a busy
	// machine; what it deleted stays deleted, and another try deletes the rest.
	Eventually(func() error {
		return c.DeleteAllOf(ctx, &v1.Pod{}, client.InNamespace(r.namespace), client.GracePeriodSeconds(0))
	}).WithTimeout(timeout()).WithPolling(time.Second).Should(Succeed())
	Eventually(func() error { return c.DeleteAllOf(ctx, &v2alpha2.PodGroup{}, client.InNamespace(r.namespace)) }).
		WithTimeout(timeout()).WithPolling(time.Second).Should(Succeed())
	Eventually(func() int { return o.podCount(r.namespace, "", isPresent) }).WithTimeout(timeout()).Should(BeZero(), "the scenario's pods are gone")
	removeReservations()
	for _, q := range r.queues {
		Expect(client.IgnoreNotFound(c.Delete(ctx, builders.MakeQueue(q).Obj()))).To(Succeed())
	}
	o.forget(r.namespace)
}
