package conf

import "time"

// SchedulerConfiguration is the configuration file as written, in the upstream KAI-Scheduler
// format. Load does not decode into it directly (it walks the document to name every bad key),
// but it is the type to marshal when a configuration has to be generated, for example in tests.
type SchedulerConfiguration struct {
	// Actions is one comma-separated string, e.g. "allocate, reclaim, preempt", run in order.
	Actions string `json:"actions"`
	Tiers   []Tier `json:"tiers"`
	// GlobalDefaultStalenessGracePeriod is a duration such as "60s"; empty means upstream's
	// default (see Config.DefaultStalenessGracePeriod).
	GlobalDefaultStalenessGracePeriod string `json:"globalDefaultStalenessGracePeriod,omitempty"`
}

// Tier is one group of plugins. Plugins keep their file order across tiers.
type Tier struct {
	Plugins []PluginOption `json:"plugins"`
}

// PluginOption enables one plugin. Arguments are plain strings because that is what upstream
// KAI-Scheduler accepts; each plugin parses its own (see ParseDuration).
type PluginOption struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
}

// Config is a validated configuration: only actions and plugins this scheduler implements
// remain, in file order.
type Config struct {
	// Actions are the trimmed action names in the order the scheduler runs them.
	Actions []string
	Tiers   []Tier
	// DefaultStalenessGracePeriod is how long a running job may stay below its minimum
	// before stalegangeviction evicts it, for jobs that set no period of their own; negative
	// never evicts them.
	DefaultStalenessGracePeriod time.Duration
}

// Plugins returns the plugins of all tiers flattened, in file order.
func (c *Config) Plugins() []PluginOption {
	var plugins []PluginOption
	for _, tier := range c.Tiers {
		plugins = append(plugins, tier.Plugins...)
	}
	return plugins
}

// Known lists the action and plugin names this scheduler implements. The caller supplies it so
// that this package does not depend on the packages that register them.
type Known struct {
	Actions []string
	Plugins []string
	// CheckArguments, when set, validates a known plugin's arguments while the file is
	// loaded, so that their mistakes are reported with every other one, under the entry's
	// path; a plugin's factory is the one judge of its arguments.
	CheckArguments func(plugin string, args map[string]string) error
	// Needs names, per action, a plugin the action cannot run safely without. A
	// configuration that lists the action but not the plugin loads, the action skipped
	// with a warning that says why.
	Needs map[string]Need
}

// Need is a plugin an action depends on, and what would go wrong without it.
type Need struct {
	Plugin, Why string
}
