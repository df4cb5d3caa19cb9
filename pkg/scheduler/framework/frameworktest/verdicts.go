package frameworktest

import (
	"math/rand/v2"
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// CheckRememberedVerdicts drives a scenario filter that remembers its verdicts (newFilter
// gives a fresh one per sequence) through 200 random sequences of 30 steps — one pod of a
// victim added (half the time of the latest job), the latest unit removed, or one in the
// middle — and fails unless every verdict equals fromScratch's on the same scenario. The
// sequences must meet at least 100 scenarios allowed and 100 refused.
func CheckRememberedVerdicts(t *testing.T, preemptor *model.JobInfo, victims []*model.JobInfo,
	newFilter func() framework.ScenarioFilter, fromScratch func(*Scenario) framework.Status) {
	t.Helper()
	verdicts := map[bool]int{}
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 7))
		sc := &Scenario{Of: preemptor}
		f := newFilter()
		for step := range 30 {
			switch op := r.IntN(10); {
			case op < 6 || len(sc.Log) == 0:
				job := victims[r.IntN(len(victims))]
				if len(sc.Log) > 0 && r.IntN(2) == 0 {
					job = sc.Log[len(sc.Log)-1].Job
				}
				sc.Push(job, job.Pods[r.IntN(len(job.Pods))])
			case op < 9:
				sc.Remove(len(sc.Log) - 1)
			default:
				sc.Remove(r.IntN(len(sc.Log)))
			}
			got, want := f.Allows(sc), fromScratch(sc.Clone())
			verdicts[want.IsSuccess()]++
			if got.Code() != want.Code() || got.Reason() != want.Reason() {
				t.Fatalf("seed %d step %d (%d units): remembered verdict %v %q, from scratch %v %q",
					seed, step, len(sc.Log), got.Code(), got.Reason(), want.Code(), want.Reason())
			}
		}
	}
	if verdicts[true] < 100 || verdicts[false] < 100 {
		t.Fatalf("verdicts %v: the sequences must meet both allowed and refused scenarios", verdicts)
	}
}
