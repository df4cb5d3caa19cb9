package explain

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/plural"
	"github.com/kai-minruntime/kai-scheduler/pkg/podgrouper"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions/stalegang"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/placement"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/plugins/minruntime"
)

// PodGroup writes what the scheduler makes of one job: for a running job, what protects it
// against whom until when; for a waiting job, why it waits.
func (c *Explainer) PodGroup(ctx context.Context, w io.Writer, id model.JobID) error {
	job := c.Snapshot.Job(id)
	group := &v2alpha2.PodGroup{}
	if err := c.Reader.Get(ctx, client.ObjectKeyFromObject(id.PodGroupRef()), group); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("PodGroup %s not found", id)
		}
		return fmt.Errorf("reading PodGroup %s: %w", id, err)
	}
	if job == nil {
		return fmt.Errorf("PodGroup %s exists but the scheduler does not see it as a job", id)
	}
	p := &printer{w: w}
	c.describeJob(p, job, group)
	ssn := c.session(ctx)
	defer ssn.Close()
	if job.CountActive() > 0 {
		c.explainRunning(p, ssn, job, group)
		c.explainSavedPoint(p, job, group)
		c.explainStale(p, job)
	}
	if pending := len(job.PendingPods()); pending > 0 {
		c.explainWaiting(ctx, p, ssn, job, group, pending)
	}
	if job.CountActive() == 0 && len(job.PendingPods()) == 0 {
		p.line(0, "It has no running or pending pods: nothing to schedule and nothing to protect.")
	}
	return p.err
}

// describeJob says where the job sits and what it has, and the workload it was made for.
func (c *Explainer) describeJob(p *printer, job *model.JobInfo, group *v2alpha2.PodGroup) {
	kind := "preemptible"
	if !job.Preemptible {
		kind = "non-preemptible"
	}
	p.line(0, "PodGroup %s", job.ID)
	if workload := podgrouper.WorkloadOf(group); workload != "" {
		p.line(1, "workload: %s", workload)
	}
	p.line(1, "queue:    %s", c.queuePath(job.Queue))
	p.line(1, "priority: %d (%s)", job.Priority, kind)
	p.line(1, "pods:     %d running, %d pending; gang of %d", job.CountActive(), len(job.PendingPods()), job.GangSize())
	if job.CountsSubGroups() {
		summary, _ := job.GangReport()
		p.line(1, "gang:     %s (minSubGroup)", summary)
	}
	p.line(1, "at:       %s", stamp(c.Now))
}

// explainStale tells a running job below its minimum when stalegangeviction evicts it.
func (c *Explainer) explainStale(p *printer, job *model.JobInfo) {
	var defaultGrace time.Duration // whether a job is short does not depend on it
	if c.StaleGang != nil {
		defaultGrace = c.StaleGang.DefaultGrace()
	}
	v := stalegang.Judge(job, defaultGrace, c.Now)
	if !v.Short {
		return
	}
	p.blank()
	p.line(0, "A stale gang, holding its resources without progress: %s.", v.Shortfall())
	switch {
	case c.StaleGang == nil:
		p.line(0, "The scheduler's configuration runs no stalegangeviction: it is not evicted for it.")
	case v.Disabled:
		p.line(0, "Its staleness grace period is %s (negative): stalegangeviction never evicts it.", v.Grace)
	case !v.Traced:
		p.line(0, "No pod tells since when (a pod deleted without a replacement): the scheduler counts its staleness grace period of %s", v.Grace)
		p.line(0, "from the first cycle that saw it so; stalegangeviction evicts it by %s at the latest (%s from now), min-runtime or not.", end(v.EvictAt), ago(v.EvictAt.Sub(c.Now)))
	case c.Now.Before(v.EvictAt):
		p.line(0, "Short since %s; stalegangeviction evicts it at %s (%s from now) when its staleness grace period of %s ends, min-runtime or not.",
			stamp(v.Since), end(v.EvictAt), ago(v.EvictAt.Sub(c.Now)), v.Grace)
	default:
		p.line(0, "Short since %s; its staleness grace period of %s ended at %s: stalegangeviction evicts it at its next cycle, min-runtime or not.",
			stamp(v.Since), v.Grace, end(v.EvictAt))
	}
}

