package victims

import (
	"slices"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// scenario is the plan under construction, as plugin filters see it: the preemptor and the
// victim pods chosen so far, grouped by job in the order jobs joined.
type scenario struct {
	preemptor *model.JobInfo
	jobs      []*model.JobInfo
	pods      map[model.JobID][]*model.PodInfo
	units     map[model.JobID][][]*model.PodInfo
	evicted   map[*model.PodInfo]bool
	// log holds every unit in joining order; seq numbers them over the scenario's life.
	log []framework.ScenarioUnit
	seq uint64
}

var _ framework.Scenario = &scenario{}

func newScenario(preemptor *model.JobInfo) *scenario {
	return &scenario{preemptor: preemptor, pods: map[model.JobID][]*model.PodInfo{},
		units: map[model.JobID][][]*model.PodInfo{}, evicted: map[*model.PodInfo]bool{}}
}

func (s *scenario) Preemptor() *model.JobInfo                      { return s.preemptor }
func (s *scenario) VictimJobs() []*model.JobInfo                   { return s.jobs }
func (s *scenario) VictimPods(job model.JobID) []*model.PodInfo    { return s.pods[job] }
func (s *scenario) VictimUnits(job model.JobID) [][]*model.PodInfo { return s.units[job] }
func (s *scenario) Units() []framework.ScenarioUnit                { return s.log }
func (s *scenario) isEvicted(p *model.PodInfo) bool                { return s.evicted[p] }
func (s *scenario) hasJob(id model.JobID) bool                     { _, ok := s.pods[id]; return ok }
func (s *scenario) filterLive(pods []*model.PodInfo) []*model.PodInfo {
	var live []*model.PodInfo
	for _, p := range pods {
		if !s.evicted[p] && isEvictable(p) {
			live = append(live, p)
		}
	}
	return live
}

// addUnit puts the unit's live pods into the plan: those running and not already in it (a
// whole gang's surplus pods chosen before it). It lists them against the plan as it stands,
// so a plan rebuilt without some units relists what the rest take. It returns them and an
// undo function.
func (s *scenario) addUnit(u *unit) (live []*model.PodInfo, undo func()) {
	live = s.filterLive(u.pods)
	return live, s.add(u.job, live)
}

// add puts pods into the plan and returns an undo function.
func (s *scenario) add(job *model.JobInfo, pods []*model.PodInfo) (undo func()) {
	newJob := !s.hasJob(job.ID)
	if newJob {
		s.jobs = append(s.jobs, job)
	}
	before := len(s.pods[job.ID])
	s.pods[job.ID] = append(s.pods[job.ID], pods...)
	s.units[job.ID] = append(s.units[job.ID], pods)
	for _, p := range pods {
		s.evicted[p] = true
	}
	s.seq++
	seq := s.seq
	s.log = append(s.log, framework.ScenarioUnit{Job: job, Pods: pods, Seq: seq})
	return func() {
		for _, p := range pods {
			delete(s.evicted, p)
		}
		if last := len(s.log) - 1; last >= 0 && s.log[last].Seq == seq {
			s.log = s.log[:last] // the common case: undone in reverse order
		} else {
			s.log = slices.DeleteFunc(s.log, func(u framework.ScenarioUnit) bool { return u.Seq == seq })
		}
		s.pods[job.ID] = s.pods[job.ID][:before]
		s.units[job.ID] = s.units[job.ID][:len(s.units[job.ID])-1]
		if newJob {
			delete(s.pods, job.ID)
			delete(s.units, job.ID)
			s.jobs = s.jobs[:len(s.jobs)-1]
		}
	}
}

// victims lists the planned pods, job by job in joining order.
func (s *scenario) victims() []*model.PodInfo {
	var all []*model.PodInfo
	for _, j := range s.jobs {
		all = append(all, s.pods[j.ID]...)
	}
	return all
}
