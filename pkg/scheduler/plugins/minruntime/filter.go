package minruntime

import (
	"fmt"
	"slices"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// elasticFilter rejects a candidate set of victims that would take a protected elastic job
// below its minimum, overall or in a sub-group the evictions touch. Surplus pods stay
// evictable, and a sub-group still waiting for its own pods does not shield the others. It
// looks only at the jobs of the scenario at hand, so a rejected set never affects the next
// one.
//
// The search asks after every unit it adds. Fewer evictions never break a minimum, so what
// remains of a scenario the filter allowed is allowed still, and only the jobs of the units
// added since need judging: a plan of V victims costs V job checks, not V squared.
type elasticFilter struct {
	s      *session
	action framework.ActionType
	// allowedSeqs are the units of the latest scenario found allowed.
	allowedSeqs []uint64
}

var _ framework.ScenarioFilter = &elasticFilter{}

func (f *elasticFilter) Name() string { return Name }

func (f *elasticFilter) Allows(sc framework.Scenario) framework.Status {
	units := sc.Units()
	k := framework.StandingPrefix(units, len(f.allowedSeqs), func(i int) uint64 { return f.allowedSeqs[i] })
	// The jobs to judge, in the order the scenario lists them (the first refused names the
	// reason): all of them, or only those of the units added since the latest allowed
	// scenario — usually one, judged without walking the others.
	jobs := sc.VictimJobs()
	if k > 0 {
		var touched []*model.JobInfo
		for _, u := range units[k:] {
			if !slices.Contains(touched, u.Job) {
				touched = append(touched, u.Job)
			}
		}
		if len(touched) > 1 {
			touched = slices.DeleteFunc(slices.Clone(jobs), func(j *model.JobInfo) bool { return !slices.Contains(touched, j) })
		}
		jobs = touched
	}
	for _, victim := range jobs {
		if st := f.judge(sc, victim); !st.IsSuccess() {
			f.allowedSeqs = f.allowedSeqs[:0]
			return st
		}
	}
	f.allowedSeqs = f.allowedSeqs[:k] // the prefix still stands; add what joined since
	for _, u := range units[k:] {
		f.allowedSeqs = append(f.allowedSeqs, u.Seq)
	}
	return framework.Status{}
}

// judge checks one victim job: a protected elastic job may lose pods only down to its
// minimums.
func (f *elasticFilter) judge(sc framework.Scenario, victim *model.JobInfo) framework.Status {
	if !IsElastic(victim) {
		return framework.Status{}
	}
	prot := f.s.protectionOf(f.action, sc.Preemptor(), victim)
	if !prot.holds(f.s.ssn.Now()) {
		return framework.Status{}
	}
	guard := victim.NewMinimumGuard()
	for _, p := range sc.VictimPods(victim.ID) {
		if short := guard.Shortfall(p); short.Breaks() {
			f.s.block(f.action, sc.Preemptor(), prot)
			return framework.NewStatus(framework.Unschedulable, fmt.Sprintf("job %s is protected until %s: these evictions would leave %s",
				victim.ID, model.FormatEnd(prot.until), short))
		}
		guard.Lose(p)
	}
	return framework.Status{}
}