// explainRunning tells what protects a running job: the plugin's own account, the one the
// scheduler writes into the PodGroup's status.
func (c *Explainer) explainRunning(p *printer, ssn *framework.Session, job *model.JobInfo, group *v2alpha2.PodGroup) {
	p.blank()
	switch {
	case !job.Preemptible:
		p.line(0, "It is non-preemptible: neither preempt nor reclaim ever evicts it.")
		return
	case c.MinRuntime == nil:
		p.line(0, "The scheduler's configuration has no minruntime plugin: no min-runtime protects it.")
		return
	}
	protection, ok := ssn.Protection(job)
	if !ok {
		p.line(0, "It has no known start (no start stamp and no pod start time yet): min-runtime cannot protect it yet.")
		return
	}
	p.line(0, "Running since %s (%s ago).", stamp(protection.Start), ago(c.Now.Sub(protection.Start)))
	if n := job.Evictions.Total(); n > 0 {
		p.line(1, "Evicted before: %s (%d by preempt, %d by reclaim; status.evictions); escalation: %s.",
			plural.Count(int(n), "time", "times"), job.Evictions.Preempt, job.Evictions.Reclaim, c.escalationOf(job.Queue).Describe())
	}
	if protection.StartNote != "" {
		p.line(1, "Note: %s.", protection.StartNote)
	}
	p.blank()
	p.line(0, "Against preemption (higher-priority jobs of queue %s):", job.Queue)
	c.explainEnd(p, 1, protection, protection.Preempt)
	p.line(2, "resolved: %s", c.walk(protection.Preempt, false, job))
	p.blank()
	p.line(0, "Against reclaim (jobs of other queues; reclaimResolveMethod %s):", c.MinRuntime.Method())
	if len(protection.Reclaim) == 0 {
		p.line(1, "no queue sits beside any queue of its path: no other queue can reclaim it")
	}
	// open are the jobs a min-runtime of 0s lets take its resources at any time.
	var open []string
	if protection.Preempt.Duration <= 0 {
		open = append(open, "higher-priority jobs of queue "+job.Queue)
	}
	for k, level := range protection.Reclaim {
		who := "from outside " + level.Outside
		if k > 0 {
			who += " (inside " + protection.Reclaim[k-1].Outside + ")"
		}
		if level.Duration <= 0 {
			open = append(open, "jobs "+who)
		}
		p.line(1, "%s:", who)
		c.explainEnd(p, 2, protection, level.MinRuntime)
		p.line(3, "resolved: %s", c.walk(level.MinRuntime, true, job))
	}
	for _, line := range protection.Declined() {
		p.line(0, "Note: %s.", line)
	}
	if minruntime.IsElastic(job) {
		p.line(0, "It has pods above its gang of %d: those may be taken at any time; protection keeps its minimum.", job.GangSize())
	}
	p.blank()
	// A min-runtime of 0s protects nothing and has no end: it is told apart, not shown as a
	// protection that ended when the job started.
	first, protects := protection.FirstEnd()
	switch {
	case !protects:
		p.line(0, "Every min-runtime above is zero: any job that may evict it may do so at any time.")
	case len(open) > 0:
		p.line(0, "A min-runtime of 0s lets %s take its resources at any time.", strings.Join(open, " and "))
		if c.Now.Before(first) {
			p.line(0, "No other job can take them before %s (%s from now).", end(first), ago(first.Sub(c.Now)))
		} else {
			p.line(0, "Other jobs may take them now too: a protection ended at %s.", end(first))
		}
	case c.Now.Before(first):
		p.line(0, "No job can take its resources before %s (%s from now).", end(first), ago(first.Sub(c.Now)))
	default:
		p.line(0, "Some job may take its resources now: a protection ended at %s.", end(first))
	}
	if !protects {
		p.line(0, "The PodGroup's status shows no protection (kubectl get pg shows no Preempt-Until or Reclaim-Until).")
	} else if shown := model.ShownProtection(group.Status.MinRuntime); shown != nil && shown.Equal(protection.Shown()) {
		p.line(0, "The PodGroup's status (status.minRuntime, kubectl get pg) shows this protection.")
	} else {
		p.line(0, "The PodGroup's status does not show this protection yet: the scheduler writes it at its next cycle.")
	}
}

