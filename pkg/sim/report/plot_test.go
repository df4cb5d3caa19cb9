package report_test

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// Two runs of different lengths share one time axis, their queues keep one colour each,
// and four pods evicted in the same moment show as one bar counting 4, not as one mark.
func TestPlotComparesRunsOnOneAxisAndCountsEveryEviction(t *testing.T) {
	short := &report.Result{
		Queues: []string{"prod", "research"},
		Series: []report.Sample{{Time: 0, GPUs: map[string]float64{"research": 8}}, {Time: 1800, GPUs: map[string]float64{"prod": 8}}},
		Events: []report.Event{{Time: 1800, Type: report.EventEvict}, {Time: 1800, Type: report.EventEvict},
			{Time: 1800, Type: report.EventEvict}, {Time: 1800, Type: report.EventEvict}},
		Totals: report.Totals{SimulatedSeconds: 3600},
	}
	long := &report.Result{
		Queues: []string{"research", "prod"}, // another order: colours must still match
		Series: []report.Sample{{Time: 0, GPUs: map[string]float64{"research": 8}}},
		Totals: report.Totals{SimulatedSeconds: 7200},
	}
	var out bytes.Buffer
	if err := report.WritePlot(&out, []report.Variant{{Name: "short", Result: short}, {Name: "long", Result: long}}); err != nil {
		t.Fatal(err)
	}
	svg := out.String()

	// Both panels end their time axis at 2h, the longer run's end.
	if got := strings.Count(svg, `text-anchor="middle">2h</text>`); got != 2 {
		t.Errorf("the 2h tick appears on %d time axes, want both", got)
	}
	// Research is orange in both panels (the legend's second colour), prod blue.
	if strings.Count(svg, `<polygon fill="#ff7f0e"`) != 2 || strings.Count(svg, `<polygon fill="#1f77b4"`) != 2 {
		t.Errorf("queues change colour between panels:\n%s", svg)
	}
	if !strings.Contains(svg, "short: 4 evictions") || !strings.Contains(svg, "long: 0 evictions") {
		t.Error("the panel titles do not count the evictions")
	}
	if bars := strings.Count(svg, `fill="red"/>`); bars != 2 { // the legend's swatch and one bar
		t.Errorf("%d red bars and swatches, want the legend's and one bar for the four evictions", bars)
	}
	if !strings.Contains(svg, `font-size="10">4</text>`) {
		t.Error("the bar of four simultaneous evictions does not say 4")
	}
}

// Time ticks read as durations at every scale.
func TestPlotTimeLabels(t *testing.T) {
	for _, tt := range []struct {
		span float64
		want []string
	}{
		{90, []string{">0s<", ">10s<", ">1m30s<"}},
		{5400, []string{">30m<", ">1h<", ">1h30m<"}},
		{4 * 3600, []string{">1h<", ">4h<"}},
	} {
		r := &report.Result{Queues: []string{"q"}, Series: []report.Sample{{GPUs: map[string]float64{"q": 1}}},
			Events: []report.Event{{Time: tt.span, Type: report.EventEvict}}, Totals: report.Totals{SimulatedSeconds: tt.span}}
		var out bytes.Buffer
		if err := report.WritePlot(&out, []report.Variant{{Name: "run", Result: r}}); err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("span %vs: no tick %s", tt.span, w)
			}
		}
		// An eviction at the run's very end is drawn inside the axis, not past it.
		if strings.Contains(out.String(), `<rect x="880`) {
			t.Errorf("span %vs: an eviction bar starts at the axis end", tt.span)
		}
	}
}

// Counts of one read in the singular wherever a run is told: "1 victims" and "1 evictions"
// once did not.
func TestCountsOfOneAreSingular(t *testing.T) {
	r := &report.Result{
		Queues: []string{"q"},
		Series: []report.Sample{{GPUs: map[string]float64{"q": 1}}},
		Events: []report.Event{{Time: 60, Type: report.EventEvict, PodGroup: "ns/j", Queue: "q", Node: "n0", Action: "reclaim"}},
		Totals: report.Totals{SimulatedSeconds: 120, Evictions: 1, ProtectedRefusals: 1, DelayedJobs: 1},
	}
	var text, svg bytes.Buffer
	if err := report.WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	if err := report.WritePlot(&svg, []report.Variant{{Name: "run", Result: r}}); err != nil {
		t.Fatal(err)
	}
	if want := "(1 victim refused while protected by min-runtime; 1 job held back by the preemption delay)"; !strings.Contains(text.String(), want) {
		t.Errorf("the summary lacks %q:\n%s", want, text.String())
	}
	if !strings.Contains(svg.String(), ">run: 1 eviction</text>") {
		t.Errorf("the panel title does not say 1 eviction:\n%s", svg.String())
	}
}

// The cluster's GPU capacity is a labelled line over the bands, stepping where it changes:
// the room between it and the bands is the idle GPUs, which a plot of bands alone hides.
func TestPlotDrawsTheCapacityLine(t *testing.T) {
	r := &report.Result{
		Queues: []string{"q"},
		Series: []report.Sample{{Time: 0, GPUs: map[string]float64{"q": 2}, Capacity: 8}, {Time: 1800, GPUs: map[string]float64{"q": 2}, Capacity: 4}},
		Totals: report.Totals{SimulatedSeconds: 3600},
	}
	var out bytes.Buffer
	if err := report.WritePlot(&out, []report.Variant{{Name: "run", Result: r}}); err != nil {
		t.Fatal(err)
	}
	svg := out.String()
	// The line, found by its colour, steps down once, halfway along the time axis.
	line := regexp.MustCompile(`<path fill="none" stroke="#333" stroke-width="2" d="M70\.0 ([0-9.]+) H475\.0 V([0-9.]+) H880\.0"/>`).FindStringSubmatch(svg)
	if line == nil {
		t.Fatalf("no capacity line stepping at 30m:\n%s", svg)
	}
	high, _ := strconv.ParseFloat(line[1], 64)
	low, _ := strconv.ParseFloat(line[2], 64)
	if high >= low { // SVG's y grows downwards: 8 GPUs is above 4
		t.Errorf("the line does not step down from 8 to 4 GPUs: y %v then %v", high, low)
	}
	for _, want := range []string{">capacity 4 GPUs</text>", ">GPU capacity of the cluster's nodes (between it and the bands: idle GPUs)</text>"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the plot lacks %q:\n%s", want, svg)
		}
	}
	// A result that sampled no capacity (none of its nodes has a GPU) draws no line.
	r.Series = []report.Sample{{GPUs: map[string]float64{"q": 1}}}
	out.Reset()
	if err := report.WritePlot(&out, []report.Variant{{Name: "run", Result: r}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), `stroke="#333" stroke-width="2" d=`) {
		t.Errorf("a capacity line without a capacity:\n%s", out.String())
	}
}
