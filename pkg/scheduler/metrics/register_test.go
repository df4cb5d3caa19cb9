package metrics

import (
	"testing"

	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// A pool's scheduler labels every series with its pool, so that shards scraped into one
// Prometheus stay apart; registering again (a second scheduler in one process) keeps the
// first registration and says for which pool it was made.
func TestRegisterLabelsEverySeriesWithThePool(t *testing.T) {
	if got := Register("a100"); got != "a100" {
		t.Fatalf("Register = %q, want a100", got)
	}
	if got := Register("h100"); got != "a100" {
		t.Fatalf("second Register = %q, want the first pool, a100", got)
	}
	Binds.Inc()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, family := range families {
		if !names()[family.GetName()] {
			continue // controller-runtime's own
		}
		for _, m := range family.GetMetric() {
			seen++
			labelled := false
			for _, l := range m.GetLabel() {
				labelled = labelled || l.GetName() == "node_pool" && l.GetValue() == "a100"
			}
			if !labelled {
				t.Errorf("%s has a series without node_pool=a100: %v", family.GetName(), m.GetLabel())
			}
		}
	}
	if seen == 0 {
		t.Fatal("no series of the scheduler's metrics was gathered")
	}
}
