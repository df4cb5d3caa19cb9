// Command kai-sim runs the real scheduler over virtual time on a scenario file of ordinary
// manifests and reports what happened. Without a file it runs the built-in scenario twice,
// without and with min-runtime, and compares the two.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions/consolidation"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
	"github.com/kai-minruntime/kai-scheduler/pkg/version"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	flags := pflag.NewFlagSet("kai-sim", pflag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.Usage = func() {
		fmt.Fprintln(stderr, "Usage: kai-sim [flags] [SCENARIO.yaml]\n\nWithout a scenario, runs the built-in comparison of min-runtime off and on.\n\nFlags:")
		flags.PrintDefaults()
	}
	config := flags.String("scheduler-conf", "", "Scheduler configuration file (same format as kai-scheduler); built-in default otherwise.")
	until := flags.Duration("until", 0, "Virtual time limit (default: until nothing more can happen; 10h for the built-in scenario).")
	period := flags.Duration("schedule-period", time.Second, "Time between scheduling cycles.")
	output := flags.String("output", "text", "Output format: text or json.")
	poolKey := flags.String("nodepool-label-key", scheduling.NodePoolLabel, "Label that assigns Nodes, Queues and PodGroups to node pools, as kai-scheduler's flag: one scheduler runs per pool. Empty runs one scheduler for everything.")
	poolConfs := flags.StringArray("pool-conf", nil, "POOL=FILE: the scheduler configuration of one node pool (repeatable); pools without one run --scheduler-conf.")
	compare := flags.String("compare", "", "Also run the scenario under this scheduler configuration, and compare the two runs side by side (table, JSON, plot).")
	compareScenario := flags.String("compare-scenario", "", "Also run this other scenario (the same cluster with other queue settings, say) under the same configuration, and compare the two runs side by side.")
	plot := flags.String("plot", "", "Also write a chart of GPUs per queue over time, with evictions marked, to this SVG file.")
	arrivals := flags.StringArray("arrivals", nil, "FILE of PodGroups and Pods submitted at or after the start, merged into the scenario (repeatable).")
	repeatPending := flags.String("repeat-pending", "", "N/DURATION (6/h, 1/30m): submit copies of the scenario's pending jobs at this rate, in turn, up to --until.")
	maxMoved := flags.Int("max-consolidation-preemptees", consolidation.DefaultMaxMovedJobs, "Jobs the consolidation action, if configured, may move in a cycle, as kai-scheduler's flag; 0 turns it off.")
	showVersion := flags.Bool("version", false, "Print the version, the commit and the Go that built the binary, and exit.")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		// pflag leaves the message to the caller when it does not exit itself.
		fmt.Fprintf(stderr, "kai-sim: %v\nRun 'kai-sim --help' for usage.\n", err)
		return 2
	}
	if *showVersion {
		fmt.Fprintln(stdout, version.Line("kai-sim"))
		return 0
	}
	// Every mistake at once: fixing one flag only to be told of the next wastes a run.
	var mistakes []string
	if *period <= 0 {
		mistakes = append(mistakes, fmt.Sprintf("--schedule-period: must be positive, got %s", *period))
	}
	if *until < 0 {
		mistakes = append(mistakes, fmt.Sprintf("--until: must not be negative, got %s", *until))
	}
	if *maxMoved < 0 {
		mistakes = append(mistakes, fmt.Sprintf("--max-consolidation-preemptees: must be 0 or more, got %d", *maxMoved))
	}
	if *output != "text" && *output != "json" {
		mistakes = append(mistakes, fmt.Sprintf("--output: must be text or json, got %q", *output))
	}
	if flags.NArg() > 1 {
		mistakes = append(mistakes, fmt.Sprintf("at most one scenario file, got %d", flags.NArg()))
	}
	poolFiles := map[string]string{}
	for _, value := range *poolConfs {
		pool, file, ok := strings.Cut(value, "=")
		switch {
		case !ok || pool == "" || file == "":
			mistakes = append(mistakes, fmt.Sprintf("--pool-conf: want POOL=FILE, got %q", value))
		case poolFiles[pool] != "":
			mistakes = append(mistakes, fmt.Sprintf("--pool-conf: pool %q is given twice (%s and %s)", pool, poolFiles[pool], file))
		default:
			poolFiles[pool] = file
		}
	}
	if len(poolFiles) > 0 && *poolKey == "" {
		mistakes = append(mistakes, "--pool-conf: needs --nodepool-label-key, which is empty")
	}
	additions := input.Additions{Until: *until, NodePoolLabelKey: *poolKey}
	if *repeatPending != "" {
		rate, err := input.ParseRate(*repeatPending)
		additions.Repeat = rate
		if err != nil {
			mistakes = append(mistakes, "--repeat-pending: "+err.Error())
		}
		if *until == 0 {
			mistakes = append(mistakes, "--repeat-pending: needs --until, or copies would be submitted forever")
		}
	}
	if *compare != "" && *compareScenario != "" {
		mistakes = append(mistakes, "--compare and --compare-scenario: give one (a comparison has two runs)")
	}
	if *compareScenario != "" && flags.NArg() == 0 {
		mistakes = append(mistakes, "--compare-scenario compares with a scenario file, and none is given")
	}
	if (len(*arrivals) > 0 || *repeatPending != "") && flags.NArg() == 0 {
		mistakes = append(mistakes, "--arrivals and --repeat-pending add jobs to a scenario file, and none is given")
	}
	if len(mistakes) > 0 {
		for _, m := range mistakes {
			printError(stderr, "", errors.New(m))
		}
		return 2
	}
	// Checked before the scenario is read, as kai-scheduler checks its configuration before
	// it connects: what a configuration asks for that this scheduler does not do must not
	// go unseen.
	configData, ok := loadConfig(stderr, *config)
	poolData := map[string][]byte{}
	for _, pool := range slices.Sorted(maps.Keys(poolFiles)) {
		data, loaded := loadConfig(stderr, poolFiles[pool])
		poolData[pool], ok = data, ok && loaded
	}
	var other *variant
	if *compare != "" {
		data, loaded := loadConfig(stderr, *compare)
		other, ok = &variant{name: *compare, config: data}, ok && loaded
	}
	if !ok {
		return 1
	}
	var err error
	if flags.NArg() == 0 {
		err = runBuiltin(stdout, *config != "" || len(poolFiles) > 0 || other != nil, *until, *output, *plot)
	} else {
		current := variant{name: *config, config: configData}
		if current.name == "" {
			current.name = "built-in configuration"
		}
		opts := sim.Options{Until: *until, Period: *period, NodePoolLabelKey: *poolKey, PoolConfigs: poolData, MaxConsolidationPreemptees: maxMoved}
		err = runFile(stdout, flags.Arg(0), *arrivals, additions, opts, current, comparison{config: other, scenario: *compareScenario}, *output, *plot)
	}
	if err != nil {
		printError(stderr, "", err)
		return 1
	}
	return 0
}

