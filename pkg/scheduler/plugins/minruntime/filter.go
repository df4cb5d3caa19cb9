package minruntime

import (
	"fmt"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
)

// elasticFilter rejects a candidate set of victims that would take a protected elastic job
// below its minimum, overall or in a sub-group the evictions touch. Surplus pods stay
// evictable, and a sub-group still waiting for its own pods does not shield the others. It
// looks only at the jobs of the scenario at hand, so a rejected set never affects the next
// one.
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
		guard := victim.NewMinimumGuard()
		for _, p := range sc.VictimPods(victim.ID) {
			if group, left, minimum := guard.Shortfall(p); group != "" {
				f.s.noteWait(f.action, sc.Preemptor(), until)
				f.s.refuse(f.action, sc.Preemptor(), victim)
				return false, fmt.Sprintf("job %s is protected until %s: these evictions would leave %d pods where its %s needs %d",
					victim.ID, until.UTC().Format(time.RFC3339), left, group, minimum)
			}
			guard.Lose(p)
		}
	}
	return true, ""
}