// explainSavedPoint tells what a running job would lose if evicted now: the work since its
// saved point (model.JobInfo.SavedPoint), which ranks it among victims that priority, fair share
// and the kind of unit leave equal.
func (c *Explainer) explainSavedPoint(p *printer, job *model.JobInfo, group *v2alpha2.PodGroup) {
	if !job.Preemptible {
		return
	}
	p.blank()
	p.line(0, "Work at risk (among victims otherwise equal, the one that loses least is evicted first):")
	if _, err := scheduling.ParseCheckpointTime(group.Annotations); err != nil {
		p.line(1, "Its checkpoint is ignored, as if it reported none: %v.", err)
	}
	saved := job.SavedPoint(c.Now)
	switch saved.Source {
	case model.SavedAtCheckpoint:
		p.line(1, "last checkpoint %s (%s ago): an eviction now loses the work since then.", stamp(saved.At), ago(c.Now.Sub(saved.At)))
		return
	case model.CheckpointBeforeStart:
		p.line(1, "last checkpoint %s, before its current run started at %s: it saved nothing of this run, and an eviction now loses the work since its start (%s).",
			stamp(*job.LastCheckpoint), stamp(saved.At), ago(c.Now.Sub(saved.At)))
		return
	case model.CheckpointAfterNow:
		p.line(1, "last checkpoint %s, in the future: it counts as now, as if an eviction now lost nothing.", stamp(*job.LastCheckpoint))
		return
	case model.CheckpointWithoutStart:
		p.line(1, "last checkpoint %s, but its run has no known start to place it in: it counts as if it reported none.", stamp(*job.LastCheckpoint))
	}
	if saved.Known {
		p.line(1, "no checkpoint reported (%s): an eviction now loses the work since its start at %s (%s ago).",
			scheduling.LastCheckpointTimestampAnnotation, stamp(saved.At), ago(c.Now.Sub(saved.At)))
	} else {
		p.line(1, "no checkpoint reported (%s) and no start stamp: it counts as the one that loses most.", scheduling.LastCheckpointTimestampAnnotation)
	}
}

// explainEnd says one min-runtime, where it was set and whether it still protects.
func (c *Explainer) explainEnd(p *printer, depth int, protection model.Protection, m model.MinRuntime) {
	until := protection.Until(m)
	switch {
	case m.Duration <= 0:
		p.line(depth, "0s from %s: not protected", m.Source())
	case c.Now.Before(until):
		p.line(depth, "%s from %s: protected until %s (%s from now)", m.Duration, m.Source(), end(until), ago(until.Sub(c.Now)))
	default:
		p.line(depth, "%s from %s: ended at %s (%s ago)", m.Duration, m.Source(), end(until), ago(c.Now.Sub(until)))
	}
}

