package status_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/google/go-cmp/cmp"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/status"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func setup(t *testing.T, funcs interceptor.Funcs) (client.Client, *status.Updater, *clocktesting.FakeClock) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := install.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	group := builders.MakePodGroup("ns", "job").Obj()
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(group).WithStatusSubresource(group).
		WithInterceptorFuncs(funcs).Build()
	clk := clocktesting.NewFakeClock(start)
	return c, status.NewUpdater(c, nil, clk), clk
}

func read(t *testing.T, c client.Client) *v2alpha2.PodGroup {
	t.Helper()
	group := &v2alpha2.PodGroup{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "job"}, group); err != nil {
		t.Fatal(err)
	}
	return group
}

func TestStartStampIsRetriedUntilItLands(t *testing.T) {
	failures := 3
	c, updater, _ := setup(t, interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if failures > 0 {
				failures--
				return errors.New("injected: API server unavailable")
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	})
	stamp := start.Add(1500 * time.Millisecond)
	updater.QueueStartStamp("ns/job", stamp)
	for range 3 {
		updater.Flush(context.Background())
		if updater.PendingWrites() != 1 {
			t.Fatal("a failed write must stay queued")
		}
	}
	updater.Flush(context.Background())
	if updater.PendingWrites() != 0 {
		t.Fatal("the write landed and must leave the queue")
	}
	got, err := scheduling.ParseStartTime(read(t, c).Annotations)
	if err != nil || got == nil || !got.Equal(stamp) {
		t.Fatalf("annotation %v (%v), want %v with its sub-second part", read(t, c).Annotations[scheduling.LastStartTimestampAnnotation], err, stamp)
	}
}

// The eviction stamp, which the preemption delay re-arms from, goes out with the start
// stamp in one patch, and an earlier eviction never replaces a later one.
func TestEvictionStampIsWrittenBesideTheStartStamp(t *testing.T) {
	c, updater, _ := setup(t, interceptor.Funcs{})
	evicted := start.Add(time.Minute)
	updater.QueueStartStamp("ns/job", start)
	updater.QueueEvictionStamp("ns/job", evicted)
	updater.QueueEvictionStamp("ns/job", start)
	updater.Flush(context.Background())
	if updater.PendingWrites() != 0 {
		t.Fatal("both stamps must land in one write")
	}
	annotations := read(t, c).Annotations
	gotStart, _ := scheduling.ParseStartTime(annotations)
	gotEvicted, err := scheduling.ParseEvictionTime(annotations)
	if gotStart == nil || !gotStart.Equal(start) || err != nil || gotEvicted == nil || !gotEvicted.Equal(evicted) {
		t.Fatalf("annotations %v, want start %v and eviction %v", annotations, start, evicted)
	}
}

func TestConditionRewritesAreThrottledButClearedAtOnce(t *testing.T) {
	c, updater, clk := setup(t, interceptor.Funcs{})
	message := func() string {
		if conditions := read(t, c).Status.SchedulingConditions; len(conditions) > 0 {
			return conditions[0].Message
		}
		return ""
	}
	updater.SetPending(map[model.JobID][]model.PendingReason{"ns/job": {model.Unschedulable("0/3 nodes are available: 3 Insufficient nvidia.com/gpu.")}}, nil)
	updater.Flush(context.Background())
	if message() != "0/3 nodes are available: 3 Insufficient nvidia.com/gpu." {
		t.Fatalf("first reason written at once, got %q", message())
	}
	clk.Step(time.Second)
	updater.SetPending(map[model.JobID][]model.PendingReason{"ns/job": {model.Unschedulable("0/3 nodes are available: 2 Insufficient nvidia.com/gpu, 1 node(s) were unschedulable.")}}, nil)
	updater.Flush(context.Background())
	if message() != "0/3 nodes are available: 3 Insufficient nvidia.com/gpu." {
		t.Fatal("a changed reason within 10s must wait, or busy clusters flood the API server")
	}
	clk.Step(10 * time.Second)
	updater.Flush(context.Background())
	if message() != "0/3 nodes are available: 2 Insufficient nvidia.com/gpu, 1 node(s) were unschedulable." {
		t.Fatalf("after the refresh interval the latest reason is written, got %q", message())
	}
	clk.Step(time.Second)
	updater.SetPending(map[model.JobID][]model.PendingReason{}, nil)
	updater.Flush(context.Background())
	if message() != "" {
		t.Fatal("a job that is no longer pending has its condition cleared at once")
	}
}

