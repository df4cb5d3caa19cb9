package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/plural"
)

// palette colours the queues of a plot in order.
var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"}

// The plot's geometry, in pixels.
const (
	plotWidth     = 900.0
	plotLeft      = 70.0 // room for the GPU axis
	plotRight     = 20.0
	legendHeight  = 66.0
	gpuLegendRow  = 16.0 // the legend's row of the allocated and stranded lines, where drawn
	panelHeight   = 200.0
	evictionStrip = 36.0 // under each panel: evictions per time slot, as bars
	panelGap      = 70.0 // the time axis, its labels and the next panel's title
	evictionSlot  = 6.0  // width of one eviction bar
)

// WritePlot draws, one panel per variant on one shared time axis, the GPUs each queue holds
// as stacked bands (so no queue hides another) under a line at the cluster's GPU capacity
// (the room between them is idle), with a bar strip under each panel counting the evictions
// in each time slot: a person comparing two runs reads them in seconds.
func WritePlot(w io.Writer, variants []Variant) error {
	var queues []string // every variant's queues, first seen first, so colours match
	span, peak := 1.0, 1.0
	for _, v := range variants {
		r := v.Result
		span = max(span, r.Totals.SimulatedSeconds)
		for _, q := range r.Queues {
			if !slices.Contains(queues, q) {
				queues = append(queues, q)
			}
		}
		for _, s := range r.Series {
			var total float64
			for _, n := range s.GPUs {
				total += n
			}
			peak = max(peak, total, float64(s.Capacity))
		}
	}
	gpuStep := niceStep(float64(peak), 4)
	top := math.Ceil(float64(peak)/gpuStep) * gpuStep
	inner := plotWidth - plotLeft - plotRight
	x := func(t float64) float64 { return plotLeft + t/span*inner }
	legend := legendHeight
	devices := slices.ContainsFunc(variants, func(v Variant) bool { return sampledCapacity(v.Result) })
	if devices {
		legend += gpuLegendRow
	}
	height := legend + float64(len(variants))*(panelHeight+evictionStrip+panelGap)

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n", plotWidth, height)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	writeLegend(&b, queues, devices)
	for i, v := range variants {
		y0 := legend + float64(i)*(panelHeight+evictionStrip+panelGap) + 20
		y := func(n float64) float64 { return y0 + panelHeight - n/top*panelHeight }
		evictions := evictionTimes(v.Result)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-weight="bold">%s: %s</text>`+"\n", plotLeft, y0-8, v.Name,
			plural.Count(len(evictions), "eviction", "evictions"))
		// GPU axis: gridlines at round numbers, labelled.
		for n := 0.0; n <= top+gpuStep/2; n += gpuStep {
			fmt.Fprintf(&b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#ddd"/>`+"\n", plotLeft, y(n), plotLeft+inner, y(n))
			fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end">%.0f</text>`+"\n", plotLeft-6, y(n)+4, n)
		}
		fmt.Fprintf(&b, `<text x="6" y="%.0f">GPUs</text>`+"\n", y0+panelHeight/2)
		writeBands(&b, v.Result, queues, span, x, y)
		writeCapacity(&b, v.Result, span, x, y)
		writeDeviceLines(&b, v.Result, span, x, y)
		writeFairShares(&b, v.Result, queues, span, x, func(n float64) float64 { return y(min(n, top)) })
		writeEvictions(&b, evictions, span, x, y0+panelHeight, inner)
		writeTimeAxis(&b, span, x, y0+panelHeight+evictionStrip)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeLegend names every queue's colour, and the eviction bars, above the panels; with
// devices, the allocated and stranded lines too.
func writeLegend(b *strings.Builder, queues []string, devices bool) {
	at := plotLeft
	for i, q := range queues {
		fmt.Fprintf(b, `<rect x="%.0f" y="14" width="14" height="14" fill="%s"/>`+"\n", at, palette[i%len(palette)])
		fmt.Fprintf(b, `<text x="%.0f" y="26">%s</text>`+"\n", at+20, q)
		at += 20 + 7.5*float64(len(q)) + 24
	}
	fmt.Fprintf(b, `<rect x="%.0f" y="14" width="6" height="14" fill="red"/>`+"\n", at)
	fmt.Fprintf(b, `<text x="%.0f" y="26">evictions (bar height: how many in that moment)</text>`+"\n", at+12)
	fmt.Fprintf(b, `<line x1="%.0f" y1="40" x2="%.0f" y2="40" stroke="black" stroke-width="2" stroke-dasharray="6 3"/>`+"\n", plotLeft, plotLeft+14)
	fmt.Fprintf(b, `<text x="%.0f" y="44">a queue's fair share of GPUs (not stacked: compare it with the queue's own band)</text>`+"\n", plotLeft+20)
	fmt.Fprintf(b, `<line x1="%.0f" y1="56" x2="%.0f" y2="56" stroke="%s" stroke-width="2"/>`+"\n", plotLeft, plotLeft+14, capacityColour)
	fmt.Fprintf(b, `<text x="%.0f" y="60">GPU capacity of the cluster's nodes (between it and the bands: idle GPUs)</text>`+"\n", plotLeft+20)
	if !devices {
		return
	}
	fmt.Fprintf(b, `<line x1="%.0f" y1="72" x2="%.0f" y2="72" stroke="%s" stroke-width="1.5" stroke-dasharray="%s"/>`+"\n", plotLeft, plotLeft+14, allocatedColour, allocatedDash)
	fmt.Fprintf(b, `<text x="%.0f" y="76">GPUs allocated on the devices, shares included</text>`+"\n", plotLeft+20)
	fmt.Fprintf(b, `<line x1="%.0f" y1="72" x2="%.0f" y2="72" stroke="%s" stroke-width="2"/>`+"\n", plotLeft+340, plotLeft+354, strandedColour)
	fmt.Fprintf(b, `<text x="%.0f" y="76">GPUs stranded: free, but no waiting pod's request fits</text>`+"\n", plotLeft+360)
}

