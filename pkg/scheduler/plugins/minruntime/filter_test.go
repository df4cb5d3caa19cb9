package minruntime

import (
	"context"
	"fmt"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework/frameworktest"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// The filter keeps the latest scenario it allowed and judges only the jobs of units added
// since. Its verdicts must always equal those of a filter that never saw the scenario
// before, whatever sequence of additions and removals the search makes.
func TestElasticFilterRemembersOnlyWhatStillStands(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	started := now.Add(-10 * time.Minute)
	protect := time.Hour
	queues := []*model.QueueInfo{{Name: "owner"}, {Name: "borrower", ReclaimMinRuntime: &protect}}
	for _, q := range queues {
		for r := range q.Resources {
			q.Resources[r] = model.QueueResourceShare{Quota: model.Unlimited, OverQuotaWeight: 1, Limit: model.Unlimited}
		}
	}
	node := &model.NodeInfo{Name: "n1", Allocatable: model.NewResources(0, 0, 64).With(model.Pods, 110)}
	var jobs []*model.JobInfo
	for i, minMember := range []int32{1, 2, 3, 2, 4} {
		j := &model.JobInfo{ID: model.NewJobID("ns", fmt.Sprint("v", i)), Namespace: "ns", Name: fmt.Sprint("v", i),
			Queue: "borrower", MinMember: minMember, Preemptible: true, LastStartTimestamp: &started}
		for k := range 4 {
			j.AddPod(&model.PodInfo{Namespace: "ns", Name: fmt.Sprintf("v%d-%d", i, k), Job: j.ID, Status: model.Running,
				NodeName: "n1", Request: model.NewResources(0, 0, 1).With(model.Pods, 1), StartTime: &started})
		}
		jobs = append(jobs, j)
	}
	preemptor := &model.JobInfo{ID: "ns/p", Namespace: "ns", Name: "p", Queue: "owner", MinMember: 1}
	snapshot, err := model.NewSnapshot([]*model.NodeInfo{node}, append(jobs, preemptor), queues)
	if err != nil {
		t.Fatal(err)
	}
	ssn := framework.OpenSession(context.Background(), framework.SessionOptions{Snapshot: snapshot, Clock: clocktesting.NewFakePassiveClock(now)})
	s := newSession(ssn, Defaults{}, LCA, Escalation{})
	frameworktest.CheckRememberedVerdicts(t, preemptor, jobs,
		func() framework.ScenarioFilter { return &elasticFilter{s: s, action: framework.Reclaim} },
		func(sc *frameworktest.Scenario) framework.Status {
			return (&elasticFilter{s: s, action: framework.Reclaim}).Allows(sc)
		})
}
