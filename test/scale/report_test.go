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

// result is what one scenario measured, written as <scenario>.json.
type result struct {
	Scenario string `json:"scenario"`
	// Label names the scheduler binary measured; Nodes the cluster's size.
	Label string `json:"label"`
	Nodes int    `json:"nodes"`
	// Figures are the scenario's own measurements, in seconds (see each scenario); Headline
	// names the one upstream publishes.
	Figures  map[string]float64 `json:"figures"`
	Headline string             `json:"headline"`
	// Seconds is how long the whole scenario took, setup and checks included.
	Seconds float64 `json:"seconds"`
	// PodsBound is how many pods the scheduler bound; APIRequests how many requests its
	// processes made to the API server (client-go's count), per pod bound in
	// APIRequestsPerPod.
	PodsBound         int     `json:"podsBound"`
	APIRequests       float64 `json:"apiRequests"`
	APIRequestsPerPod float64 `json:"apiRequestsPerPod"`
	// PeakRSSMB is the largest resident memory of any of its processes; ProcessRSSMB each
	// process's, in the order they ran.
	PeakRSSMB    float64   `json:"peakRSSMB"`
	ProcessRSSMB []float64 `json:"processRSSMB"`
	// ShutdownSeconds is how long the scheduler took to exit after SIGTERM, sent as soon as
	// the scenario's work was done; UnwrittenAtShutdown counts the stamps and protection
	// statuses of running jobs it had not written by then (a scheduler started after it
	// writes them; Writes is what it left).
	ShutdownSeconds     float64 `json:"shutdownSeconds"`
	UnwrittenAtShutdown int     `json:"unwrittenAtShutdown"`
	// StatusWritesGivenUp and DecisionsDropped are what the scheduler processes counted as
	// given up (kai_scheduler_status_writes_given_up_total) and never sent
	// (kai_scheduler_decisions_dropped_total) until they were told to stop: what a shutdown
	// leaves is UnwrittenAtShutdown.
	StatusWritesGivenUp float64 `json:"statusWritesGivenUp"`
	DecisionsDropped    float64 `json:"decisionsDropped"`
	// Crashes counts the processes killed during the scenario.
	Crashes int `json:"crashes"`
	// Writes is what the observer found written for the jobs that ran.
	Writes writeSummary `json:"writes"`
	// Violations are the invariants broken, as the observer told them.
	Violations []string `json:"violations"`
	// Cycles is how many scheduling cycles ran, CycleSeconds their mean duration (from the
	// scheduler's kai_scheduler_cycle_duration_seconds).
	Cycles       float64 `json:"cycles"`
	CycleSeconds float64 `json:"cycleSeconds"`
	// Timeline is, per second of the scenario, what happened to its pods.
	Timeline []second `json:"timeline"`
	// ConditionReasons counts, per reason, the jobs told they wait for it.
	ConditionReasons map[string]int `json:"conditionReasons"`
	// ServerWrites counts the writes the API server took during the scenario from every
	// client (scheduler, KWOK, the suite), by verb and resource ("patch pods/status").
	ServerWrites map[string]float64 `json:"serverWrites"`
}

// writeSummary sums a writeAudit up.
type writeSummary struct {
	Jobs            int        `json:"jobs"`
	Unstamped       int        `json:"unstamped"`
	Unprotected     int        `json:"unprotected"`
	WrongProtection int        `json:"wrongProtection"`
	StampLag        percentile `json:"stampLagSeconds"`
	EvictionLag     percentile `json:"evictionLagSeconds"`
}

// percentile is a distribution of durations, in seconds.
type percentile struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

func summarize(a writeAudit) writeSummary {
	return writeSummary{Jobs: a.Jobs, Unstamped: a.Unstamped, Unprotected: a.Unprotected, WrongProtection: a.WrongProtection,
		StampLag: percentiles(a.StampLag), EvictionLag: percentiles(a.EvictionLag)}
}

// percentiles takes the nearest-rank percentiles of ds.
func percentiles(ds []time.Duration) percentile {
	if len(ds) == 0 {
		return percentile{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := func(p float64) float64 {
		i := int(p*float64(len(s))+0.999999) - 1
		return s[min(max(i, 0), len(s)-1)].Seconds()
	}
	return percentile{N: len(s), P50: rank(0.50), P99: rank(0.99), Max: s[len(s)-1].Seconds()}
}

func (r *result) write() error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(settings.out, r.Scenario+".json"), append(data, '\n'), 0o644)
}

// resultTable renders the results, one scenario a row, in the order they ran.
func resultTable(results []*result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nscale suite, %s, %d nodes of %d GPUs\n", results[0].Label, results[0].Nodes, gpusPerNode)
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "scenario\theadline\tfigures\tpods\tAPI req/pod\tpeak RSS MB\tcycle s\tshutdown s\tunwritten at shutdown\tgiven up/dropped\tstamp lag p99 s\tunstamped\teviction lag p50/p99/max s\tviolations\t")
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
		fmt.Fprintf(w, "%s\t%s %.1f s\t%s\t%d\t%.1f\t%.0f\t%.2f\t%.2f\t%d\t%.0f/%.0f\t%.1f\t%d\t%s\t%d\t\n", r.Scenario, r.Headline, r.Figures[r.Headline],
			strings.Join(figures, ", "), r.PodsBound, r.APIRequestsPerPod, r.PeakRSSMB, r.CycleSeconds, r.ShutdownSeconds, r.UnwrittenAtShutdown, r.StatusWritesGivenUp, r.DecisionsDropped,
			r.Writes.StampLag.P99, r.Writes.Unstamped, evictions, len(r.Violations))
	}
	_ = w.Flush()
	return b.String()
}