// explainWaiting tells why a job waits: what the scheduler last wrote on it, and the
// min-runtime protections it would meet now among the jobs it could take from.
func (c *Explainer) explainWaiting(ctx context.Context, p *printer, ssn *framework.Session, job *model.JobInfo, group *v2alpha2.PodGroup, pending int) {
	p.blank()
	p.line(0, "It waits: %s pending.", plural.Count(pending, "pod", "pods"))
	if q := c.Snapshot.Queues.Get(job.Queue); q == nil {
		p.line(1, "Its queue %q does not exist: it cannot be scheduled until it does.", job.Queue)
	} else if q.Problem != "" {
		p.line(1, "Its queue %q cannot be scheduled: %s.", job.Queue, q.Problem)
	} else if !q.IsLeaf() {
		p.line(1, "Its queue %q has child queues: only leaf queues hold jobs.", job.Queue)
	}
	c.explainDelay(p, job)
	if _, short := job.GangReport(); job.CountsSubGroups() && !job.IsGangSatisfied() {
		// A gang counted in sub-groups waits on particular replicas: name those short.
		p.line(1, "Sub-groups short of their minimum:")
		for _, s := range short {
			p.line(2, "%s", s)
		}
	}
	told := false
	for _, condition := range group.Status.SchedulingConditions {
		told = true
		p.line(0, "The scheduler says (%s, since %s):", condition.Type, stamp(condition.LastTransitionTime.Time))
		for _, r := range condition.Reasons {
			p.line(1, "[%s] %s", r.Reason, r.Message)
		}
		if len(condition.Reasons) == 0 {
			p.line(1, "%s", condition.Message)
		}
	}
	if !told {
		p.line(0, "The scheduler has not said why yet: it reports at the end of each cycle (is the scheduler running, and are the pods' schedulerName and the PodGroup annotation right?).")
	}
	c.explainJobShare(p, ssn, job)
	c.explainTopology(ctx, p, job)
	if c.MinRuntime == nil {
		return
	}
	// Ask the plugins about every running job this one could take from: the reasons a cycle
	// would record, before fair share and room decide which of them it would need. Only jobs
	// with pods on nodes its pods could use count: the victim search evicts nothing where the
	// pod could not run anyway. The others are asked in a session of their own, to count those
	// a protection would refuse without their names joining the reasons of this one.
	usable := c.usableNodes(ssn, job)
	aside := c.session(ctx)
	defer aside.Close()
	var unusable []unusableVictim
	for _, victim := range c.Snapshot.Jobs {
		if victim.ID == job.ID || !victim.Preemptible || victim.CountActive() == 0 {
			continue
		}
		var actions []framework.ActionType
		switch {
		case victim.Queue != job.Queue:
			actions = append(actions, framework.Reclaim)
		case victim.Priority < job.Priority:
			actions = append(actions, framework.Preempt)
		}
		if c.consolidates(job, victim) {
			actions = append(actions, framework.Consolidation)
		}
		nodes := usable.refusedNodes(victim)
		for _, action := range actions {
			if nodes != nil {
				if aside.IsPreemptible(action, job, victim).Plugin() == minruntime.Name {
					unusable = append(unusable, unusableVictim{victim.ID, nodes})
					break // named once, whichever action its protection holds against
				}
				continue
			}
			ssn.IsPreemptible(action, job, victim)
		}
	}
	var protected []string
	for _, r := range ssn.PendingReasons(job.ID) {
		if r.Reason == model.ReasonMinRuntimeProtected {
			protected = append(protected, r.Message)
		}
	}
	p.blank()
	if len(protected) == 0 {
		p.line(0, "No running job it could take from on nodes its pods can use is protected by min-runtime now.")
	} else {
		p.line(0, "Min-runtime protections it meets now (among running jobs it could take from on nodes its pods can use, before fair share decides which it may):")
		for _, m := range protected {
			p.line(1, "%s", m)
		}
	}
	c.explainUnusable(p, unusable)
}

// consolidates reports whether the configuration's consolidation may move victim for job.
func (c *Explainer) consolidates(job, victim *model.JobInfo) bool {
	return c.Consolidation != nil && c.Consolidation.MayMove(job, victim)
}

// unusableVictim is a protected job whose running pods all sit on nodes the waiting job's
// pods cannot use: for each such node, why.
type unusableVictim struct {
	id    model.JobID
	nodes []refusedNode
}

type refusedNode struct{ name, why string }

