package minruntime

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework/frameworktest"
)

// The filter keeps the latest scenario it allowed and judges only the jobs of units added
// since. Its verdicts must always equal those of a filter that never saw the scenario
// before, whatever sequence of additions and removals the search makes.
func TestElasticFilterRemembersOnlyWhatStillStands(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	started := now.Add(-10 * time.Minute)
	protect := time.Hour
	queues := []*api.QueueInfo{{Name: "owner"}, {Name: "borrower", ReclaimMinRuntime: &protect}}
	for _, q := range queues {
		for r := range q.Resources {
			q.Resources[r] = api.QueueResourceShare{Quota: api.Unlimited, OverQuotaWeight: 1, Limit: api.Unlimited}
		}
	}
	node := &api.NodeInfo{Name: "n1", Allocatable: api.NewResources(0, 0, 64).With(api.Pods, 110)}
	var jobs []*api.JobInfo
	for i, minMember := range []int32{1, 2, 3, 2, 4} {
		j := &api.JobInfo{ID: api.NewJobID("ns", fmt.Sprint("v", i)), Namespace: "ns", Name: fmt.Sprint("v", i),
			Queue: "borrower", MinMember: minMember, Preemptible: true, LastStartTimestamp: &started}
		for k := range 4 {
			j.AddPod(&api.PodInfo{Namespace: "ns", Name: fmt.Sprintf("v%d-%d", i, k), Job: j.ID, Status: api.Running,
				NodeName: "n1", Request: api.NewResources(0, 0, 1).With(api.Pods, 1), StartTime: &started})
		}
		jobs = append(jobs, j)
	}
	preemptor := &api.JobInfo{ID: "ns/p", Namespace: "ns", Name: "p", Queue: "owner", MinMember: 1}
	snapshot, err := api.NewSnapshot([]*api.NodeInfo{node}, append(jobs, preemptor), queues)
	if err != nil {
		t.Fatal(err)
	}
	ssn := framework.OpenSession(context.Background(), framework.SessionOptions{Snapshot: snapshot, Clock: clocktesting.NewFakePassiveClock(now)})
	s := newSession(ssn, Defaults{}, LCA)
	verdicts := map[bool]int{}
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 11))
		sc := &frameworktest.Scenario{Of: preemptor}
		f := &elasticFilter{s: s, action: framework.Reclaim}
		for step := range 30 {
			switch op := r.IntN(10); {
			case op < 6 || len(sc.Log) == 0:
				job := jobs[r.IntN(len(jobs))]
				sc.Push(job, job.Pods[r.IntN(len(job.Pods))])
			case op < 9:
				sc.Remove(len(sc.Log) - 1)
			default:
				sc.Remove(r.IntN(len(sc.Log)))
			}
			gotOK, gotReason := f.Allows(sc)
			wantOK, wantReason := (&elasticFilter{s: s, action: framework.Reclaim}).Allows(sc.Clone())
			verdicts[wantOK]++
			if gotOK != wantOK || gotReason != wantReason {
				t.Fatalf("seed %d step %d (%d units): remembered verdict %v %q, from scratch %v %q",
					seed, step, len(sc.Log), gotOK, gotReason, wantOK, wantReason)
			}
		}
	}
	if verdicts[true] < 100 || verdicts[false] < 100 {
		t.Fatalf("verdicts %v: the sequences must exercise both allowed and refused scenarios", verdicts)
	}
}
