package e2e

import (
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/metrics"
)

// bindErrorCount reads the scheduler's bind-error counter (process-wide, so specs compare
// before and after).
func bindErrorCount() float64 {
	return testutil.ToFloat64(metrics.BindErrors)
}

// samples reads how many observations a histogram (or one series of a histogram vector)
// holds; the scheduler's metrics are process-wide, so specs compare before and after.
func samples(h prometheus.Collector) uint64 {
	ch := make(chan prometheus.Metric, 1)
	h.Collect(ch)
	m := &dto.Metric{}
	Expect((<-ch).Write(m)).To(Succeed())
	return m.GetHistogram().GetSampleCount()
}

// protectedJobs reads the protected-jobs gauge of a queue and action; 0 when the series is
// absent (nothing protected there).
func protectedJobs(queue, action string) func() float64 {
	return func() float64 {
		value := 0.0
		ch := make(chan prometheus.Metric, 64)
		metrics.ProtectedJobs.Collect(ch)
		close(ch)
		for metric := range ch {
			m := &dto.Metric{}
			Expect(metric.Write(m)).To(Succeed())
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["queue"] == queue && labels["action"] == action {
				value = m.GetGauge().GetValue()
			}
		}
		return value
	}
}
