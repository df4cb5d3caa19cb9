package scheduling

import (
	"fmt"
	"time"
)

// FormatStartTime renders a job start for the LastStartTimestampAnnotation: RFC3339 with
// nanoseconds, so that a parsed stamp is never earlier or later than the recorded one and
// protection never ends early. The scheduler writes it (and kai-sim, for its jobs); upstream
// KAI's stamps, in whole seconds, parse as well.
func FormatStartTime(t time.Time) string {
	return t.UTC().Format(time.RFC3339Nano)
}

// ParseStartTime reads the last-start-timestamp annotation of a PodGroup. A missing
// annotation is (nil, nil). An unparsable one is (nil, error naming the annotation and
// value): the caller reports it and treats the job as unstamped, never failing the cycle.
func ParseStartTime(annotations map[string]string) (*time.Time, error) {
	return parseTime(annotations, LastStartTimestampAnnotation)
}

// ParseEvictionTime reads the last-eviction-timestamp annotation of a PodGroup, written as
// FormatStartTime writes a start, as ParseStartTime reads a start.
func ParseEvictionTime(annotations map[string]string) (*time.Time, error) {
	return parseTime(annotations, LastEvictionTimestampAnnotation)
}

// ParseCheckpointTime reads the last-checkpoint-timestamp annotation a workload writes on its
// PodGroup: RFC3339, with or without fractions of a second.
func ParseCheckpointTime(annotations map[string]string) (*time.Time, error) {
	return parseTime(annotations, LastCheckpointTimestampAnnotation)
}

func parseTime(annotations map[string]string, key string) (*time.Time, error) {
	value, ok := annotations[key]
	if !ok {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, value)
	if err != nil {
		return nil, fmt.Errorf("annotation %s: cannot parse %q as an RFC3339 time: %w", key, value, err)
	}
	return &t, nil
}