// When what a job waits for changes — it no longer lacks room, a victim's protection holds
// it back — its owner is told at once: a protection shorter than the usual 10 seconds would
// otherwise end unseen. Kinds that flap back are throttled as any other change.
func TestAChangeOfWhatTheJobWaitsForIsToldAtOnce(t *testing.T) {
	c, updater, clk := setup(t, interceptor.Funcs{})
	reason := func() string {
		if conditions := read(t, c).Status.SchedulingConditions; len(conditions) > 0 && len(conditions[0].Reasons) > 0 {
			return conditions[0].Reasons[0].Reason
		}
		return ""
	}
	tell := func(r model.PendingReason) {
		updater.SetPending(map[model.JobID][]model.PendingReason{"ns/job": {r}}, nil)
		updater.Flush(context.Background())
	}
	protected := model.PendingReason{Reason: model.ReasonMinRuntimeProtected,
		Message: "reclaim: victims are protected by min-runtime: ns/a until 2026-01-01T00:00:04Z (4s from queue team)"}

	tell(model.Unschedulable("gang of 4 pods does not fit"))
	clk.Step(time.Second)
	tell(protected)
	if got := reason(); got != model.ReasonMinRuntimeProtected {
		t.Fatalf("a second after the first condition the job waits on a protection: shows %q, want it at once", got)
	}
	clk.Step(time.Second)
	tell(model.Unschedulable("gang of 4 pods does not fit"))
	if got := reason(); got != model.ReasonMinRuntimeProtected {
		t.Fatalf("the kind flapped back a second later: shows %q, want the rewrite held back", got)
	}
	clk.Step(10 * time.Second)
	updater.Flush(context.Background())
	if got := reason(); got != model.ReasonUnschedulable {
		t.Fatalf("10s later the held-back change is written: shows %q", got)
	}
}

// A refusal whose figures alone moved — how much the queue holds, how many nodes lack what —
// is rewritten at most once a minute: on a busy cluster those figures change every cycle, and
// rewriting them for every waiting job would multiply the API server's writes. What the job
// waits for, and a protection's end time, are not figures: they are rewritten within the
// usual 10 seconds.
func TestAChangeOfFiguresAloneIsRewrittenOnceAMinute(t *testing.T) {
	c, updater, clk := setup(t, interceptor.Funcs{})
	message := func() string {
		if conditions := read(t, c).Status.SchedulingConditions; len(conditions) > 0 {
			return conditions[0].Message
		}
		return ""
	}
	tell := func(message string) {
		updater.SetPending(map[model.JobID][]model.PendingReason{"ns/job": {model.Unschedulable(message)}}, nil)
		updater.Flush(context.Background())
	}
	overShare := func(holds string) string {
		return "queue team holds " + holds + " GPUs and may have 8 (its fair share); this job asks for 2 more"
	}
	tell(overShare("8"))
	clk.Step(30 * time.Second)
	tell(overShare("7.5"))
	if got := message(); got != overShare("8") {
		t.Fatalf("figures alone moved after 30s: shows %q, want the first refusal still", got)
	}
	clk.Step(30 * time.Second)
	updater.Flush(context.Background())
	if got := message(); got != overShare("7.5") {
		t.Fatalf("figures alone moved a minute ago: shows %q, want the latest", got)
	}

	protected := func(until string) string {
		return "reclaim: victims are protected by min-runtime: ns/a until " + until + " (20m0s from queue team)"
	}
	clk.Step(10 * time.Second)
	tell(protected("2026-01-01T00:20:00Z"))
	if got := message(); got != protected("2026-01-01T00:20:00Z") {
		t.Fatalf("what the job waits for changed: shows %q, want it rewritten after 10s", got)
	}
	clk.Step(10 * time.Second)
	tell(protected("2026-01-01T00:25:00Z"))
	if got := message(); got != protected("2026-01-01T00:25:00Z") {
		t.Fatalf("a protection's new end is not a figure: shows %q, want it rewritten after 10s", got)
	}
}

