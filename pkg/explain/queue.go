package explain

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/plugins/minruntime"
)

// Queue writes where a queue stands in the fair-share division, and the min-runtimes its
// jobs get and where each comes from; for a queue with children, those of every leaf below
// it.
func (c *Explainer) Queue(ctx context.Context, w io.Writer, name string) error {
	tree := c.Snapshot.Queues
	q := tree.Get(name)
	if q == nil {
		return fmt.Errorf("queue %q not found", name)
	}
	p := &printer{w: w}
	p.line(0, "Queue %s", name)
	p.line(1, "path:     %s", c.queuePath(name))
	if q.Problem != "" {
		p.line(1, "Its jobs cannot be scheduled, and min-runtime resolves to the defaults for them: %s.", q.Problem)
	}
	p.line(1, "settings: preemptMinRuntime %s, reclaimMinRuntime %s", setting(q.PreemptMinRuntime), setting(q.ReclaimMinRuntime))
	p.line(1, "at:       %s", stamp(c.Now))
	ssn := c.session(ctx)
	defer ssn.Close()
	c.explainQueueShare(p, ssn, name)
	if c.MinRuntime == nil {
		p.blank()
		p.line(0, "The scheduler's configuration has no minruntime plugin: no min-runtime protects any job.")
		return p.err
	}
	defaults := c.MinRuntime.Defaults()
	p.blank()
	p.line(0, "Min-runtime:")
	p.line(1, "defaults: defaultPreemptMinRuntime %s, defaultReclaimMinRuntime %s; reclaimResolveMethod %s",
		defaults.Preempt, defaults.Reclaim, c.MinRuntime.Method())
	if e := c.escalationOf(name); !e.Off() || e.NoCeiling || e.FactorSetBy != "" {
		p.line(1, "escalation: %s (a job's runs ended by preempt or reclaim, its PodGroup's status.evictions, lengthen its next protection)", e.Describe())
	}
	if q.IsLeaf() {
		c.explainLeaf(p, ssn, name, true)
		return p.err
	}
	if q.Problem != "" {
		return p.err // its subtree is as invalid as it is
	}
	leaves := leavesUnder(tree, name)
	p.blank()
	if len(leaves) == 1 {
		p.line(0, "Only leaf queues hold jobs. The 1 leaf under %s gets:", name)
	} else {
		p.line(0, "Only leaf queues hold jobs. The %d leaves under %s get:", len(leaves), name)
	}
	for _, leaf := range leaves {
		c.explainLeaf(p, ssn, leaf, false)
	}
	return p.err
}

// explainLeaf says what the jobs of a leaf queue get, with the resolution paths when detailed.
func (c *Explainer) explainLeaf(p *printer, ssn *framework.Session, leaf string, detailed bool) {
	tree := c.Snapshot.Queues
	defaults := c.MinRuntime.Defaults()
	preempt := minruntime.PreemptMinRuntime(tree, leaf, defaults)
	levels := minruntime.ReclaimLevels(tree, c.MinRuntime.Method(), leaf, defaults)
	p.blank()
	p.line(0, "Jobs of %s:", leaf)
	p.line(1, "against preemption: %s from %s", preempt.Duration, preempt.Source())
	if detailed {
		p.line(2, "resolved: %s", walk(preempt, false))
	}
	p.line(1, "against reclaim:")
	if len(levels) == 0 {
		p.line(2, "no queue sits beside any queue of its path: no other queue can reclaim its jobs")
	}
	for k, level := range levels {
		who := "from outside " + level.Outside
		if k > 0 {
			who += " (inside " + levels[k-1].Outside + ")"
		}
		p.line(2, "%s: %s from %s", who, level.Duration, level.Source())
		if detailed {
			p.line(3, "resolved: %s", walk(level.MinRuntime, true))
		}
	}
	c.summarizeJobs(p, ssn, leaf)
}

// summarizeJobs counts a leaf's jobs and the protections of those running, as the plugin
// gives them to the scheduler.
func (c *Explainer) summarizeJobs(p *printer, ssn *framework.Session, leaf string) {
	var running, pending, some, all int
	for _, job := range c.Snapshot.Jobs {
		if job.Queue != leaf {
			continue
		}
		if job.CountActive() == 0 {
			if len(job.PendingPods()) > 0 {
				pending++
			}
			continue
		}
		running++
		protection, ok := ssn.Protection(job)
		if !ok {
			continue
		}
		if c.Now.Before(protection.Earliest()) {
			all++
		}
		if c.Now.Before(protection.Latest()) {
			some++
		}
	}
	p.line(1, "jobs: %d running (%d protected against some jobs, %d against all), %d waiting", running, some, all, pending)
}

// leavesUnder lists the leaf queues in name's subtree, in name order.
func leavesUnder(tree *model.QueueTree, name string) []string {
	var leaves []string
	seen := map[string]bool{}
	var visit func(string)
	visit = func(n string) {
		q := tree.Get(n)
		if q == nil || seen[n] {
			return // only a queue in a parent cycle is met twice
		}
		seen[n] = true
		if q.IsLeaf() {
			leaves = append(leaves, n)
			return
		}
		for _, child := range q.Children {
			visit(child)
		}
	}
	visit(name)
	slices.Sort(leaves)
	return leaves
}

func setting(d *time.Duration) string {
	if d == nil {
		return "not set"
	}
	return d.String()
}
