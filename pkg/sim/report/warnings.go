package report

import "fmt"

// maxEvictionsPerPreemptor is how often a job may be evicted for one preemptor before the
// simulation warns: with the promise made to a preemptor, one eviction for it is the rule (a
// gang evicted over a few cycles aside).
const maxEvictionsPerPreemptor = 3

// RepeatedEvictions warns about every job evicted more than maxEvictionsPerPreemptor times
// for the same preemptor: the thrash min-runtime and promises exist to prevent. Pods of one
// job evicted at the same time count as one eviction.
func RepeatedEvictions(events []Event) []string {
	type pair struct{ victim, preemptor string }
	times := map[pair][]float64{}
	var order []pair
	for _, e := range events {
		if e.Type != EventEvict || e.Preemptor == "" {
			continue
		}
		p := pair{e.PodGroup, e.Preemptor}
		seen := times[p]
		if len(seen) == 0 {
			order = append(order, p)
		}
		if len(seen) == 0 || seen[len(seen)-1] != e.Time {
			times[p] = append(seen, e.Time)
		}
	}
	warnings := []string{}
	for _, p := range order {
		if at := times[p]; len(at) > maxEvictionsPerPreemptor {
			warnings = append(warnings, fmt.Sprintf("job %s was evicted %d times for job %s (first at %s, last at %s): "+
				"the resources freed for the preemptor did not reach it", p.victim, len(at), p.preemptor,
				ClockTime(at[0]), ClockTime(at[len(at)-1])))
		}
	}
	return warnings
}
