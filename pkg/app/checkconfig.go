package app

import (
	"fmt"
	"io"
	"strings"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler"
)

// CheckConfig writes what the scheduler would make of a configuration file (the built-in
// default when path is empty): the actions it would run, the plugins with the settings they
// would run with, what it would ignore and what it would refuse. It returns false when the
// scheduler would refuse to start. Nothing connects to a cluster: an operator can check a
// ConfigMap's content, upstream's included, before rolling it out. maxMoved is the
// --max-consolidation-preemptees the scheduler would run with.
func CheckConfig(w io.Writer, path string, maxMoved int) bool {
	source := path
	if source == "" {
		source = "the built-in default"
	}
	fmt.Fprintf(w, "Scheduler configuration: %s\n", source)
	// Loaded as LoadPolicy loads it, without its prefix naming the file: named above.
	data, err := readConfig(path)
	var policy *scheduler.Policy
	var warnings []string
	if err == nil {
		policy, warnings, err = scheduler.LoadPolicy(data)
	}
	if policy != nil {
		policy.SetMaxConsolidationPreemptees(maxMoved)
	}
	if len(warnings) > 0 {
		fmt.Fprintln(w, "\nIgnored or defaulted:")
		for _, warning := range warnings {
			fmt.Fprintf(w, "  %s\n", warning)
		}
	}
	if err != nil {
		fmt.Fprintln(w, "\nRefused:")
		for _, line := range strings.Split(err.Error(), "\n") { // one mistake a line
			fmt.Fprintf(w, "  %s\n", line)
		}
		fmt.Fprintln(w, "\nkai-scheduler would not start with this configuration.")
		return false
	}
	fmt.Fprintf(w, "\nActions, in order: %s\n", strings.Join(policy.ActionSettings(), ", "))
	fmt.Fprintln(w, "Plugins, in order:")
	if len(policy.Plugins) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, line := range policy.PluginSettings() {
		fmt.Fprintln(w, "  "+line)
	}
	fmt.Fprintln(w, "\nkai-scheduler would start with this configuration.")
	return true
}
