package explain

import (
	"bytes"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// Fair share, as the scheduler's proportion plugin divides it in a cycle at Now: the numbers
// behind every "at or above its fair share" a job is told, read from the plugin itself
// (Session.QueueShare), so that an explanation cannot disagree with a cycle.

// shownOrder is the order resources are shown in: GPUs, what fair sharing is mostly about,
// first.
var shownOrder = [model.NumQuotaResources]model.ResourceName{model.GPU, model.CPU, model.Memory}

// explainQueueShare writes where queue name stands in the division: its settings and numbers
// per resource, what they let its jobs do, and how its parent's share was divided among it
// and its siblings.
func (c *Explainer) explainQueueShare(p *printer, ssn *framework.Session, name string) {
	share, ok := ssn.QueueShare(name)
	if !ok {
		return // an invalid queue, told above; or no proportion, told by the caller
	}
	q := c.Snapshot.Queues.Get(name)
	p.blank()
	p.line(0, "Fair share (this cycle's division; amounts as the Queue's spec counts them: GPU devices, CPU millicores, memory MB):")
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	// Into a bytes.Buffer, whose writes cannot fail.
	_, _ = fmt.Fprintln(tw, "resource\tquota\tlimit\tweight\trequested\tallocated\tdeserved\tfair share")
	for _, r := range shownOrder {
		policy := q.Resources[r]
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%g\t%s\t%s\t%s\t%s\n", model.QueueSpecKey(r), bound(r, policy.Quota), bound(r, policy.Limit), policy.OverQuotaWeight,
			model.FormatQueueNumber(r, share.Requested[r]), model.FormatQueueNumber(r, share.Allocated[r]),
			model.FormatQueueNumber(r, share.Deserved[r]), model.FormatQueueNumber(r, share.FairShare[r]))
	}
	_ = tw.Flush()
	for _, row := range strings.Split(strings.TrimRight(table.String(), "\n"), "\n") {
		p.line(1, "%s", row)
	}
	for _, r := range shownOrder {
		if share.Requested[r] > 0 || share.Allocated[r] > 0 || share.Deserved[r] > 0 {
			p.line(1, "%s: %s", model.QueueSpecKey(r), standing(share, r))
		}
	}
	c.explainSiblings(p, ssn, q, share)
}

// bound writes a quota or limit as its spec does: -1 is unlimited.
func bound(r model.ResourceName, v float64) string {
	if v < 0 {
		return "-1"
	}
	return model.FormatQueueNumber(r, v)
}

// standing says what a queue's holding, against its deserved quota and fair share, lets its
// jobs do and lets others do to it.
func standing(share model.QueueShare, r model.ResourceName) string {
	held, deserved, fair := share.Allocated[r], share.Deserved[r], share.FairShare[r]
	switch {
	case above(held, fair):
		return fmt.Sprintf("it holds %s above its fair share: a queue beside it within its own share may reclaim from it (down to its fair share, or to its deserved quota for a queue owed its own)",
			model.FormatQueueAmount(r, held-fair))
	case above(held, deserved):
		return fmt.Sprintf("it holds %s above its deserved quota, within its fair share: a queue beside it still owed its deserved quota may reclaim from it, down to its deserved quota",
			model.FormatQueueAmount(r, held-deserved))
	case above(deserved, held):
		return fmt.Sprintf("it is owed %s more of its deserved quota: a job of it that stays within that may reclaim from queues beside it that hold more than their own deserved quota",
			model.FormatQueueAmount(r, deserved-held))
	}
	return "it holds its deserved quota: no queue may reclaim from it, and it reclaims only within its fair share"
}