// A min-runtime block is told apart from a job that does not fit: by the reason of its entry
// in the condition's reasons[], and by the reason of its own Warning event.
func TestReasonsKeepTheirKindInConditionAndEvents(t *testing.T) {
	c, updater, _ := setup(t, interceptor.Funcs{})
	recorder := record.NewFakeRecorder(10)
	updater.Recorder = recorder
	protected := model.PendingReason{Reason: model.ReasonMinRuntimeProtected,
		Message: "reclaim: victims are protected by min-runtime: ns/a until 2026-01-01T00:20:00Z (20m0s from queue team)"}
	unfit := model.Unschedulable("0/3 nodes are available: 3 Insufficient nvidia.com/gpu.")
	updater.SetPending(map[model.JobID][]model.PendingReason{"ns/job": {unfit, protected}}, nil)
	updater.Flush(context.Background())

	conditions := read(t, c).Status.SchedulingConditions
	if len(conditions) != 1 {
		t.Fatalf("conditions %v, want one", conditions)
	}
	want := []v2alpha2.UnschedulableReason{{Reason: "Unschedulable", Message: unfit.Message},
		{Reason: "MinRuntimeProtected", Message: protected.Message}}
	if diff := cmp.Diff(want, conditions[0].Reasons); diff != "" {
		t.Errorf("reasons[] (-want +got):\n%s", diff)
	}
	close(recorder.Events)
	var events []string
	for e := range recorder.Events {
		events = append(events, e)
	}
	wantEvents := []string{"Warning Unschedulable " + unfit.Message, "Warning MinRuntimeProtected " + protected.Message}
	if diff := cmp.Diff(wantEvents, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// A job that only waits for the resources promised to it is on its way: it is told so (in a
// Normal event, and its condition) only if the wait lasts, and one that runs before then
// costs no write at all. The wait counts from the promise: a reclaimer told before that its
// victims were protected is not rewritten the moment they go, when the API server is busiest
// with their evictions.
func TestAWaitForPromisedResourcesIsToldOnlyIfItLasts(t *testing.T) {
	protected := []model.PendingReason{{Reason: model.ReasonMinRuntimeProtected, Message: "victims are protected by min-runtime"}}
	for _, before := range [][]model.PendingReason{nil, protected} {
		c, updater, clk := setup(t, interceptor.Funcs{})
		recorder := record.NewFakeRecorder(10)
		updater.Recorder = recorder
		conditions := func() []v2alpha2.SchedulingCondition { return read(t, c).Status.SchedulingConditions }
		var shown []string
		if before != nil {
			updater.SetPending(map[model.JobID][]model.PendingReason{"ns/job": before}, nil)
			updater.Flush(context.Background())
			<-recorder.Events
			shown = []string{before[0].Reason}
			clk.Step(time.Minute) // the protection lasted a while
		}
		reasonsShown := func() []string {
			var reasons []string
			for _, c := range conditions() {
				for _, r := range c.Reasons {
					reasons = append(reasons, r.Reason)
				}
			}
			return reasons
		}
		awaiting := map[model.JobID][]model.PendingReason{"ns/job": {{Reason: model.ReasonAwaitingReleasedResources,
			Message: "waiting for resources being released on n1: they are promised to this job (its pods' nominated node)"}}}
		promised := clk.Now()
		for range 45 {
			updater.SetPending(awaiting, nil)
			updater.Flush(context.Background())
			if got := reasonsShown(); !slices.Equal(got, shown) || updater.PendingWrites() != 0 {
				t.Fatalf("a job awaiting its promise for %s shows %v, want %v still", clk.Since(promised), got, shown)
			}
			clk.Step(time.Second)
		}
		updater.SetPending(awaiting, nil)
		updater.Flush(context.Background())
		if got := reasonsShown(); !slices.Equal(got, []string{model.ReasonAwaitingReleasedResources}) {
			t.Fatalf("after 45s of waiting for its promise the condition shows %v, want the wait told", got)
		}
		if event := <-recorder.Events; !strings.HasPrefix(event, "Normal AwaitingReleasedResources ") {
			t.Fatalf("event %q, want a Normal one: the job is on its way", event)
		}
	}
}
