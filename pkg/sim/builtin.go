package sim

import (
	"context"
	_ "embed"
	"fmt"
	"time"
)

//go:embed builtin/borrowing.yaml
var builtinScenario []byte

// BuiltinScenario is the scenario kai-sim runs without arguments.
func BuiltinScenario() []byte { return append([]byte(nil), builtinScenario...) }

// BuiltinUntil is how long the built-in scenario runs.
const BuiltinUntil = 10 * time.Hour

// BuiltinMinRuntime is the reclaim min-runtime the built-in comparison turns on: startup
// plus one checkpoint of the training jobs, with a little margin.
const BuiltinMinRuntime = 45 * time.Minute

// Variant is one configuration of a comparison and its result.
type Variant struct {
	Name   string
	Config []byte
	Result *Result
}

// Compare runs a scenario once per configuration: with opts, each variant's Config in place
// of opts.Config.
func Compare(ctx context.Context, scenario []byte, opts Options, variants []Variant) ([]Variant, error) {
	return CompareScenarios(ctx, func() (*Scenario, error) { return Parse(scenario) }, opts, variants)
}

// CompareScenarios is Compare for a scenario load builds, such as one with arrivals (Load):
// each run gets a scenario of its own, so no run sees what another did with its objects.
func CompareScenarios(ctx context.Context, load func() (*Scenario, error), opts Options, variants []Variant) ([]Variant, error) {
	for i := range variants {
		sc, err := load()
		if err != nil {
			return nil, err
		}
		run := opts
		run.Config = variants[i].Config
		result, err := Run(ctx, sc, run)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", variants[i].Name, err)
		}
		variants[i].Result = result
	}
	return variants, nil
}

// BuiltinVariants are the two configurations of the built-in comparison.
func BuiltinVariants() []Variant {
	with := `actions: "allocate, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: proportion
  - name: minruntime
    arguments: {defaultReclaimMinRuntime: "` + BuiltinMinRuntime.String() + `"}
  - name: predicates
  - name: nodeplacement
`
	return []Variant{
		{Name: "without min-runtime"},
		{Name: "reclaimMinRuntime " + BuiltinMinRuntime.String(), Config: []byte(with)},
	}
}
