package proportion

import (
	"strings"
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework/frameworktest"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// The filter's remembered verdicts must always equal a verdict from scratch (the rule as
// written, job by job), whatever sequence of additions and undos the search makes —
// including units joining an earlier job, which the filter cannot judge incrementally.
func TestReclaimFilterRemembersOnlyWhatStillStands(t *testing.T) {
	gpu := model.NewResources(0, 0, 1)
	var nodes []*model.NodeInfo
	for _, name := range []string{"n1", "n2", "n3"} {
		nodes = append(nodes, &model.NodeInfo{Name: name, Allocatable: model.NewResources(0, 0, 8)})
	}
	queues := []*model.QueueInfo{gpuQueue("d1", "", 12, 1, -1), gpuQueue("d2", "", 12, 1, -1),
		gpuQueue("a", "d1", 8, 1, -1), gpuQueue("b", "d2", 2, 1, -1), gpuQueue("c", "d2", 2, 1, -1)}
	job := func(name, queue string, pods int, running bool) *model.JobInfo {
		j := &model.JobInfo{ID: model.NewJobID("ns", name), Namespace: "ns", Name: name, Queue: queue, MinMember: 1, Preemptible: true}
		for k := range pods {
			p := &model.PodInfo{Namespace: "ns", Name: name + "-" + string(rune('0'+k)), Job: j.ID, Request: gpu, Status: model.Pending}
			if running {
				p.Status, p.NodeName = model.Running, nodes[k%len(nodes)].Name
			}
			j.AddPod(p)
		}
		return j
	}
	var jobs []*model.JobInfo
	for i, q := range []string{"b", "b", "c", "b", "c", "c", "b", "b"} {
		jobs = append(jobs, job(strings.Repeat("v", i+1), q, 3, true))
	}
	jobs = append(jobs, job("reclaimer", "a", 8, false))
	jobs[len(jobs)-1].MinMember = 8
	snapshot, err := model.NewSnapshot(nodes, jobs, queues)
	if err != nil {
		t.Fatal(err)
	}
	byName := func(l, r *model.PodInfo) int { return strings.Compare(l.Name, r.Name) }
	st := newShareState(snapshot, byName)
	preemptor := snapshot.Job("ns/reclaimer")
	var victims []*model.JobInfo
	for _, j := range snapshot.Jobs {
		if j != preemptor {
			victims = append(victims, j)
		}
	}
	frameworktest.CheckRememberedVerdicts(t, preemptor, victims,
		func() framework.ScenarioFilter { return newReclaimFilter(st, preemptor, byName) },
		func(sc *frameworktest.Scenario) framework.Status {
			if len(sc.Log) == 0 {
				return newReclaimFilter(st, preemptor, byName).Allows(sc)
			}
			return newReclaimFilter(st, preemptor, byName).judgeAll(sc)
		})
}