// printError prints an error as kai-sim prints every error, each of its lines (one a mistake,
// when several are told at once) starting with "kai-sim: " and then context, if any.
func printError(stderr io.Writer, context string, err error) {
	for line := range strings.Lines(err.Error()) {
		fmt.Fprintln(stderr, "kai-sim: "+context+strings.TrimSuffix(line, "\n"))
	}
}

// readFile reads an input file; its error names the file by what it is to kai-sim:
// "scenario today.yaml: no such file or directory".
func readFile(what, path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	return data, fileError(what, err)
}

// fileError names the file an operating system error is about by what it is to kai-sim,
// rather than by the call that failed ("open today.yaml: ...").
func fileError(what string, err error) error {
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		return fmt.Errorf("%s %s: %w", what, pathErr.Path, pathErr.Err)
	}
	return err
}

// loadConfig reads a scheduler configuration file (none: nil, the built-in default) and
// checks it as kai-scheduler would, naming the file in its warnings and errors.
func loadConfig(stderr io.Writer, path string) ([]byte, bool) {
	if path == "" {
		return nil, true
	}
	data, err := readFile("scheduler configuration", path)
	if err != nil {
		printError(stderr, "", err)
		return nil, false
	}
	_, warnings, err := scheduler.LoadPolicy(data)
	for _, w := range warnings {
		fmt.Fprintf(stderr, "kai-sim: warning: %s: %s\n", path, w)
	}
	if err != nil {
		// Each of several mistakes on a line of its own, each naming the file.
		printError(stderr, "scheduler configuration "+path+": ", err)
		return nil, false
	}
	return data, true
}

