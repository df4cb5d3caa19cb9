package explain

import (
	"cmp"
	"context"
	"slices"

	"github.com/kai-minruntime/kai-scheduler/pkg/plural"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// maxDomainsShown bounds the candidate domains a waiting job is shown: the roomiest first,
// which are those an operator can act on.
const maxDomainsShown = 8

// explainTopology tells a waiting job with a topology constraint where it may run: the level,
// the domain its placed pods fix, and per candidate domain what is free there and which
// running jobs on its nodes min-runtime protects from this job, until when. The constraint's
// meaning is the scheduler's own (actions.ResolveTopology).
func (c *Explainer) explainTopology(ctx context.Context, p *printer, job *model.JobInfo) {
	if !job.HasTopology() {
		return
	}
	p.blank()
	topo, err := actions.ResolveTopology(c.Snapshot, job)
	if err != nil {
		p.line(0, "Its topology constraint cannot be met: %s.", err)
		return
	}
	tg := topo.Root()
	if tg.Topology == nil {
		p.line(0, "Its sub-groups each run inside a domain of their topology; the job as a whole may go anywhere.")
		return
	}
	level := tg.Required
	what := "It must run inside " + tg.Describe()
	if level < 0 {
		level = tg.Preferred
		what = "It would rather run inside " + tg.Describe() + " (preferred: it spreads when none has room)"
	} else if tg.Preferred >= 0 {
		what += ", packed into as few of its " + tg.Topology.LevelName(tg.Preferred) + " domains as it fits in"
	}
	p.line(0, "%s.", what)
	domains := c.Snapshot.Domains(tg.Topology, level)
	if tg.Fixed != nil {
		p.line(1, "Its placed pods are in %s %s: it grows only there.", tg.Topology.LevelName(level), tg.Fixed.Path)
		domains = []*model.Domain{tg.Fixed}
	}
	if len(domains) == 0 {
		p.line(1, "No node carries every label of topology %s's levels down to %s: no domain exists.", tg.Topology.Name, tg.Topology.LevelName(level))
		return
	}
	request := model.Request(job.PendingPods())
	key := model.GPU // what the domains are compared by: GPUs, or CPU for a job asking none
	if request.Get(model.GPU) == 0 {
		key = model.CPU
	}
	type shown struct {
		d               *model.Domain
		free, releasing model.Resources
		total           model.Resources
		protected       []string
	}
	var rows []shown
	for _, d := range domains {
		row := shown{d: d}
		for _, i := range d.Nodes {
			n := c.Snapshot.Nodes[i]
			row.free = row.free.Add(n.Bindable().AtLeastZero())
			row.releasing = row.releasing.Add(n.FutureIdle().Sub(n.Bindable()).AtLeastZero())
			row.total = row.total.Add(n.Allocatable)
		}
		row.protected = c.protectedIn(ctx, job, d)
		rows = append(rows, row)
	}
	slices.SortStableFunc(rows, func(a, b shown) int {
		return cmp.Compare(b.free.Get(key)+b.releasing.Get(key), a.free.Get(key)+a.releasing.Get(key))
	})
	p.line(1, "It asks for %s. Its %s domains, roomiest first:", describeRequest(request), tg.Topology.LevelName(level))
	for k, row := range rows {
		if k == maxDomainsShown {
			p.line(2, "and %d more", len(rows)-k)
			break
		}
		fits := ""
		if !request.FitsIn(row.total) {
			fits = "; too small for it even empty"
		}
		p.line(2, "%s: %s free, %s releasing, of %s (%s)%s", row.d.Path, amount(key, row.free), amount(key, row.releasing),
			amount(key, row.total), plural.Count(len(row.d.Nodes), "node", "nodes"), fits)
		if len(row.protected) == 0 {
			p.line(3, "no job here is protected from it by min-runtime")
		}
		for _, m := range row.protected {
			p.line(3, "%s", m)
		}
	}
}

// protectedIn says which running jobs with pods in the domain min-runtime protects from job
// now, in the plugin's words (whom, until when, from which queue): each domain is asked in a
// session of its own, so that its reason names its own jobs only.
func (c *Explainer) protectedIn(ctx context.Context, job *model.JobInfo, d *model.Domain) []string {
	if c.MinRuntime == nil {
		return nil
	}
	aside := c.session(ctx)
	defer aside.Close()
	for _, victim := range c.Snapshot.Jobs {
		if victim.ID == job.ID || !victim.Preemptible || !runsIn(c.Snapshot, victim, d) {
			continue
		}
		switch {
		case victim.Queue != job.Queue:
			aside.IsPreemptible(framework.Reclaim, job, victim)
		case victim.Priority < job.Priority:
			aside.IsPreemptible(framework.Preempt, job, victim)
		}
	}
	var out []string
	for _, r := range aside.PendingReasons(job.ID) {
		if r.Reason == model.ReasonMinRuntimeProtected {
			out = append(out, r.Message)
		}
	}
	return out
}

// runsIn reports whether a job has an active pod on a node of the domain.
func runsIn(snap *model.Snapshot, job *model.JobInfo, d *model.Domain) bool {
	for _, p := range job.Pods {
		if p.Status.IsActive() {
			if n := snap.Node(p.NodeName); n != nil && d.Contains(n.Position()) {
				return true
			}
		}
	}
	return false
}

// amount names one resource of r as queues count it: "12 GPUs", "16 CPU cores".
func amount(r model.ResourceName, of model.Resources) string {
	return model.FormatQueueAmount(r, float64(of.Get(r)))
}
