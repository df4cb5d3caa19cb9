// Command scalecompare prints, as a Markdown table, the scale suite's results of two
// schedulers side by side: every run of each (a results directory of make scale), the mean,
// and the ratio of the first's mean to the second's, per scenario and figure.
//
//	go run ./hack/scalecompare -a _output/scale/old-r1-500,_output/scale/old-r2-500 \
//	    -b _output/scale/new-r1-500,_output/scale/new-r2-500
//
// Times are judged as ratios: the same machine, runs taken in turn.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/kai-minruntime/kai-scheduler/test/scale"
)

// result is what the suite wrote for one scenario.
type result = scale.Result

// row is one figure of one scenario: how to read it from a result, and whether it is shown
// with the ratio (times) or as it is.
type row struct {
	name  string
	read  func(r *result) (float64, bool)
	ratio bool
}

func main() {
	a := flag.String("a", "", "comma-separated results directories of the first scheduler")
	b := flag.String("b", "", "comma-separated results directories of the second")
	flag.Parse()
	if *a == "" || *b == "" {
		fmt.Fprintln(os.Stderr, "scalecompare: -a and -b are both required")
		os.Exit(2)
	}
	runsA, err := load(strings.Split(*a, ","))
	if err == nil {
		var runsB []map[string]*result
		if runsB, err = load(strings.Split(*b, ",")); err == nil {
			printTable(os.Stdout, runsA, runsB)
			return
		}
	}
	fmt.Fprintln(os.Stderr, "scalecompare:", err)
	os.Exit(1)
}

// load reads every scenario result of each directory.
func load(dirs []string) ([]map[string]*result, error) {
	var runs []map[string]*result
	for _, dir := range dirs {
		run, err := scale.ReadResults(dir)
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	return runs, nil
}

func printTable(w io.Writer, a, b []map[string]*result) {
	var scenarios []string
	for _, run := range append(slices.Clone(a), b...) {
		for s := range run {
			if !slices.Contains(scenarios, s) {
				scenarios = append(scenarios, s)
			}
		}
	}
	slices.Sort(scenarios)
	label := func(runs []map[string]*result) string {
		for _, run := range runs {
			for _, r := range run {
				return r.Label
			}
		}
		return "?"
	}
	fmt.Fprintf(w, "| scenario | figure | %s | %s | ratio |\n|---|---|---:|---:|---:|\n", label(a), label(b))
	for _, s := range scenarios {
		for _, rw := range rows(s, a, b) {
			va, ma := values(a, s, rw)
			vb, mb := values(b, s, rw)
			if va == "" && vb == "" {
				continue
			}
			ratio := ""
			if rw.ratio && ma > 0 && mb > 0 {
				ratio = fmt.Sprintf("%.2f×", ma/mb)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", s, rw.name, va, vb, ratio)
		}
	}
}

// rows are the figures shown for a scenario: its own (headline first), then what every
// scenario measures.
func rows(scenario string, runs ...[]map[string]*result) []row {
	var names []string
	headline := ""
	for _, rs := range runs {
		for _, run := range rs {
			if r := run[scenario]; r != nil {
				headline = r.Headline
				for n := range r.Figures {
					if !slices.Contains(names, n) {
						names = append(names, n)
					}
				}
			}
		}
	}
	slices.SortFunc(names, func(x, y string) int {
		switch {
		case x == headline:
			return -1
		case y == headline:
			return 1
		}
		return strings.Compare(x, y)
	})
	var out []row
	for _, n := range names {
		out = append(out, row{name: n + " (s)", ratio: true, read: func(r *result) (float64, bool) { v, ok := r.Figures[n]; return v, ok }})
	}
	return append(out,
		row{name: "API requests per pod", ratio: true, read: func(r *result) (float64, bool) { return r.APIRequestsPerPod, true }},
		row{name: "peak RSS (MB)", ratio: true, read: func(r *result) (float64, bool) { return r.PeakRSSMB, true }},
		row{name: "shutdown (s)", read: func(r *result) (float64, bool) { return r.ShutdownSeconds, true }},
		row{name: "unwritten at shutdown", read: func(r *result) (float64, bool) { return float64(r.UnwrittenAtShutdown), true }},
		row{name: "stamp lag p99 (s)", read: func(r *result) (float64, bool) { return r.Writes.StampLag.P99, true }},
		row{name: "never stamped", read: func(r *result) (float64, bool) { return float64(r.Writes.Unstamped), true }},
		row{name: "status writes given up", read: func(r *result) (float64, bool) { return r.StatusWritesGivenUp, true }},
		row{name: "expiry → eviction p99 (s)", read: func(r *result) (float64, bool) {
			return r.Writes.EvictionLag.P99, r.Writes.EvictionLag.N > 0
		}},
	)
}

// values renders a figure of every run ("a, b (mean m)") and returns the mean.
func values(runs []map[string]*result, scenario string, rw row) (string, float64) {
	var vs []string
	sum, n := 0.0, 0
	for _, run := range runs {
		r := run[scenario]
		if r == nil {
			continue
		}
		if v, ok := rw.read(r); ok {
			vs = append(vs, trim(v))
			sum += v
			n++
		}
	}
	if n == 0 {
		return "", 0
	}
	mean := sum / float64(n)
	if n == 1 {
		return vs[0], mean
	}
	return fmt.Sprintf("%s (mean %s)", strings.Join(vs, ", "), trim(mean)), mean
}

func trim(v float64) string {
	if v >= 100 || v == float64(int64(v)) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
