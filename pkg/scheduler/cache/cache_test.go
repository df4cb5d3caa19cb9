package cache

import (
	"strings"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

func TestQueueInfoUnitsAndInheritance(t *testing.T) {
	queue := builders.MakeQueue("team").Parent("dept").Priority(200).Resources(
		v2.QueueResource{Quota: 4, OverQuotaWeight: 2, Limit: -1},
		v2.QueueResource{Quota: 8000, Limit: 16000},
		v2.QueueResource{Quota: 1024, Limit: -1},
	).ReclaimMinRuntime(0).Obj()
	info := QueueInfo(queue)
	if info.Parent != "dept" || info.Priority != 200 {
		t.Fatalf("parent/priority = %q/%d", info.Parent, info.Priority)
	}
	if got := info.Resources[api.GPU]; got != (api.QueueResourceShare{Quota: 4, OverQuotaWeight: 2, Limit: api.Unlimited}) {
		t.Errorf("gpu = %+v", got)
	}
	if got := info.Resources[api.Memory]; got.Quota != 1024e6 || got.Limit != api.Unlimited {
		t.Errorf("memory in bytes, unlimited kept: %+v", got)
	}
	if info.PreemptMinRuntime != nil {
		t.Error("unset preemptMinRuntime must stay unset, so that it inherits")
	}
	if info.ReclaimMinRuntime == nil || *info.ReclaimMinRuntime != 0 {
		t.Error("an explicit 0s must stay set, so that it stops inheritance")
	}
	if QueueInfo(builders.MakeQueue("plain").Obj()).Priority != api.DefaultQueuePriority {
		t.Error("unset priority is the default")
	}
}

func TestStartTimeRoundTripKeepsNanoseconds(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 30, 45, 123456789, time.FixedZone("x", 3600))
	got, err := ParseStartTime(map[string]string{scheduling.LastStartTimestampAnnotation: FormatStartTime(start)})
	if err != nil || got == nil || !got.Equal(start) {
		t.Fatalf("round trip = %v, %v; want %v", got, err, start)
	}
	if got, err := ParseStartTime(nil); got != nil || err != nil {
		t.Fatalf("missing annotation = %v, %v", got, err)
	}
	// Seconds precision, as written by upstream KAI, still parses.
	if got, err := ParseStartTime(map[string]string{scheduling.LastStartTimestampAnnotation: "2026-03-01T12:30:45Z"}); err != nil || got == nil {
		t.Fatalf("RFC3339 without fraction = %v, %v", got, err)
	}
}

func TestUnparsableStartTimeIsAnErrorNotAPanic(t *testing.T) {
	got, err := ParseStartTime(map[string]string{scheduling.LastStartTimestampAnnotation: "yesterday"})
	if got != nil || err == nil {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, want := range []string{scheduling.LastStartTimestampAnnotation, `"yesterday"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}
