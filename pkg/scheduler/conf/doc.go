// Package conf owns the scheduler configuration file: its KAI-Scheduler-compatible YAML format
// (a comma-separated list of actions and tiers of plugins with string arguments), loading and
// validating it against the actions and plugins this scheduler implements, the built-in default
// used when no file is given, and the duration syntax plugin arguments are written in.
//
// Configurations written for upstream KAI-Scheduler are meant to load unchanged: upstream names
// and keys this scheduler does not implement are skipped with a warning, while anything that is
// most likely a typo is an error naming the key path and the offending value.
//
// The package deliberately imports no other scheduler package; callers pass in the names they
// implement (Known).
package conf
