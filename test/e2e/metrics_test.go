package e2e

import (
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/metrics"
)

// bindErrorCount reads the scheduler's bind-error counter (process-wide, so specs compare
// before and after).
func bindErrorCount() float64 {
	return testutil.ToFloat64(metrics.BindErrors)
}
