package minruntime

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/conf"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// Escalation lengthens the protection of a job the scheduler has already evicted: each run
// it lost (JobInfo.Evictions, kept in the PodGroup's status where its owner cannot raise it)
// multiplies its min-runtimes by Factor, up to Ceiling. A job that keeps being evicted before
// it saves its work is given longer to save it each time, where a fixed min-runtime would
// take the same loss again and again; the ceiling bounds what any run can hold against
// others, so that no job becomes protected for good and every owner still gets its quota
// within the longest protection it meets. See docs/minruntime.md for the rule's numbers.
//
// A min-runtime of 0s stays 0s (escalation never protects what the operator left open), and
// one already at or above the ceiling is left as it is (escalation never shortens).
type Escalation struct {
	// Factor multiplies the min-runtime once per eviction; 1 is off.
	Factor float64
	// Ceiling is the longest an escalated min-runtime may become.
	Ceiling time.Duration
	// FactorSetBy and CeilingSetBy name the queues whose annotations set Factor and Ceiling
	// (see For); empty for the plugin's arguments.
	FactorSetBy, CeilingSetBy string
	// NoCeiling is set when a queue's factor above 1 found no ceiling above 0s, on its path
	// or in the plugin's arguments: escalation is then off for its jobs, so that none is
	// protected for good, and explain says why.
	NoCeiling bool
}

// For is the escalation of the jobs of queue: each setting from the nearest queue up its
// ancestry whose annotation sets it (kai.scheduler/escalation-factor, -ceiling), else the
// plugin's arguments (e). An unknown or invalid queue gets e.
func (e Escalation) For(tree *model.QueueTree, queue string) Escalation {
	own := e
	factorSet, ceilingSet := false, false
	ancestry := tree.Ancestry(queue)
	for i := len(ancestry) - 1; i >= 0 && (!factorSet || !ceilingSet); i-- {
		q := tree.Get(ancestry[i])
		if q.EscalationFactor != nil && !factorSet {
			own.Factor, own.FactorSetBy, factorSet = *q.EscalationFactor, q.Name, true
		}
		if q.EscalationCeiling != nil && !ceilingSet {
			own.Ceiling, own.CeilingSetBy, ceilingSet = *q.EscalationCeiling, q.Name, true
		}
	}
	if !own.Off() && own.Ceiling <= 0 {
		own.Factor, own.NoCeiling = 1, true
	}
	return own
}

// The plugin's escalation arguments.
const (
	ArgEscalationFactor  = "escalationFactor"
	ArgEscalationCeiling = "escalationCeiling"
)

// Off reports whether escalation changes nothing.
func (e Escalation) Off() bool { return e.Factor <= 1 }

// Escalate is r lengthened for a job evicted evictions times.
func (e Escalation) Escalate(r Resolution, evictions int32) Resolution {
	if e.Off() || evictions <= 0 || r.Duration <= 0 || r.Duration >= e.Ceiling {
		return r
	}
	escalated := e.Ceiling
	if d := float64(r.Duration) * math.Pow(e.Factor, float64(evictions)); d < float64(e.Ceiling) {
		escalated = max(r.Duration, time.Duration(d).Round(time.Second)) // read by people
	}
	r.EscalatedFrom, r.Duration = r.Duration, escalated
	return r
}

// EscalateLevels is Escalate for each of a job's reclaim levels: levels itself (shared between
// the queue's jobs) when nothing changes, else a copy.
func (e Escalation) EscalateLevels(levels []model.ReclaimLevel, evictions int32) []model.ReclaimLevel {
	if e.Off() || evictions <= 0 {
		return levels
	}
	own := make([]model.ReclaimLevel, len(levels))
	for i, l := range levels {
		own[i] = model.ReclaimLevel{Outside: l.Outside, MinRuntime: e.Escalate(l.MinRuntime, evictions)}
	}
	return own
}

// Describe says the rule for people: "×2 per eviction, up to 4h0m0s", with the queues that
// set either when a queue's annotation did.
func (e Escalation) Describe() string {
	by := func(queue string) string {
		if queue == "" {
			return ""
		}
		return " (queue " + queue + ")"
	}
	switch {
	case e.NoCeiling:
		return "off: the factor" + by(e.FactorSetBy) + " has no ceiling above 0s on the queue's path or in the plugin's arguments"
	case e.Off():
		return "off" + by(e.FactorSetBy)
	}
	return fmt.Sprintf("×%s per eviction%s, up to %s%s", strconv.FormatFloat(e.Factor, 'f', -1, 64), by(e.FactorSetBy), e.Ceiling, by(e.CeilingSetBy))
}

// parseEscalation validates the escalation arguments together: a factor above 1 needs a
// ceiling (no job may become protected for good), and a ceiling without a factor would do
// nothing, which the operator who set it should hear about.
func parseEscalation(factor, ceiling *string) (Escalation, error) {
	e := Escalation{Factor: 1}
	if factor != nil {
		f, err := scheduling.ParseEscalationFactor(ArgEscalationFactor, *factor)
		if err != nil {
			return e, err
		}
		e.Factor = f
	}
	if ceiling != nil {
		d, err := conf.ParseNonNegativeDuration(ArgEscalationCeiling, *ceiling)
		if err != nil {
			return e, err
		}
		e.Ceiling = d
	}
	switch {
	case !e.Off() && e.Ceiling <= 0:
		return e, fmt.Errorf("%s: %s of %s needs a ceiling above 0s, so that no job is ever protected for good",
			ArgEscalationCeiling, ArgEscalationFactor, *factor)
	case e.Off() && ceiling != nil:
		return e, fmt.Errorf("%s: has no effect without %s above 1", ArgEscalationCeiling, ArgEscalationFactor)
	}
	return e, nil
}
