package scheduler

import (
	"testing"
	"time"
)

// A cycle follows the last one a period later, or as soon as one of its answers changes (a
// protection that held a victim back ends), but never within a tenth of a period.
func TestNextCycleStartsWhenAProtectionEnds(t *testing.T) {
	ended := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name      string
		changesAt time.Time
		want      time.Duration
	}{
		{"nothing changes by itself", time.Time{}, time.Second},
		{"a protection ends within the period", ended.Add(300 * time.Millisecond), 300 * time.Millisecond},
		{"a protection ends after the period", ended.Add(time.Minute), time.Second},
		{"a protection ends at once", ended.Add(time.Millisecond), 100 * time.Millisecond},
		{"a protection ended while the cycle ran", ended.Add(-time.Second), 100 * time.Millisecond},
	} {
		if got := nextCycle(ended, time.Second, c.changesAt).Sub(ended); got != c.want {
			t.Errorf("%s: next cycle %s after the last, want %s", c.name, got, c.want)
		}
	}
}
