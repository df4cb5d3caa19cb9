package scheduler

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions/allocate"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions/consolidation"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions/preempt"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions/reclaim"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions/stalegang"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/conf"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/plugins"
)

// actionFactories lists the actions this scheduler implements, by configuration name.
// Each is given the validated configuration, for the settings it reads.
var actionFactories = map[framework.ActionType]func(*conf.Config) framework.Action{
	framework.Allocate: func(*conf.Config) framework.Action { return allocate.New() },
	framework.Reclaim:  func(*conf.Config) framework.Action { return reclaim.New() },
	framework.Preempt:  func(*conf.Config) framework.Action { return preempt.New() },
	framework.Consolidation: func(*conf.Config) framework.Action {
		return consolidation.New()
	},
	framework.StaleGangEviction: func(cfg *conf.Config) framework.Action {
		return stalegang.New(cfg.DefaultStalenessGracePeriod)
	},
}

// actionNeeds are the plugins an action cannot run safely without.
var actionNeeds = map[string]conf.Need{
	string(framework.Reclaim): {Plugin: "proportion", Why: "its fair shares decide which queue may take from which; " +
		"without them jobs of different queues would evict each other in turn"},
}

// Policy is what a configuration file decides: which actions run, in which order, and which
// plugins give them policy.
type Policy struct {
	Actions []framework.Action
	Plugins []framework.Plugin
}

// SetMaxConsolidationPreemptees sets how many jobs the consolidation action, if configured,
// may move in a cycle (the --max-consolidation-preemptees flag); 0 turns it off.
func (p *Policy) SetMaxConsolidationPreemptees(n int) {
	for _, action := range p.Actions {
		if c, ok := action.(*consolidation.Action); ok {
			c.SetMaxMovedJobs(n)
		}
	}
}

// ActionSettings names each action in order, with the settings it runs with when it can say
// them: "stalegangeviction (globalDefaultStalenessGracePeriod=1m0s)".
func (p *Policy) ActionSettings() []string {
	names := make([]string, 0, len(p.Actions))
	for _, action := range p.Actions {
		name := string(action.Name())
		if d, ok := action.(framework.Describer); ok {
			name += " (" + strings.Join(d.Settings(), " ") + ")"
		}
		names = append(names, name)
	}
	return names
}

// PluginSettings names each plugin in order, with the settings it runs with (defaults
// included) when it can say them: "minruntime: defaultPreemptMinRuntime=0s ...".
func (p *Policy) PluginSettings() []string {
	lines := make([]string, 0, len(p.Plugins))
	for _, plugin := range p.Plugins {
		line := plugin.Name()
		if d, ok := plugin.(framework.Describer); ok {
			line += ": " + strings.Join(d.Settings(), " ")
		}
		lines = append(lines, line)
	}
	return lines
}

// Known returns the action and plugin names a configuration may use.
func Known(registry *framework.Registry) conf.Known {
	known := conf.Known{Plugins: registry.Names(), CheckArguments: registry.CheckArguments, Needs: actionNeeds}
	for name := range actionFactories {
		known.Actions = append(known.Actions, string(name))
	}
	sort.Strings(known.Actions)
	return known
}

// NewPolicy builds the actions and plugins of a validated configuration. Plugin argument
// errors surface here, at startup.
func NewPolicy(cfg *conf.Config, registry *framework.Registry) (*Policy, error) {
	policy := &Policy{}
	var errs []error
	for _, name := range cfg.Actions {
		factory, ok := actionFactories[framework.ActionType(name)]
		if !ok {
			errs = append(errs, fmt.Errorf("action %q is not implemented", name))
			continue
		}
		policy.Actions = append(policy.Actions, factory(cfg))
	}
	built, err := registry.Build(cfg.Plugins())
	if err != nil {
		errs = append(errs, err)
	}
	policy.Plugins = built
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return policy, nil
}

// LoadPolicy reads a configuration (the built-in default when data is nil) and builds its
// policy with every plugin of this scheduler. Warnings report settings that are accepted but
// have no effect.
func LoadPolicy(data []byte) (*Policy, []string, error) {
	registry := plugins.NewRegistry()
	var cfg *conf.Config
	var warnings []string
	var err error
	if data == nil {
		cfg, err = conf.Default(Known(registry))
	} else {
		cfg, warnings, err = conf.Load(data, Known(registry))
	}
	if err != nil {
		return nil, warnings, err
	}
	policy, err := NewPolicy(cfg, registry)
	return policy, warnings, err
}
