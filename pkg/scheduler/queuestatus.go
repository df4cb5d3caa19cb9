package scheduler

import (
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/status"
)

// queueReports sums, for every queue and its ancestors, what the snapshot's pods hold and
// want after a cycle, with the queue's children and validity and where the cycle's fair-share
// division put it (shares): the Queue status operators read with kubectl get queues.
func queueReports(s *model.Snapshot, shares map[string]model.QueueShare) map[string]status.QueueReport {
	reports := map[string]status.QueueReport{}
	for _, name := range s.Queues.Names() {
		q := s.Queues.Get(name)
		r := status.QueueReport{Children: q.Children, Problem: q.Problem}
		if share, ok := shares[name]; ok {
			r.Share = &share
		}
		reports[name] = r
	}
	for _, job := range s.Jobs {
		var held, heldNonPreemptible, wanted model.Resources
		for _, p := range job.Pods {
			if p.Status.IsActive() {
				held = held.Add(p.Request)
			}
			if p.Status != model.Succeeded && p.Status != model.Failed {
				wanted = wanted.Add(p.Request)
			}
		}
		if !job.Preemptible {
			heldNonPreemptible = held
		}
		for _, name := range s.Queues.Ancestry(job.Queue) {
			r := reports[name]
			r.Allocated = r.Allocated.Add(held)
			r.AllocatedNonPreemptible = r.AllocatedNonPreemptible.Add(heldNonPreemptible)
			r.Requested = r.Requested.Add(wanted)
			reports[name] = r
		}
	}
	return reports
}