// The allocated and stranded lines' looks, apart from the queues', the capacity's and the
// evictions' red.
const (
	allocatedColour = "#000"
	allocatedDash   = "2 2"
	strandedColour  = "#c51b7d"
)

// sampledCapacity says whether a result sampled a cluster with GPUs.
func sampledCapacity(r *Result) bool {
	return slices.ContainsFunc(r.Series, func(s Sample) bool { return s.Capacity > 0 })
}

// writeDeviceLines draws over time the GPUs the nodes' devices have given out (a dotted
// line: the queues' bands count whole GPUs only, so with shares the line stands above them)
// and the stranded GPUs (solid, at their own height from zero): the capacity a placement
// left in pieces too small for the pods waiting. None for a result without GPUs.
func writeDeviceLines(b *strings.Builder, r *Result, span float64, x func(float64) float64, y func(float64) float64) {
	if !sampledCapacity(r) {
		return
	}
	line := func(value func(Sample) float64) string {
		var path []string
		for k, s := range r.Series {
			end := span
			if k+1 < len(r.Series) {
				end = r.Series[k+1].Time
			}
			if k == 0 {
				path = append(path, fmt.Sprintf("M%.1f %.1f", x(s.Time), y(value(s))))
			} else {
				path = append(path, fmt.Sprintf("V%.1f", y(value(s))))
			}
			path = append(path, fmt.Sprintf("H%.1f", x(end)))
		}
		return strings.Join(path, " ")
	}
	fmt.Fprintf(b, `<path fill="none" stroke="%s" stroke-width="1.5" stroke-dasharray="%s" d="%s"/>`+"\n", allocatedColour, allocatedDash,
		line(func(s Sample) float64 { return s.Allocated }))
	fmt.Fprintf(b, `<path fill="none" stroke="%s" stroke-width="2" d="%s"/>`+"\n", strandedColour,
		line(func(s Sample) float64 { return s.Stranded }))
}

// capacityColour draws the capacity line, apart from every queue's colour.
const capacityColour = "#333"

// writeCapacity draws the GPUs of the cluster's nodes over time as a solid step line above
// the stacked bands, labelled with its number where it ends: without it an idle GPU is
// invisible, a panel whose bands stop short of the top looking like one that is full. None
// for a result that did not sample it.
func writeCapacity(b *strings.Builder, r *Result, span float64, x func(float64) float64, y func(float64) float64) {
	var path []string
	var last int64
	for k, s := range r.Series {
		end := span
		if k+1 < len(r.Series) {
			end = r.Series[k+1].Time
		}
		if k == 0 {
			path = append(path, fmt.Sprintf("M%.1f %.1f", x(s.Time), y(float64(s.Capacity))))
		} else {
			path = append(path, fmt.Sprintf("V%.1f", y(float64(s.Capacity))))
		}
		path = append(path, fmt.Sprintf("H%.1f", x(end)))
		last = s.Capacity
	}
	if len(path) == 0 || !slices.ContainsFunc(r.Series, func(s Sample) bool { return s.Capacity > 0 }) {
		return
	}
	fmt.Fprintf(b, `<path fill="none" stroke="%s" stroke-width="2" d="%s"/>`+"\n", capacityColour, strings.Join(path, " "))
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end" fill="%s">capacity %s</text>`+"\n",
		x(span)-4, y(float64(last))-4, capacityColour, plural.Count(int(last), "GPU", "GPUs"))
}