// variant is a scheduler configuration a scenario runs under, named by its file.
type variant struct {
	name   string
	config []byte
}

// comparison is what a scenario file's run is compared with: the same scenario under another
// configuration, or another scenario under the same one; neither for a single run.
type comparison struct {
	config   *variant
	scenario string
}

// runFile runs a scenario file, with the jobs of its arrivals files and repeats added, under
// the current configuration, and compares it as asked.
func runFile(stdout io.Writer, path string, arrivalsFiles []string, additions input.Additions, opts sim.Options,
	current variant, compare comparison, output, plot string) error {
	for _, name := range arrivalsFiles {
		data, err := readFile("arrivals file", name)
		if err != nil {
			return err
		}
		additions.Arrivals = append(additions.Arrivals, input.File{Name: name, Data: data})
	}
	load := func(path string) (*input.Scenario, string, error) {
		data, err := readFile("scenario", path)
		if err != nil {
			return nil, "", err
		}
		return input.Load(input.File{Name: path, Data: data}, additions)
	}
	sc, description, err := load(path)
	if err != nil {
		return err
	}
	// A text with added jobs says so first: its tables count them with the scenario's.
	intro := ""
	if len(additions.Arrivals) > 0 || additions.Repeat.Count > 0 {
		intro = "Scenario: " + description + "\n\n"
	}
	if compare.config != nil || compare.scenario != "" {
		second := path
		var variants []report.Variant
		var heading string
		if compare.config != nil {
			variants = []report.Variant{{Name: current.name, Config: current.config}, {Name: compare.config.name, Config: compare.config.config}}
			heading = fmt.Sprintf("%s under %s and %s.", path, current.name, compare.config.name)
		} else {
			second = compare.scenario
			variants = []report.Variant{{Name: path, Config: current.config}, {Name: second, Config: current.config}}
			heading = fmt.Sprintf("%s and %s under %s.", path, second, current.name)
		}
		// The second run reads its own scenario, even from the same file (see CompareScenarios).
		other, _, err := load(second)
		if err != nil {
			return err
		}
		variants, err = sim.CompareScenarios(context.Background(), []*input.Scenario{sc, other}, opts, variants)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return writeVariants(stdout, variants, output, plot, intro+heading)
	}
	opts.Config = current.config
	result, err := sim.Run(context.Background(), sc, opts)
	if err != nil {
		return err
	}
	if plot != "" {
		if err := writePlot(plot, []report.Variant{{Name: path, Config: opts.Config, Result: result}}); err != nil {
			return err
		}
	}
	if output == "json" {
		return report.WriteJSON(stdout, result)
	}
	fmt.Fprint(stdout, intro)
	return report.WriteText(stdout, result)
}

func runBuiltin(stdout io.Writer, configGiven bool, until time.Duration, output, plot string) error {
	if configGiven {
		return errors.New("--scheduler-conf, --pool-conf and --compare need a scenario file; the built-in comparison brings its own configurations")
	}
	if until == 0 {
		until = sim.BuiltinUntil
	}
	variants, err := sim.Compare(context.Background(), input.BuiltinScenario(), sim.Options{Until: until}, sim.BuiltinVariants())
	if err != nil {
		return err
	}
	return writeVariants(stdout, variants, output, plot,
		fmt.Sprintf("Built-in scenario: research borrows idle GPUs, prod reclaims them in bursts (%s).", until))
}

// writeVariants writes the runs of a comparison: the side-by-side table after a heading, or
// {"variants": [{"name", "result"}]} as JSON; and the plot of all runs on one time axis.
func writeVariants(stdout io.Writer, variants []report.Variant, output, plot, heading string) error {
	if plot != "" {
		if err := writePlot(plot, variants); err != nil {
			return err
		}
	}
	if output == "json" {
		type named struct {
			Name   string         `json:"name"`
			Result *report.Result `json:"result"`
		}
		out := struct {
			Variants []named `json:"variants"`
		}{}
		for _, v := range variants {
			out.Variants = append(out.Variants, named{Name: v.Name, Result: v.Result})
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Fprintf(stdout, "%s\n\n", heading)
	return report.WriteComparison(stdout, variants)
}

func writePlot(path string, variants []report.Variant) error {
	f, err := os.Create(path)
	if err != nil {
		return fileError("--plot", err)
	}
	if err := report.WritePlot(f, variants); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
