package framework

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/conf"
)

// Arguments are a plugin's settings from the configuration file.
type Arguments map[string]string

// PluginFactory builds a plugin from its arguments. It validates them and returns an error
// naming the bad argument and value; the scheduler refuses to start rather than run with a
// silent default.
type PluginFactory func(args Arguments) (Plugin, error)

// Registry maps plugin names to factories. It is a value built by a function at startup (see
// the plugins package), never a global.
type Registry struct {
	factories map[string]PluginFactory
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{factories: map[string]PluginFactory{}}
}

// Register adds a factory; a second factory for one name is an error.
func (r *Registry) Register(name string, factory PluginFactory) error {
	if _, dup := r.factories[name]; dup {
		return fmt.Errorf("plugin %q is registered twice", name)
	}
	r.factories[name] = factory
	return nil
}

// Names returns the registered names, sorted.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.factories))
	for name := range r.factories {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// CheckArguments reports what a registered plugin's factory finds wrong with its arguments;
// nil for a name that is not registered (the configuration's loader reports those).
func (r *Registry) CheckArguments(name string, args map[string]string) error {
	factory, ok := r.factories[name]
	if !ok {
		return nil
	}
	_, err := factory(Arguments(args))
	return err
}

// Build constructs the configured plugins in configuration order. All argument errors are
// reported together, each prefixed with the plugin's name.
func (r *Registry) Build(options []conf.PluginOption) ([]Plugin, error) {
	var plugins []Plugin
	var errs []error
	for _, option := range options {
		factory, ok := r.factories[option.Name]
		if !ok {
			errs = append(errs, fmt.Errorf("plugin %q is not registered (known: %s)", option.Name, strings.Join(r.Names(), ", ")))
			continue
		}
		plugin, err := factory(Arguments(option.Arguments))
		if err != nil {
			errs = append(errs, fmt.Errorf("plugin %s: %w", option.Name, err))
			continue
		}
		plugins = append(plugins, plugin)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return plugins, nil
}

// RejectArguments is the argument check of a plugin that takes none: any argument is a
// mistake worth a startup error (a typo, or a setting meant for another plugin).
func RejectArguments(args Arguments) error {
	if len(args) == 0 {
		return nil
	}
	keys := slices.Sorted(maps.Keys(args))
	return fmt.Errorf("takes no arguments, got %s", strings.Join(keys, ", "))
}
