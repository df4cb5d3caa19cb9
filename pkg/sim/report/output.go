package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/plural"
)

// WriteJSON writes the result as indented JSON. Equal results give identical bytes.
func WriteJSON(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes a readable timeline and a per-queue summary.
func WriteText(w io.Writer, r *Result) error {
	p := &printer{w: w}
	p.println("Timeline")
	if p.err != nil {
		return p.err
	}
	tw := newTable(w, 2, 0)
	for _, e := range r.Events {
		detail := e.Node
		if e.Action != "" && e.Type == EventEvict {
			detail = e.Action + " on " + e.Node
		}
		tw.printf("  %s\t%s\t%s\t%s\t%s\n", ClockTime(e.Time), e.Type, e.PodGroup, e.Queue, detail)
	}
	if err := tw.flush(); err != nil {
		return err
	}
	delayed := ""
	if r.Totals.DelayedJobs > 0 { // said only where a scenario uses the delay
		delayed = fmt.Sprintf("; %s held back by the preemption delay", plural.Count(r.Totals.DelayedJobs, "job", "jobs"))
	}
	p.printf("\nSummary after %s (%s refused while protected by min-runtime%s)\n",
		ClockTime(r.Totals.SimulatedSeconds), plural.Count(r.Totals.ProtectedRefusals, "victim", "victims"), delayed)
	if p.err != nil {
		return p.err
	}
	if err := writeQueueTable(w, r, escalationShown(r)); err != nil {
		return err
	}
	if err := writeGPUs(w, r.Totals.GPUs); err != nil {
		return err
	}
	return writeReports(w, r)
}

// writeGPUs writes the line of the GPUs allocated and stranded, for a cluster with GPUs.
func writeGPUs(w io.Writer, g *GPUReport) error {
	if g == nil {
		return nil
	}
	_, err := fmt.Fprintf(w, "GPUs at the end: %s of %d allocated (%s), %s stranded (%s); over the run %s allocated and %s stranded on average\n",
		gpuAmount(g.Allocated), g.Capacity, percent(g.AllocatedFraction), gpuAmount(g.Stranded), percent(g.StrandedFraction),
		percent(g.MeanAllocatedFraction), percent(g.MeanStrandedFraction))
	return err
}

// gpuAmount writes GPUs as devices, to the hundredth (shares are thousandths of a device).
func gpuAmount(gpus float64) string {
	return strconv.FormatFloat(math.Round(gpus*100)/100, 'f', -1, 64)
}

// percent writes a fraction as a percentage with one decimal.
func percent(f float64) string {
	return fmt.Sprintf("%.1f%%", f*100)
}

// escalationShown reports whether the tables show what escalation did (the most evictions
// of one job, the protections it lengthened, the longest wait): where a scheduler ran with
// escalation on, or escalation lengthened a protection (a scenario's jobs may come with
// escalated protections). Other runs' tables stay as they were.
func escalationShown(results ...*Result) bool {
	for _, r := range results {
		if r.Totals.EscalatedRuns > 0 || slices.ContainsFunc(r.Pools, func(p PoolReport) bool { return p.Escalation != "" }) {
			return true
		}
	}
	return false
}

// writeReports writes, when there are any, the problems the scheduler reported, the jobs
// still waiting with their reasons, and the warnings.
func writeReports(w io.Writer, r *Result) error {
	out := &printer{w: w}
	if len(r.Problems) > 0 {
		out.println("\nProblems reported by the scheduler")
		for _, p := range r.Problems {
			out.printf("  %s  %s %s: %s: %s\n", ClockTime(p.Time), p.Kind, p.Name, p.Reason, p.Message)
		}
	}
	var waiting []JobReport
	for _, j := range r.Jobs {
		if len(j.Waiting) > 0 {
			waiting = append(waiting, j)
		}
	}
	if len(waiting) > 0 {
		out.println("\nJobs still waiting, and why")
		for _, j := range waiting {
			job := j.PodGroup
			if j.Workload != "" {
				job += " (" + j.Workload + ")"
			}
			for _, reason := range j.Waiting {
				out.printf("  %s: %s\n", job, reason)
			}
		}
	}
	if len(r.Warnings) > 0 {
		out.println("\nWarnings")
		for _, warning := range r.Warnings {
			out.printf("  %s\n", warning)
		}
	}
	return out.err
}

// writeQueueTable writes the queues and the totals; with node pools, each queue's pool, and
// a table of the pools with the settings each pool's scheduler ran with; with escalation,
// each queue's longest wait, the most runs preempt or reclaim ended of one of its jobs and
// the protections escalation lengthened.
func writeQueueTable(w io.Writer, r *Result, escalation bool) error {
	pooled := len(r.Pools) > 1 || (len(r.Pools) == 1 && r.Pools[0].Pool != "")
	poolCell := func(text string) string { // the first column, with pools
		if !pooled {
			return ""
		}
		return text + "\t"
	}
	escalationCells := func(text string) string { // the last columns, with escalation
		if !escalation {
			return ""
		}
		return text
	}
	tw := newTable(w, 2, tabwriter.AlignRight)
	tw.println(poolCell("pool") + "queue\tjobs\tcompleted\tevictions\twasted GPU-hours\tmean wait\tGPU fair share\t" +
		escalationCells("max wait\tmost evictions of one job\tescalated protections\t"))
	for _, q := range r.Totals.Queues {
		wait, maxWait := "-", "-" // none started
		if q.Started > 0 {
			wait, maxWait = ClockTime(q.MeanWaitSeconds), ClockTime(q.MaxWaitSeconds)
		}
		tw.printf("%s%s\t%d\t%d\t%d\t%.1f\t%s\t%s\t%s\n", poolCell(poolName(q.Pool)), q.Queue, q.Jobs, q.Completed, q.Evictions,
			q.WastedGPUSeconds/3600, wait, q.GPUFairShare, escalationCells(fmt.Sprintf("%s\t%d\t%d\t", maxWait, q.MostRunsEnded, q.EscalatedRuns)))
	}
	tw.printf("%stotal\t%d\t%d\t%d\t%.1f\t\t\t%s\n", poolCell(""), r.Totals.Jobs, r.Totals.Completed, r.Totals.Evictions, r.Totals.WastedGPUSeconds/3600,
		escalationCells(fmt.Sprintf("\t%d\t%d\t", r.Totals.MostRunsEnded, r.Totals.EscalatedRuns)))
	if err := tw.flush(); err != nil || !pooled {
		return err
	}
	out := &printer{w: w}
	out.println("\nNode pools, one scheduler each")
	if out.err != nil {
		return out.err
	}
	tw = newTable(w, 2, tabwriter.AlignRight)
	tw.println("pool\tnodes\tGPUs\tjobs\tcompleted\tevictions\twasted GPU-hours\tprotected refusals\t")
	for _, p := range r.Pools {
		tw.printf("%s\t%d\t%d\t%d\t%d\t%d\t%.1f\t%d\t\n", poolName(p.Pool), p.Nodes, p.GPUs, p.Jobs, p.Completed,
			p.Evictions, p.WastedGPUSeconds/3600, p.ProtectedRefusals)
	}
	if err := tw.flush(); err != nil {
		return err
	}
	for _, p := range r.Pools {
		for _, setting := range p.Settings {
			if strings.Contains(setting, ":") { // plugins with settings to say
				out.printf("  %s: %s\n", poolName(p.Pool), setting)
			}
		}
		for _, warning := range p.ConfigWarnings {
			out.printf("  %s: configuration warning: %s\n", poolName(p.Pool), warning)
		}
	}
	return out.err
}

// poolName names a pool in tables as the scheduler names it in conditions and events: its
// name, or "default" for the objects without the node-pool label.
func poolName(name string) string {
	return scheduling.NodePool{Name: name}.String()
}

// WriteComparison writes the variants side by side — evictions, waste, completions, protected
// refusals and every queue's mean wait; with escalation in any of them, the most evictions
// of one job, the protections escalation lengthened and every queue's longest wait — with,
// for two variants, the difference of the second from the first; the notes on compared
// min-runtime defaults that queues' own values outweigh; then each variant's queue table and
// reports.
func WriteComparison(w io.Writer, variants []Variant) error {
	tw := newTable(w, 3, tabwriter.AlignRight)
	header := []string{""}
	for _, v := range variants {
		header = append(header, v.Name)
	}
	twoWay := len(variants) == 2
	if twoWay {
		header = append(header, "difference")
	}
	tw.println(strings.Join(header, "\t") + "\t")
	// row writes one figure per variant; value gives its text and number (nil: none), and
	// diff the text of a difference.
	row := func(label string, value func(*Result) (string, *float64), diff func(float64) string) {
		cells := []string{label}
		var numbers []*float64
		for _, v := range variants {
			text, n := value(v.Result)
			cells, numbers = append(cells, text), append(numbers, n)
		}
		if twoWay {
			d := "-"
			if numbers[0] != nil && numbers[1] != nil {
				d = diff(*numbers[1] - *numbers[0])
			}
			cells = append(cells, d)
		}
		tw.println(strings.Join(cells, "\t") + "\t")
	}
	count := func(n int) (string, *float64) { f := float64(n); return fmt.Sprint(n), &f }
	signed := func(d float64) string { return fmt.Sprintf("%+d", int64(d)) }
	row("evictions", func(r *Result) (string, *float64) { return count(r.Totals.Evictions) }, signed)
	row("wasted GPU-hours", func(r *Result) (string, *float64) {
		h := r.Totals.WastedGPUSeconds / 3600
		return fmt.Sprintf("%.1f", h), &h
	}, func(d float64) string { return fmt.Sprintf("%+.1f", d) })
	row("jobs completed", func(r *Result) (string, *float64) {
		text, n := count(r.Totals.Completed)
		return fmt.Sprintf("%s of %d", text, r.Totals.Jobs), n
	}, signed)
	row("protected refusals", func(r *Result) (string, *float64) { return count(r.Totals.ProtectedRefusals) }, signed)
	if slices.ContainsFunc(variants, func(v Variant) bool { return v.Result.Totals.DelayedJobs > 0 }) {
		row("jobs held by preemption delay", func(r *Result) (string, *float64) { return count(r.Totals.DelayedJobs) }, signed)
	}
	if slices.ContainsFunc(variants, func(v Variant) bool { return v.Result.Totals.GPUs != nil && v.Result.Totals.GPUs.Shared }) {
		// Runs with GPU shares differ in how well shares pack, which the rows above do not show.
		points := func(d float64) string { return fmt.Sprintf("%+.1f points", d) }
		gpus := func(read func(*GPUReport) float64) func(*Result) (string, *float64) {
			return func(r *Result) (string, *float64) {
				if r.Totals.GPUs == nil {
					return "-", nil
				}
				f := read(r.Totals.GPUs)
				pct := f * 100
				return percent(f), &pct
			}
		}
		row("GPUs allocated at the end", gpus(func(g *GPUReport) float64 { return g.AllocatedFraction }), points)
		row("GPUs stranded at the end", gpus(func(g *GPUReport) float64 { return g.StrandedFraction }), points)
		row("GPUs allocated, mean", gpus(func(g *GPUReport) float64 { return g.MeanAllocatedFraction }), points)
		row("GPUs stranded, mean", gpus(func(g *GPUReport) float64 { return g.MeanStrandedFraction }), points)
	}
	results := make([]*Result, 0, len(variants))
	for _, v := range variants {
		results = append(results, v.Result)
	}
	escalation := escalationShown(results...)
	if escalation {
		row("most evictions of one job", func(r *Result) (string, *float64) { return count(r.Totals.MostRunsEnded) }, signed)
		row("escalated protections", func(r *Result) (string, *float64) { return count(r.Totals.EscalatedRuns) }, signed)
	}
	queues := comparedQueues(variants)
	// waits writes one row per queue of a wait read from its report.
	waits := func(what string, read func(QueueReport) float64) {
		for _, q := range queues {
			label := what + ", " + q.Queue
			if q.Pool != "" {
				label = what + ", " + poolName(q.Pool) + "/" + q.Queue
			}
			row(label, func(r *Result) (string, *float64) {
				for _, rq := range r.Totals.Queues {
					if rq.Queue == q.Queue && rq.Pool == q.Pool && rq.Started > 0 {
						wait := read(rq)
						return ClockTime(wait), &wait
					}
				}
				return "-", nil
			}, signedClock)
		}
	}
	waits("mean wait", func(q QueueReport) float64 { return q.MeanWaitSeconds })
	if escalation { // escalation's price is the owner's longest wait, which a mean hides
		waits("max wait", func(q QueueReport) float64 { return q.MaxWaitSeconds })
	}
	if err := tw.flush(); err != nil {
		return err
	}
	out := &printer{w: w}
	if notes := outweighedDefaults(variants); len(notes) > 0 {
		out.println("\nNotes")
		for _, note := range notes {
			out.printf("  %s.\n", note)
		}
	}
	for _, v := range variants {
		out.printf("\n%s, after %s:\n", v.Name, ClockTime(v.Result.Totals.SimulatedSeconds))
		if out.err != nil {
			return out.err
		}
		if err := writeQueueTable(w, v.Result, escalation); err != nil {
			return err
		}
		if err := writeGPUs(w, v.Result.Totals.GPUs); err != nil {
			return err
		}
		if err := writeReports(w, v.Result); err != nil {
			return err
		}
	}
	return nil
}

// comparedQueues lists the queues of any variant, by pool then name.
func comparedQueues(variants []Variant) []QueueReport {
	seen := map[[2]string]bool{}
	var queues []QueueReport
	for _, v := range variants {
		for _, q := range v.Result.Totals.Queues {
			if key := [2]string{q.Pool, q.Queue}; !seen[key] {
				seen[key] = true
				queues = append(queues, QueueReport{Pool: q.Pool, Queue: q.Queue})
			}
		}
	}
	sort.Slice(queues, func(i, j int) bool {
		if queues[i].Pool != queues[j].Pool {
			return queues[i].Pool < queues[j].Pool
		}
		return queues[i].Queue < queues[j].Queue
	})
	return queues
}

// signedClock renders a difference of seconds as +h:mm:ss or -h:mm:ss.
func signedClock(seconds float64) string {
	if seconds < 0 {
		return "-" + ClockTime(-seconds)
	}
	return "+" + ClockTime(seconds)
}

// ClockTime renders seconds as h:mm:ss.
func ClockTime(seconds float64) string {
	s := int64(seconds + 0.5)
	return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
}

// printer writes formatted text to w and keeps the first error, after which it writes
// nothing more: a report's many lines check one error, where the report needs it.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func (p *printer) println(args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintln(p.w, args...)
	}
}

// table is a printer into a tabwriter, which aligns the columns of its lines on flush.
type table struct {
	printer
	tw *tabwriter.Writer
}

// newTable returns a table writing to w, its columns padded by padding spaces.
func newTable(w io.Writer, padding int, flags uint) *table {
	tw := tabwriter.NewWriter(w, 0, 0, padding, ' ', flags)
	return &table{printer: printer{w: tw}, tw: tw}
}

// flush writes the table's lines out, and returns the first error of its writes.
func (t *table) flush() error {
	if t.err != nil {
		return t.err
	}
	return t.tw.Flush()
}
