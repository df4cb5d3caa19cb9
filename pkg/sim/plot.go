package sim

import (
	"fmt"
	"io"
	"strings"
)

// palette colours the queues of a plot in order.
var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"}

// WritePlot draws, for each variant, the GPUs each queue holds over time as step lines, with
// every eviction marked by a red tick under the time axis.
func WritePlot(w io.Writer, variants []Variant) error {
	const width, panelHeight, left, top, gap = 900.0, 220.0, 60.0, 30.0, 50.0
	plotWidth := width - left - 20
	height := top + float64(len(variants))*(panelHeight+gap)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n", width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	for i, v := range variants {
		r := v.Result
		y0 := top + float64(i)*(panelHeight+gap)
		span := max(r.Totals.SimulatedSeconds, 1)
		var peak int64 = 1
		for _, s := range r.Series {
			for _, n := range s.GPUs {
				peak = max(peak, n)
			}
		}
		x := func(t float64) float64 { return left + t/span*plotWidth }
		y := func(n int64) float64 { return y0 + panelHeight - float64(n)/float64(peak)*panelHeight }
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-weight="bold">%s — GPUs per queue, evictions in red</text>`+"\n", left, y0-8, v.Name)
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/>`+"\n", left, y0+panelHeight, left+plotWidth, y0+panelHeight)
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/>`+"\n", left, y0, left, y0+panelHeight)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="end">%d</text>`+"\n", left-6, y0+4, peak)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="end">0</text>`+"\n", left-6, y0+panelHeight+4)
		for h := 0.0; h <= span; h += 3600 {
			fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">%.0fh</text>`+"\n", x(h), y0+panelHeight+28, h/3600)
		}
		for qi, queue := range r.Queues {
			colour := palette[qi%len(palette)]
			var points []string
			var last int64
			for k, s := range r.Series {
				n := s.GPUs[queue]
				if k > 0 {
					points = append(points, fmt.Sprintf("%.1f,%.1f", x(s.Time), y(last)))
				}
				points = append(points, fmt.Sprintf("%.1f,%.1f", x(s.Time), y(n)))
				last = n
			}
			points = append(points, fmt.Sprintf("%.1f,%.1f", x(span), y(last)))
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", colour, strings.Join(points, " "))
			fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" fill="%s">%s</text>`+"\n", left+plotWidth-120, y0+14+float64(qi)*14, colour, queue)
		}
		for _, e := range r.Events {
			if e.Type == EventEvict {
				fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="red"/>`+"\n", x(e.Time), y0+panelHeight+2, x(e.Time), y0+panelHeight+12)
			}
		}
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
