package frameworktest

import (
	"slices"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
)

// Scenario is a framework.Scenario built as the victim search builds one: units pushed one
// at a time and removed, mostly the latest first, each numbered once.
type Scenario struct {
	Of  *api.JobInfo
	Log []framework.ScenarioUnit
	seq uint64
}

var _ framework.Scenario = &Scenario{}

// Push adds a unit of job's pods.
func (s *Scenario) Push(job *api.JobInfo, pods ...*api.PodInfo) {
	s.seq++
	s.Log = append(s.Log, framework.ScenarioUnit{Job: job, Pods: pods, Seq: s.seq})
}

// Remove takes out the k-th unit.
func (s *Scenario) Remove(k int) { s.Log = slices.Delete(s.Log, k, k+1) }

// Clone is the same scenario, to be judged by a filter that never saw this one.
func (s *Scenario) Clone() *Scenario {
	return &Scenario{Of: s.Of, Log: slices.Clone(s.Log), seq: s.seq}
}

func (s *Scenario) Preemptor() *api.JobInfo         { return s.Of }
func (s *Scenario) Units() []framework.ScenarioUnit { return s.Log }

func (s *Scenario) VictimJobs() []*api.JobInfo {
	var jobs []*api.JobInfo
	for _, u := range s.Log {
		if !slices.Contains(jobs, u.Job) {
			jobs = append(jobs, u.Job)
		}
	}
	return jobs
}

func (s *Scenario) VictimUnits(job api.JobID) [][]*api.PodInfo {
	var units [][]*api.PodInfo
	for _, u := range s.Log {
		if u.Job.ID == job {
			units = append(units, u.Pods)
		}
	}
	return units
}

func (s *Scenario) VictimPods(job api.JobID) []*api.PodInfo {
	var pods []*api.PodInfo
	for _, u := range s.VictimUnits(job) {
		pods = append(pods, u...)
	}
	return pods
}