// explainSiblings says how the parent's share (the cluster, for a top-level queue) was
// divided among q and its siblings: their deserved quotas, and what was left over them, or
// that their quotas are over-subscribed. Resources no queue there deserves any of are left
// out.
func (c *Explainer) explainSiblings(p *printer, ssn *framework.Session, q *model.QueueInfo, share model.QueueShare) {
	tree := c.Snapshot.Queues
	var siblings []string
	for _, name := range tree.Names() {
		if other := tree.Get(name); other.Parent == q.Parent && other.IsValid() {
			siblings = append(siblings, name)
		}
	}
	who, whose := "the top-level queues", "the cluster's"
	if q.Parent != "" {
		who, whose = "the children of "+q.Parent, q.Parent+"'s fair share of"
	}
	for _, r := range shownOrder {
		var parts, unlimited []string
		owed := 0.0
		for _, name := range siblings {
			s, _ := ssn.QueueShare(name)
			owed += s.Deserved[r]
			parts = append(parts, fmt.Sprintf("%s %s", name, model.FormatQueueNumber(r, s.Deserved[r])))
			if quota := tree.Get(name).Resources[r].Quota; quota < 0 && s.Deserved[r] > 0 {
				unlimited = append(unlimited, name)
			}
		}
		if owed == 0 {
			continue
		}
		divided := share.Divided[r]
		p.line(1, "%s: %s share %s %s; they deserve %s in all (%s).", model.QueueSpecKey(r), who, whose,
			model.FormatQueueAmount(r, divided), model.FormatQueueNumber(r, owed), strings.Join(parts, ", "))
		if above(owed, divided) {
			p.line(2, "Their quotas are over-subscribed: each is still owed in full, none is reduced for another, and nothing is left over quota.")
			p.line(2, "A queue below its quota reclaims only from queues above theirs, and no reclaim takes a queue below its quota where it could take it back.")
		} else {
			p.line(2, "What is left over the quotas (%s) is shared by queue priority and over-quota weight among those that ask for more.", model.FormatQueueAmount(r, divided-owed))
		}
		if len(unlimited) > 0 && len(siblings) > 1 {
			p.line(2, "Quota -1 makes %s deserve all it asks, up to all there is to share, ahead of the over-quota share of every queue beside it.", strings.Join(unlimited, ", "))
		}
	}
}

// explainJobShare tells where a waiting job's queues stand for reclaim: at each level of its
// path, what the queue holds with the job's next request added, against its deserved quota
// and fair share. A job may reclaim only when some level stays within one of them, and then
// only from queues beside that level above theirs.
func (c *Explainer) explainJobShare(p *printer, ssn *framework.Session, job *model.JobInfo) {
	path := c.Snapshot.Queues.Ancestry(job.Queue)
	if len(path) == 0 {
		return
	}
	if _, ok := ssn.QueueShare(path[0]); !ok {
		return // no proportion plugin: nothing is divided
	}
	request := nextRequest(ssn, job)
	p.blank()
	p.line(0, "Fair share, for reclaim (each queue of its path, with this job's %s added):", describeRequest(request))
	within := ""
	for _, name := range path {
		share, _ := ssn.QueueShare(name)
		verdict := "within its deserved quota"
		for _, r := range shownOrder {
			if request.Get(r) == 0 {
				continue
			}
			with := share.Allocated[r] + float64(request.Get(r))
			p.line(1, "%s: %s: holds %s, with this job %s; deserved %s, fair share %s", name, model.QueueSpecKey(r),
				model.FormatQueueNumber(r, share.Allocated[r]), model.FormatQueueNumber(r, with),
				model.FormatQueueNumber(r, share.Deserved[r]), model.FormatQueueNumber(r, share.FairShare[r]))
			switch {
			case above(with, share.FairShare[r]):
				verdict = "above its fair share"
			case above(with, share.Deserved[r]) && verdict != "above its fair share":
				verdict = "within its fair share, above its deserved quota"
			}
		}
		p.line(2, "%s", verdict)
		if verdict != "above its fair share" && within == "" {
			within = name
		}
	}
	if within == "" {
		p.line(0, "At every level it would be above its fair share: reclaim takes nothing for it; it runs when free resources fit it.")
		return
	}
	p.line(0, "At %s it stays within its share: it may reclaim from the queues beside %s that hold more than theirs.", within, within)
}

// nextRequest is what a job asks for in its next turn: the rest of its gang, or one more pod
// once the gang runs.
func nextRequest(ssn *framework.Session, job *model.JobInfo) model.Resources {
	if !job.IsGangSatisfied() {
		if gang, err := job.GangPods(ssn.TaskOrder); err == nil {
			return model.Request(gang)
		}
	}
	if pending := job.PendingPods(); len(pending) > 0 {
		return pending[0].Request
	}
	return model.Resources{}
}

// describeRequest names a request by its quota resources, GPUs first.
func describeRequest(request model.Resources) string {
	var parts []string
	for _, r := range shownOrder {
		if v := request.Get(r); v > 0 {
			parts = append(parts, model.FormatQueueAmount(r, float64(v)))
		}
	}
	if len(parts) == 0 {
		return "request"
	}
	return strings.Join(parts, ", ")
}

// above reports a > b beyond floating-point noise.
func above(a, b float64) bool { return a > b+1e-9*max(1, b) }