// maxUnusableNamed bounds the protected jobs named on unusable nodes: they are said for
// completeness, and a large cluster may hold many.
const maxUnusableNamed = 5

// explainUnusable says how many protected jobs were left out because they run on nodes the
// waiting job's pods cannot use, names the first few and says why each node is refused, so
// that no one waits for a protection to end that would free nothing for this job.
func (c *Explainer) explainUnusable(p *printer, victims []unusableVictim) {
	if len(victims) == 0 {
		return
	}
	if len(victims) == 1 {
		p.line(0, "1 protected job on nodes this job's pods cannot use is not shown (evicting it would make no room for this job):")
	} else {
		p.line(0, "%d protected jobs on nodes this job's pods cannot use are not shown (evicting them would make no room for this job):", len(victims))
	}
	for k, v := range victims {
		if k == maxUnusableNamed {
			p.line(1, "and %d more", len(victims)-k)
			break
		}
		var nodes []string
		for _, n := range v.nodes {
			nodes = append(nodes, n.name+" ("+n.why+")")
		}
		p.line(1, "%s on %s", v.id, strings.Join(nodes, ", "))
	}
}

// usable maps each node to why no pending pod of the waiting job could run there, "" for a
// node one could.
type usable map[string]string

// usableNodes asks, of every node, whether some pending pod of job could run there once
// victims made room: the session's Predicate, which the victim search asks before it looks
// for victims on a node (kube-scheduler's filters: taints, node selector and affinity,
// cordons, host ports; and the plugins'), and whether the node, even emptied, has every
// resource the pod asks for, in kube-scheduler's words for a node short of one.
func (c *Explainer) usableNodes(ssn *framework.Session, job *model.JobInfo) usable {
	pending := job.PendingPods()
	nodes := usable{}
	for _, node := range c.Snapshot.Nodes {
		why := ""
		for k, pod := range pending {
			reason := ""
			if s := ssn.Predicate(pod, node); !s.IsSuccess() {
				reason = s.Message()
			} else if name, short := pod.Request.Shortage(node.Allocatable); short {
				reason = placement.InsufficientReason(name)
			}
			if reason == "" {
				why = ""
				break
			}
			if k == 0 {
				why = reason // the first pod's: the pods of a job mostly ask alike
			}
		}
		nodes[node.Name] = why
	}
	return nodes
}

// refusedNodes returns the nodes of victim's running pods, with why each is refused, when
// every one is refused; nil when some pod runs on a node the waiting job could use.
func (u usable) refusedNodes(victim *model.JobInfo) []refusedNode {
	var refused []refusedNode
	seen := map[string]bool{}
	for _, pod := range victim.Pods {
		if !pod.Status.IsActive() || seen[pod.NodeName] {
			continue
		}
		seen[pod.NodeName] = true
		why, known := u[pod.NodeName]
		if !known || why == "" {
			// A node the snapshot does not hold is not refused here: the victim stays among
			// those told, as it was before nodes were asked.
			return nil
		}
		refused = append(refused, refusedNode{pod.NodeName, why})
	}
	return refused
}

// explainDelay tells a waiting job's preemption delay: its window and its end, or why the
// annotation that asked for one was not used. The delay is the minruntime plugin's rule.
func (c *Explainer) explainDelay(p *printer, job *model.JobInfo) {
	until, ok := job.PreemptionDelayEnd()
	switch {
	case job.PreemptionDelayProblem != "":
		p.line(1, "Its preemption delay is ignored, so it may evict other jobs at once: %s.", job.PreemptionDelayProblem)
	case !ok:
	case c.MinRuntime == nil:
		p.line(1, "Its preemption delay of %s does not apply: the scheduler runs without the minruntime plugin.", job.PreemptionDelay)
	case c.Now.Before(until):
		from, since := job.PreemptionDelayFrom()
		p.line(1, "Its preemption delay of %s from %s (%s) ends at %s (%s from now): until then it takes free capacity but evicts no job.",
			job.PreemptionDelay, since, stamp(from), end(until), ago(until.Sub(c.Now)))
	default:
		from, since := job.PreemptionDelayFrom()
		p.line(1, "Its preemption delay of %s from %s (%s) ended at %s (%s ago): it may evict other jobs.",
			job.PreemptionDelay, since, stamp(from), end(until), ago(c.Now.Sub(until)))
	}
}

