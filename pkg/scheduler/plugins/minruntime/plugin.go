package minruntime

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/conf"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
)

// Name is the plugin's name in the scheduler configuration.
const Name = "minruntime"

// The plugin's arguments.
const (
	ArgDefaultPreemptMinRuntime = "defaultPreemptMinRuntime"
	ArgDefaultReclaimMinRuntime = "defaultReclaimMinRuntime"
	ArgReclaimResolveMethod     = "reclaimResolveMethod"
)

// Plugin holds the validated arguments; everything per cycle lives in a session value.
type Plugin struct {
	defaults   Defaults
	method     ResolveMethod
	escalation Escalation
}

var _ framework.Plugin = &Plugin{}

// New validates the arguments: durations must be non-negative (units up to w, for weeks) and
// the resolve method lca or queue. A bad value is an error naming the argument, so the
// scheduler refuses to start instead of silently protecting nothing.
func New(args framework.Arguments) (framework.Plugin, error) {
	p := &Plugin{method: LCA}
	var errs []error
	var factor, ceiling *string
	for _, key := range slices.Sorted(maps.Keys(args)) {
		value := args[key]
		var err error
		switch key {
		case ArgDefaultPreemptMinRuntime:
			p.defaults.Preempt, err = conf.ParseNonNegativeDuration(key, value)
		case ArgDefaultReclaimMinRuntime:
			p.defaults.Reclaim, err = conf.ParseNonNegativeDuration(key, value)
		case ArgReclaimResolveMethod:
			switch ResolveMethod(value) {
			case LCA, Queue:
				p.method = ResolveMethod(value)
			default:
				err = fmt.Errorf("%s: must be %q or %q, got %q", key, LCA, Queue, value)
			}
		case ArgEscalationFactor:
			factor = &value
		case ArgEscalationCeiling:
			ceiling = &value
		default:
			err = fmt.Errorf("unknown argument %q (known: %s)", key, strings.Join(knownArgs, ", "))
		}
		errs = append(errs, err) // every bad argument at once
	}
	var err error
	p.escalation, err = parseEscalation(factor, ceiling)
	if err = errors.Join(append(errs, err)...); err != nil {
		return nil, err
	}
	return p, nil
}

var knownArgs = []string{ArgDefaultPreemptMinRuntime, ArgDefaultReclaimMinRuntime, ArgReclaimResolveMethod,
	ArgEscalationFactor, ArgEscalationCeiling}

// Name is the plugin's name.
func (p *Plugin) Name() string { return Name }

// Defaults are the node-pool level values the arguments set.
func (p *Plugin) Defaults() Defaults { return p.defaults }

// Settings are the arguments in effect, those left out at their defaults; escalation only
// when it is on.
func (p *Plugin) Settings() []string {
	settings := []string{
		ArgDefaultPreemptMinRuntime + "=" + p.defaults.Preempt.String(),
		ArgDefaultReclaimMinRuntime + "=" + p.defaults.Reclaim.String(),
		ArgReclaimResolveMethod + "=" + string(p.method),
	}
	if !p.escalation.Off() {
		settings = append(settings, ArgEscalationFactor+"="+strconv.FormatFloat(p.escalation.Factor, 'f', -1, 64),
			ArgEscalationCeiling+"="+p.escalation.Ceiling.String())
	}
	return settings
}

// Escalation is how the arguments lengthen the protection of jobs evicted before.
func (p *Plugin) Escalation() Escalation { return p.escalation }

var _ framework.Describer = &Plugin{}

// Method is the reclaim resolve method the arguments chose.
func (p *Plugin) Method() ResolveMethod { return p.method }

// OnSessionOpen registers the hooks of this cycle, backed by caches that end with it.
func (p *Plugin) OnSessionOpen(ssn *framework.Session) {
	s := newSession(ssn, p.defaults, p.method, p.escalation)
	ssn.AddIsPreemptibleFn(Name, s.isPreemptible)
	ssn.AddMayEvictForFn(Name, s.mayEvictFor)
	ssn.AddScenarioFiltersFn(Name, s.scenarioFilters)
	ssn.AddEvictionNoteFn(Name, s.evictionNote)
	ssn.AddProtectionFn(Name, s.jobProtection)
	s.reportProtected()
}

// OnSessionClose has nothing to release: the session value goes with the hooks.
func (p *Plugin) OnSessionClose(*framework.Session) {}
