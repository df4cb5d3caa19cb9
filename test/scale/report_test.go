package scale

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

func summarize(a writeAudit) WriteSummary {
	return WriteSummary{Jobs: a.Jobs, Unstamped: a.Unstamped, Unprotected: a.Unprotected, WrongProtection: a.WrongProtection,
		StampLag: percentiles(a.StampLag), EvictionLag: percentiles(a.EvictionLag)}
}

// percentiles takes the nearest-rank percentiles of ds.
func percentiles(ds []time.Duration) Percentile {
	if len(ds) == 0 {
		return Percentile{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := func(p float64) float64 {
		i := int(p*float64(len(s))+0.999999) - 1
		return s[min(max(i, 0), len(s)-1)].Seconds()
	}
	return Percentile{N: len(s), P50: rank(0.50), P99: rank(0.99), Max: s[len(s)-1].Seconds()}
}

func (r *Result) write() error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(settings.out, r.Scenario+".json"), append(data, '\n'), 0o644)
}

// resultTable renders the results, one scenario a row, in the order they ran.
func resultTable(results []*Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nscale suite, %s, %d nodes of %d GPUs\n", results[0].Label, results[0].Nodes, gpusPerNode)
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "scenario\theadline\tfigures\tpods\tAPI req/pod\tAPI writes/pod\treservations +/-\tpeak RSS MB\tcycle s\tshutdown s\tunwritten at shutdown\tgiven up/dropped\tstamp lag p99 s\tunstamped\teviction lag p50/p99/max s\tviolations\t")
	for _, r := range results {
		names := make([]string, 0, len(r.Figures))
		for name := range r.Figures {
			names = append(names, name)
		}
		sort.Strings(names)
		var figures []string
		for _, name := range names {
			if name != r.Headline {
				figures = append(figures, fmt.Sprintf("%s %.1f", name, r.Figures[name]))
			}
		}
		evictions := "-"
		if l := r.Writes.EvictionLag; l.N > 0 {
			evictions = fmt.Sprintf("%.1f/%.1f/%.1f", l.P50, l.P99, l.Max)
		}
		fmt.Fprintf(w, "%s\t%s %.1f s\t%s\t%d\t%.1f\t%.1f\t%d/%d\t%.0f\t%.2f\t%.2f\t%d\t%.0f/%.0f\t%.1f\t%d\t%s\t%d\t\n", r.Scenario, r.Headline, r.Figures[r.Headline],
			strings.Join(figures, ", "), r.PodsBound, r.APIRequestsPerPod, r.APIWritesPerPod, r.ReservationPodsCreated, r.ReservationPodsDeleted, r.PeakRSSMB, r.CycleSeconds, r.ShutdownSeconds, r.UnwrittenAtShutdown, r.StatusWritesGivenUp, r.DecisionsDropped,
			r.Writes.StampLag.P99, r.Writes.Unstamped, evictions, len(r.Violations))
	}
	_ = w.Flush()
	return b.String()
}
