package scheduling

import (
	"strings"
	"testing"
	"time"
)

func TestStartTimeRoundTripKeepsNanoseconds(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 30, 45, 123456789, time.FixedZone("x", 3600))
	got, err := ParseStartTime(map[string]string{LastStartTimestampAnnotation: FormatStartTime(start)})
	if err != nil || got == nil || !got.Equal(start) {
		t.Fatalf("round trip = %v, %v; want %v", got, err, start)
	}
	if got, err := ParseStartTime(nil); got != nil || err != nil {
		t.Fatalf("missing annotation = %v, %v", got, err)
	}
	// Seconds precision, as written by upstream KAI, still parses.
	if got, err := ParseStartTime(map[string]string{LastStartTimestampAnnotation: "2026-03-01T12:30:45Z"}); err != nil || got == nil {
		t.Fatalf("RFC3339 without fraction = %v, %v", got, err)
	}
}

func TestUnparsableStartTimeIsAnErrorNotAPanic(t *testing.T) {
	got, err := ParseStartTime(map[string]string{LastStartTimestampAnnotation: "yesterday"})
	if got != nil || err == nil {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, want := range []string{LastStartTimestampAnnotation, `"yesterday"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}
