package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// The plot draws the GPUs allocated on the devices and the stranded ones over time, with
// their legend, for a cluster with GPUs; one without draws neither.
func TestPlotDrawsAllocatedAndStrandedGPUs(t *testing.T) {
	r := &report.Result{
		Queues: []string{"q"},
		Series: []report.Sample{{Time: 0, GPUs: map[string]float64{"q": 0}, Capacity: 8, Allocated: 2.5, Stranded: 0.5},
			{Time: 1800, GPUs: map[string]float64{"q": 1}, Capacity: 8, Allocated: 7.5, Stranded: 0}},
		Totals: report.Totals{SimulatedSeconds: 3600},
	}
	var out bytes.Buffer
	if err := report.WritePlot(&out, []report.Variant{{Name: "run", Result: r}}); err != nil {
		t.Fatal(err)
	}
	svg := out.String()
	for _, want := range []string{">GPUs allocated on the devices, shares included</text>", ">GPUs stranded: free, but no waiting pod's request fits</text>",
		`<path fill="none" stroke="#c51b7d" stroke-width="2" d="M70.0 `, `<path fill="none" stroke="#000" stroke-width="1.5" stroke-dasharray="2 2" d="M70.0 `} {
		if !strings.Contains(svg, want) {
			t.Errorf("the plot lacks %q:\n%s", want, svg)
		}
	}
	r.Series = []report.Sample{{GPUs: map[string]float64{"q": 0}}}
	out.Reset()
	if err := report.WritePlot(&out, []report.Variant{{Name: "run", Result: r}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "stranded") || strings.Contains(out.String(), `stroke="#c51b7d"`) {
		t.Errorf("GPU lines for a cluster without GPUs:\n%s", out.String())
	}
}

// A comparison of runs with GPU shares shows how much each allocated and stranded, with the
// difference in points; runs of whole GPUs keep their comparison as it was.
func TestComparisonShowsGPUsOnlyWhereSharesRan(t *testing.T) {
	result := func(allocated, stranded float64, shared bool) *report.Result {
		return &report.Result{Totals: report.Totals{Queues: []report.QueueReport{}, GPUs: &report.GPUReport{Capacity: 100,
			Allocated: 100 * allocated, AllocatedFraction: allocated, Stranded: 100 * stranded, StrandedFraction: stranded,
			MeanAllocatedFraction: allocated, MeanStrandedFraction: stranded, Shared: shared}}}
	}
	var out bytes.Buffer
	if err := report.WriteComparison(&out, []report.Variant{{Name: "binpack", Result: result(0.92, 0.05, true)},
		{Name: "spread", Result: result(0.9, 0.08, true)}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"GPUs allocated at the end", "92.0%", "90.0%", "-2.0 points", "GPUs stranded, mean", "+3.0 points",
		"GPUs at the end: 92 of 100 allocated (92.0%), 5 stranded (5.0%); over the run 92.0% allocated and 5.0% stranded on average"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the comparison lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := report.WriteComparison(&out, []report.Variant{{Name: "a", Result: result(0.5, 0, false)}, {Name: "b", Result: result(0.5, 0, false)}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "GPUs allocated at the end") {
		t.Errorf("a comparison of whole-GPU runs grew GPU rows:\n%s", out.String())
	}
}
