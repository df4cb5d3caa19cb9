package scheduling

import (
	"fmt"
	"strings"
	"time"
)

// ParsePreemptionDelay reads a kai.scheduler/preemption-delay annotation's value: a
// non-negative Go duration with units. Upstream ignores a bad value with a log line; the
// caller here reports the error (naming the annotation and value) and treats the job as
// having no delay, so a typo is seen rather than silently changing nothing. A unit-less
// number is refused: "300" could mean seconds or nanoseconds.
func ParsePreemptionDelay(value string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(value))
	switch {
	case err != nil:
		return 0, fmt.Errorf("annotation %s: %q is not a duration such as 90s or 5m: %w", PreemptionDelayAnnotation, value, err)
	case d < 0:
		return 0, fmt.Errorf("annotation %s: %q is negative", PreemptionDelayAnnotation, value)
	}
	return d, nil
}
