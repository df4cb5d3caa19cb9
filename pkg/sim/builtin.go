package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// BuiltinUntil is how long the built-in comparison runs input.BuiltinScenario.
const BuiltinUntil = 10 * time.Hour

// BuiltinMinRuntime is the reclaim min-runtime the built-in comparison turns on: startup
// plus one checkpoint of the training jobs, with a little margin.
const BuiltinMinRuntime = 45 * time.Minute

// Compare runs a scenario once per configuration: with opts, each variant's Config in place
// of opts.Config.
func Compare(ctx context.Context, scenario []byte, opts Options, variants []report.Variant) ([]report.Variant, error) {
	scenarios := make([]*input.Scenario, len(variants))
	for i := range variants {
		sc, err := input.Parse(scenario)
		if err != nil {
			return nil, err
		}
		scenarios[i] = sc
	}
	return CompareScenarios(ctx, scenarios, opts, variants)
}

// CompareScenarios runs scenarios[i] under variants[i]'s Config. Each run needs a scenario
// of its own, even when they are read from one file: a run changes the objects it is given.
func CompareScenarios(ctx context.Context, scenarios []*input.Scenario, opts Options, variants []report.Variant) ([]report.Variant, error) {
	if len(scenarios) != len(variants) {
		return nil, fmt.Errorf("%d scenarios for %d variants", len(scenarios), len(variants))
	}
	for i, sc := range scenarios {
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
func BuiltinVariants() []report.Variant {
	return []report.Variant{
		{Name: "without min-runtime"},
		{Name: "reclaimMinRuntime " + BuiltinMinRuntime.String(),
			Config: ComparisonConfig(`defaultReclaimMinRuntime: "`+BuiltinMinRuntime.String()+`"`, true)},
	}
}

// ComparisonConfig is the scheduler configuration the built-in comparison runs, with the
// minruntime plugin given these arguments (the body of a YAML flow map; "" for none), or
// left out when withMinRuntime is false, so that no queue's min-runtime applies either.
func ComparisonConfig(arguments string, withMinRuntime bool) []byte {
	plugin := ""
	if withMinRuntime {
		plugin = "  - name: minruntime\n"
		if arguments != "" {
			plugin += "    arguments: {" + arguments + "}\n"
		}
	}
	return []byte("actions: \"allocate, reclaim, preempt\"\ntiers:\n- plugins:\n  - name: priority\n  - name: proportion\n" +
		plugin + "  - name: predicates\n  - name: nodeplacement\n")
}
