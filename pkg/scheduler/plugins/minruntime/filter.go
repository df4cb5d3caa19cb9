package minruntime

import (
	"fmt"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
)

// elasticFilter rejects a candidate set of victims that would take a protected elastic job
// below its minimum, overall or in any sub-group. Surplus pods stay evictable. It looks only
// at the jobs of the scenario at hand, so a rejected set never affects the next one.
type elasticFilter struct {
	s      *session
	action framework.ActionType
}

var _ framework.ScenarioFilter = &elasticFilter{}

func (f *elasticFilter) Name() string { return Name }

func (f *elasticFilter) Allows(sc framework.Scenario) (bool, string) {
	for _, victim := range sc.VictimJobs() {
		if !IsElastic(victim) {
			continue
		}
		until, protected := f.s.protectedUntil(f.action, sc.Preemptor(), victim)
		if !protected {
			continue
		}
		if group, left, minimum := belowMinimum(victim, sc.VictimPods(victim.ID)); group != "" {
			f.s.noteWait(f.action, sc.Preemptor(), until)
			return false, fmt.Sprintf("job %s is protected until %s: these evictions would leave %d pods where its %s needs %d",
				victim.ID, until.UTC().Format(time.RFC3339), left, group, minimum)
		}
	}
	return true, ""
}

// belowMinimum checks what would be left of the job after evicting pods. It names the first
// group ("gang", or a sub-group) that would fall short, with what would be left of it and
// its minimum; an empty name means nothing falls short.
func belowMinimum(job *api.JobInfo, evicted []*api.PodInfo) (string, int32, int32) {
	leaving := make(map[*api.PodInfo]bool, len(evicted))
	for _, p := range evicted {
		leaving[p] = true
	}
	var left int32
	perSubGroup := map[string]int32{}
	for _, p := range job.Pods {
		if p.Status.IsActive() && !leaving[p] {
			left++
			perSubGroup[p.SubGroup]++
		}
	}
	if left < job.MinMember {
		return "gang", left, job.MinMember
	}
	for _, sg := range job.SubGroups {
		if perSubGroup[sg.Name] < sg.MinMember {
			return "sub-group " + sg.Name, perSubGroup[sg.Name], sg.MinMember
		}
	}
	return "", 0, 0
}