// writeBands stacks the queues' GPUs over time: each queue a band on top of the ones before
// it, stepping at each sample.
func writeBands(b *strings.Builder, r *Result, queues []string, span float64, x func(float64) float64, y func(float64) float64) {
	below := make([]float64, len(r.Series)) // the stack's height under the current queue
	for qi, q := range queues {
		var upper, lower []string
		for k, s := range r.Series {
			end := span
			if k+1 < len(r.Series) {
				end = r.Series[k+1].Time
			}
			base, height := below[k], float64(s.GPUs[q])
			upper = append(upper, fmt.Sprintf("%.1f,%.1f %.1f,%.1f", x(s.Time), y(base+height), x(end), y(base+height)))
			lower = append(lower, fmt.Sprintf("%.1f,%.1f %.1f,%.1f", x(end), y(base), x(s.Time), y(base)))
			below[k] = base + height
		}
		if len(upper) == 0 {
			continue
		}
		slices.Reverse(lower)
		fmt.Fprintf(b, `<polygon fill="%s" stroke="none" points="%s %s"/>`+"\n", palette[qi%len(palette)],
			strings.Join(upper, " "), strings.Join(lower, " "))
	}
}

// writeFairShares draws each queue's fair share of GPUs over time as dashed horizontal
// strokes in its colour, at its own height rather than on the stack: the line a queue's band
// may grow to by reclaim, and above which it is reclaimed from. Only the strokes are drawn,
// not the jumps between them, and no stroke at zero, so that shares that come and go with a
// queue's jobs do not hatch the panel. y clamps shares above the panel (over-subscribed
// quotas) to its top.
func writeFairShares(b *strings.Builder, r *Result, queues []string, span float64, x func(float64) float64, y func(float64) float64) {
	for qi, q := range queues {
		var path []string
		for k, s := range r.Series {
			end := span
			if k+1 < len(r.Series) {
				end = r.Series[k+1].Time
			}
			if share := s.FairShare[q]; share > 0 && end > s.Time {
				path = append(path, fmt.Sprintf("M%.1f %.1fH%.1f", x(s.Time), y(share), x(end)))
			}
		}
		if len(path) == 0 {
			continue
		}
		fmt.Fprintf(b, `<path fill="none" stroke="%s" stroke-width="2" stroke-dasharray="6 3" d="%s"/>`+"\n",
			palette[qi%len(palette)], strings.Join(path, " "))
	}
}

// evictionTimes lists when each eviction happened.
func evictionTimes(r *Result) []float64 {
	var times []float64
	for _, e := range r.Events {
		if e.Type == EventEvict {
			times = append(times, e.Time)
		}
	}
	return times
}

// writeEvictions draws, under a panel, one bar per time slot that had evictions, as tall as
// how many there were (scaled to the busiest slot), with the count written on bars of more
// than one: simultaneous evictions must not look like a single one.
func writeEvictions(b *strings.Builder, times []float64, span float64, x func(float64) float64, y0, inner float64) {
	slots := int(inner / evictionSlot)
	counts := make([]int, slots)
	busiest := 0
	for _, t := range times {
		k := min(int(t/span*float64(slots)), slots-1) // the run's last moment is in the last slot
		counts[k]++
		busiest = max(busiest, counts[k])
	}
	const barRoom = evictionStrip - 14 // leaves room for a count above the bar
	for k, n := range counts {
		if n == 0 {
			continue
		}
		left := x(float64(k) / float64(slots) * span)
		height := max(3, float64(n)/float64(busiest)*barRoom)
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="red"/>`+"\n", left, y0+evictionStrip-height, evictionSlot-1, height)
		if n > 1 {
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="10">%d</text>`+"\n", left+evictionSlot/2, y0+evictionStrip-height-2, n)
		}
	}
}

// writeTimeAxis draws the shared time axis with ticks at a round step.
func writeTimeAxis(b *strings.Builder, span float64, x func(float64) float64, y float64) {
	fmt.Fprintf(b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/>`+"\n", x(0), y, x(span), y)
	step := timeStep(span)
	for t := 0.0; t <= span+step/1000; t += step {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="black"/>`+"\n", x(t), y, x(t), y+4)
		fmt.Fprintf(b, `<text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`+"\n", x(t), y+17, ClockLabel(t))
	}
}

// timeSteps are the tick steps a time axis may use, in seconds.
var timeSteps = []float64{10, 30, 60, 300, 600, 900, 1800, 3600, 7200, 3 * 3600, 6 * 3600, 12 * 3600, 86400}

// timeStep is the smallest round step that puts at most 12 ticks on span.
func timeStep(span float64) float64 {
	for _, s := range timeSteps {
		if span/s <= 12 {
			return s
		}
	}
	return math.Ceil(span/12/86400) * 86400
}

// ClockLabel writes t as a short duration: 90m as 1h30m, 4h as 4h, 90s as 1m30s.
func ClockLabel(t float64) string {
	label := (time.Duration(math.Round(t)) * time.Second).String()
	if strings.HasSuffix(label, "m0s") {
		label = strings.TrimSuffix(label, "0s")
	}
	if strings.HasSuffix(label, "h0m") {
		label = strings.TrimSuffix(label, "0m")
	}
	return label
}

// niceStep is a step of 1, 2 or 5 times a power of ten that cuts top into at most ticks parts.
func niceStep(top float64, ticks int) float64 {
	for scale := 1.0; ; scale *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if top/(m*scale) <= float64(ticks) {
				return m * scale
			}
		}
	}
}