// walk tells how a min-runtime was resolved, as the resolution walked (m.Path, top first):
// the queues asked, from where the walk started up, and the one that set it, or the default.
func walk(m model.MinRuntime, reclaim bool) string {
	arg, field := minruntime.ArgDefaultPreemptMinRuntime, "preemptMinRuntime"
	if reclaim {
		arg, field = minruntime.ArgDefaultReclaimMinRuntime, "reclaimMinRuntime"
	}
	var steps []string
	for i := len(m.Path) - 1; i >= 0; i-- {
		if i == 0 && m.SetBy != "" {
			steps = append(steps, fmt.Sprintf("%s sets %s %s", m.Path[i], field, m.Duration))
			return strings.Join(steps, " → ")
		}
		steps = append(steps, m.Path[i]+" does not set it")
	}
	steps = append(steps, fmt.Sprintf("the default (the minruntime plugin's %s, %s)", arg, m.Duration))
	return strings.Join(steps, " → ")
}

// walk is the queues' walk for a job's min-runtime, then what the job's past evictions
// (escalation) and its own annotation made of it.
func (c *Explainer) walk(m model.MinRuntime, reclaim bool, job *model.JobInfo) string {
	if m.ByJob() {
		// The walk found the queues' value (maybe escalated); the job's annotation then shortened it.
		found := model.MinRuntime{Duration: m.Shortened.Duration, SetBy: m.Shortened.SetBy, EscalatedFrom: m.Shortened.EscalatedFrom, Path: m.Path}
		return fmt.Sprintf("%s → the job's annotation %s shortens it to %s", c.walk(found, reclaim, job), m.SetBy, m.Duration)
	}
	if m.EscalatedFrom <= 0 {
		return walk(m, reclaim)
	}
	queues := m
	queues.Duration, queues.EscalatedFrom = m.EscalatedFrom, 0
	return fmt.Sprintf("%s → escalated to %s for %s", walk(queues, reclaim), m.Duration, c.escalation(job))
}

// escalationOf is the escalation of the jobs of queue, as the plugin resolves it.
func (c *Explainer) escalationOf(queue string) minruntime.Escalation {
	return c.MinRuntime.Escalation().For(c.Snapshot.Queues, queue)
}

// escalation says what lengthened a job's protection: its evictions and the rule.
func (c *Explainer) escalation(job *model.JobInfo) string {
	return fmt.Sprintf("its %s (%d by preempt, %d by reclaim; the minruntime plugin's escalation: %s)",
		plural.Count(int(job.Evictions.Total()), "eviction", "evictions"), job.Evictions.Preempt, job.Evictions.Reclaim, c.escalationOf(job.Queue).Describe())
}

// queuePath names a queue with its ancestry, or says why it has none.
func (c *Explainer) queuePath(name string) string {
	tree := c.Snapshot.Queues
	q := tree.Get(name)
	switch {
	case name == "":
		return "(none)"
	case q == nil:
		return name + " (does not exist)"
	case q.Problem != "":
		return name + " (invalid: " + q.Problem + ")"
	}
	return strings.Join(tree.Ancestry(name), " → ")
}

// printer writes indented lines and keeps the first error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) line(depth int, format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, strings.Repeat("  ", depth)+format+"\n", args...)
	}
}

func (p *printer) blank() { p.line(0, "") }

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// end writes when a protection ends as the scheduler's messages and status do (rounded up).
func end(t time.Time) string { return model.FormatEnd(t) }

func ago(d time.Duration) string { return d.Round(time.Second).String() }
