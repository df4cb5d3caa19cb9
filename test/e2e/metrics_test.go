package e2e

import (
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// metric reads one series of what a scheduler recorded in its registry (its options'
// MetricsRegistry): a counter's or a gauge's value, a histogram's sample count; 0 while the
// series is absent. Each scheduler records in a registry of its own, so a spec reads what
// the scheduler it started did, whatever ran before it.
func metric(registry prometheus.Registerer, name string, labels map[string]string) func() float64 {
	return func() float64 {
		families, err := registry.(prometheus.Gatherer).Gather()
		Expect(err).NotTo(HaveOccurred())
		for _, family := range families {
			if family.GetName() != name {
				continue
			}
			for _, m := range family.GetMetric() {
				if hasLabels(m, labels) {
					return m.GetCounter().GetValue() + m.GetGauge().GetValue() + float64(m.GetHistogram().GetSampleCount())
				}
			}
		}
		return 0
	}
}

// hasLabels reports whether m carries every label of labels (it may carry more).
func hasLabels(m *dto.Metric, labels map[string]string) bool {
	found := 0
	for _, l := range m.GetLabel() {
		if value, ok := labels[l.GetName()]; ok && value == l.GetValue() {
			found++
		}
	}
	return found == len(labels)
}
