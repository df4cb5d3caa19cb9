package scale

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// The suite's results, in a file of their own (not a test file) so that hack/scalecompare
// reads them with the same types the suite writes them with.

// Result is what one scenario measured, written as <scenario>.json.
type Result struct {
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
	// APIWrites are those of APIRequests that wrote (POST, PUT, PATCH, DELETE), per pod bound
	// in APIWritesPerPod: a share's bind also writes its reservation pod and ConfigMaps.
	APIWrites       float64 `json:"apiWrites"`
	APIWritesPerPod float64 `json:"apiWritesPerPod"`
	// ReservationPodsCreated and ReservationPodsDeleted count the reservation pods of shared
	// devices seen made and deleted (by the scheduler's collector) while the scenario ran.
	ReservationPodsCreated int `json:"reservationPodsCreated"`
	ReservationPodsDeleted int `json:"reservationPodsDeleted"`
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
	Writes WriteSummary `json:"writes"`
	// Violations are the invariants broken, as the observer told them.
	Violations []string `json:"violations"`
	// Cycles is how many scheduling cycles ran, CycleSeconds their mean duration (from the
	// scheduler's kai_scheduler_cycle_duration_seconds).
	Cycles       float64 `json:"cycles"`
	CycleSeconds float64 `json:"cycleSeconds"`
	// Timeline is, per second of the scenario, what happened to its pods.
	Timeline []Second `json:"timeline"`
	// ConditionReasons counts, per reason, the jobs told they wait for it.
	ConditionReasons map[string]int `json:"conditionReasons"`
	// ServerWrites counts the writes the API server took during the scenario from every
	// client (scheduler, KWOK, the suite), by verb and resource ("patch pods/status").
	ServerWrites map[string]float64 `json:"serverWrites"`
}

// WriteSummary is what the observer found written for the jobs that ran.
type WriteSummary struct {
	Jobs            int        `json:"jobs"`
	Unstamped       int        `json:"unstamped"`
	Unprotected     int        `json:"unprotected"`
	WrongProtection int        `json:"wrongProtection"`
	StampLag        Percentile `json:"stampLagSeconds"`
	EvictionLag     Percentile `json:"evictionLagSeconds"`
}

// Percentile is a distribution of durations, in seconds.
type Percentile struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// Second is what happened to a scenario's pods in one second of it.
type Second struct {
	Second                           int `json:"second"`
	Bound, Running, Evicted, Deleted int
}

// ReadResults reads every scenario's result in a results directory, by scenario.
func ReadResults(dir string) (map[string]*Result, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no results in %s", dir)
	}
	results := map[string]*Result{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		r := &Result{}
		if err := json.Unmarshal(data, r); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		results[r.Scenario] = r
	}
	return results, nil
}
