package frameworktest

import (
	"slices"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// Scenario is a framework.Scenario built as the victim search builds one: units pushed one
// at a time and removed, mostly the latest first, each numbered once.
type Scenario struct {
	Of  *model.JobInfo
	Log []framework.ScenarioUnit
	seq uint64
}

var _ framework.Scenario = &Scenario{}

// Push adds a unit of job's pods.
func (s *Scenario) Push(job *model.JobInfo, pods ...*model.PodInfo) {
	s.seq++
	s.Log = append(s.Log, framework.ScenarioUnit{Job: job, Pods: pods, Seq: s.seq})
}

// Remove takes out the k-th unit.
func (s *Scenario) Remove(k int) { s.Log = slices.Delete(s.Log, k, k+1) }

// Clone is the same scenario, to be judged by a filter that never saw this one.
func (s *Scenario) Clone() *Scenario {
	return &Scenario{Of: s.Of, Log: slices.Clone(s.Log), seq: s.seq}
}

func (s *Scenario) Preemptor() *model.JobInfo       { return s.Of }
func (s *Scenario) Units() []framework.ScenarioUnit { return s.Log }

func (s *Scenario) VictimJobs() []*model.JobInfo {
	var jobs []*model.JobInfo
	for _, u := range s.Log {
		if !slices.Contains(jobs, u.Job) {
			jobs = append(jobs, u.Job)
		}
	}
	return jobs
}

func (s *Scenario) VictimUnits(job model.JobID) [][]*model.PodInfo {
	var units [][]*model.PodInfo
	for _, u := range s.Log {
		if u.Job.ID == job {
			units = append(units, u.Pods)
		}
	}
	return units
}

func (s *Scenario) VictimPods(job model.JobID) []*model.PodInfo {
	var pods []*model.PodInfo
	for _, u := range s.VictimUnits(job) {
		pods = append(pods, u...)
	}
	return pods
}
