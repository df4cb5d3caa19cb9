package scheduling

import (
	"fmt"
	"strings"
	"time"
)

// ParsePreemptionDelay reads a kai.scheduler/preemption-delay annotation's value. Upstream
// ignores a bad value with a log line; the caller here reports the error and treats the job
// as having no delay, so a typo is seen rather than silently changing nothing.
func ParsePreemptionDelay(value string) (time.Duration, error) {
	return ParseDurationAnnotation(PreemptionDelayAnnotation, value)
}

// ParseDurationAnnotation reads the value of an annotation (key) that holds a non-negative
// Go duration with units: a preemption delay, a job's own min-runtime. Its error names the
// annotation and the value. A unit-less number is refused: "300" could mean seconds or
// nanoseconds.
func ParseDurationAnnotation(key, value string) (time.Duration, error) {
	d, err := ParseSignedDurationAnnotation(key, value)
	if err == nil && d < 0 {
		return 0, fmt.Errorf("annotation %s: %q is negative", key, value)
	}
	return d, err
}

// ParseSignedDurationAnnotation is ParseDurationAnnotation for an annotation whose negative
// values mean something: a staleness grace period below zero turns stale eviction off.
func ParseSignedDurationAnnotation(key, value string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(value))
	if err != nil {
		return 0, fmt.Errorf("annotation %s: %q is not a duration such as 90s or 5m: %w", key, value, err)
	}
	return d, nil
}
