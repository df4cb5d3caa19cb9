package preempt

import (
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// The victim search ranks only prospects: a job no waiting job of its queue outranks can be
// no one's victim, whatever the plugins say.
func TestProspectsAreBelowAPreemptorOfTheirQueue(t *testing.T) {
	job := func(queue string, priority int32) *model.JobInfo {
		return &model.JobInfo{Queue: queue, Priority: priority}
	}
	prospect := rules{}.Prospects([]*model.JobInfo{job("a", 50), job("a", 90), job("b", 20)})
	for _, c := range []struct {
		victim *model.JobInfo
		want   bool
	}{
		{job("a", 10), true},
		{job("a", 89), true},
		{job("a", 90), false}, // equal priority never preempts
		{job("b", 10), true},
		{job("b", 20), false},
		{job("c", 0), false}, // nothing waits in c
	} {
		if got := prospect(c.victim); got != c.want {
			t.Errorf("queue %s priority %d: prospect %v, want %v", c.victim.Queue, c.victim.Priority, got, c.want)
		}
		// A prospect is exactly a job MayEvict allows to one of the preemptors.
		allowed := rules{}.MayEvict(job("a", 90), c.victim) || rules{}.MayEvict(job("b", 20), c.victim)
		if allowed != c.want {
			t.Errorf("queue %s priority %d: MayEvict says %v", c.victim.Queue, c.victim.Priority, allowed)
		}
	}
}
