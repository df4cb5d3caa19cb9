package conf

import (
	_ "embed"
	"fmt"
	"strings"
)

// defaultYAML is a string, not a []byte, so that no caller can modify the embedded default.
//
//go:embed default-config.yaml
var defaultYAML string

// DefaultYAML returns the built-in default configuration file, e.g. to print or to write out
// as a starting point.
func DefaultYAML() []byte {
	return []byte(defaultYAML)
}

// Default loads the built-in configuration used when no file is given. The default must only
// name actions and plugins this scheduler implements, so any warning is a bug and an error.
func Default(known Known) (*Config, error) {
	config, warnings, err := Load([]byte(defaultYAML), known)
	if err != nil {
		return nil, fmt.Errorf("built-in default configuration: %w", err)
	}
	if len(warnings) > 0 {
		return nil, fmt.Errorf("built-in default configuration: unexpected warnings: %s", strings.Join(warnings, "; "))
	}
	return config, nil
}
