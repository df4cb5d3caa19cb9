package status_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/google/go-cmp/cmp"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/store"
)

// A running job's status shows its protection in whole seconds, never shorter than it is;
// the same protection is written once however many cycles report it before the informers
// catch up; fields a later protection leaves empty are removed, an end among them when its
// min-runtime becomes 0s; and a job that stops being protected stops showing it.
func TestProtectionIsShownOnceAndCleared(t *testing.T) {
	writes := 0
	c, updater, clk := setup(t, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			writes++
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	ctx := context.Background()
	began := start.Add(1500 * time.Millisecond)
	p := model.Protection{
		Start: began, StartNote: "start stamp is later than the job's pods started; their start counts",
		Preempt: model.MinRuntime{Duration: 10 * time.Minute, SetBy: "team"},
		Reclaim: []model.ReclaimLevel{
			{Outside: "dept", MinRuntime: model.MinRuntime{Duration: time.Hour}},
			{Outside: "team", MinRuntime: model.MinRuntime{Duration: 5 * time.Minute, SetBy: "team"}},
		},
	}
	updater.SetProtections([]model.ProtectionChange{{Job: "ns/job", Protection: p}})
	updater.Flush(ctx)

	at := func(d time.Duration) *metav1.Time { t := metav1.NewTime(start.Add(d)); return &t }
	want := &v2alpha2.MinRuntimeStatus{
		Start: *at(time.Second), StartNote: p.StartNote,
		ProtectedUntil: at(5*time.Minute + 2*time.Second), // 1.5 s past the start rounds up
		ReclaimUntil:   at(5*time.Minute + 2*time.Second),
		Preempt:        v2alpha2.MinRuntimeProtection{MinRuntime: metav1.Duration{Duration: 10 * time.Minute}, SetBy: "team", Until: at(10*time.Minute + 2*time.Second)},
		Reclaim: []v2alpha2.ReclaimProtection{
			{FromOutside: "dept", MinRuntimeProtection: v2alpha2.MinRuntimeProtection{MinRuntime: metav1.Duration{Duration: time.Hour}, Until: at(time.Hour + 2*time.Second)}},
			{FromOutside: "team", MinRuntimeProtection: v2alpha2.MinRuntimeProtection{MinRuntime: metav1.Duration{Duration: 5 * time.Minute}, SetBy: "team", Until: at(5*time.Minute + 2*time.Second)}},
		},
	}
	group := read(t, c)
	if diff := cmp.Diff(want, group.Status.MinRuntime); diff != "" {
		t.Fatalf("status (-want +got):\n%s", diff)
	}
	if writes != 1 || updater.PendingWrites() != 0 {
		t.Fatalf("%d writes, %d still queued; want one write, none queued", writes, updater.PendingWrites())
	}

	// The scheduler reads the status back as the protection it wrote, so the next cycle
	// finds nothing to change.
	converted := store.New("kai-scheduler", scheduling.NodePool{})
	converted.Handler().OnAdd(group, true)
	snapshot, _, err := (&store.Builder{Store: converted}).Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if shown := snapshot.Job("ns/job").ShownProtection; shown == nil || !shown.Equal(p.Shown()) {
		t.Fatalf("read back %+v, want %+v", shown, p.Shown())
	}

	// Cycles that run before the informers show the write report it again: no second write.
	updater.SetProtections([]model.ProtectionChange{{Job: "ns/job", Protection: p}})
	updater.Flush(ctx)
	if writes != 1 {
		t.Fatalf("the same protection was written %d times", writes)
	}
	// Still reported after a while: something undid the write (another writer, a PodGroup
	// recreated under the name), and it is written again rather than never.
	clk.Step(time.Minute)
	updater.SetProtections([]model.ProtectionChange{{Job: "ns/job", Protection: p}})
	updater.Flush(ctx)
	if writes != 2 {
		t.Fatalf("a protection still reported a minute after its write was written %d times, want 2", writes)
	}

	// A new run with a trusted stamp and default values: the note and the queue go.
	later := p
	later.Start, later.StartNote, later.Preempt = start.Add(time.Hour), "", model.MinRuntime{Duration: time.Minute}
	updater.SetProtections([]model.ProtectionChange{{Job: "ns/job", Protection: later}})
	updater.Flush(ctx)
	got := read(t, c).Status.MinRuntime
	if got == nil || got.StartNote != "" || got.Preempt.SetBy != "" || !got.Start.Equal(&metav1.Time{Time: start.Add(time.Hour)}) {
		t.Fatalf("after a new run the status shows %+v, want the new start without note or queue", got)
	}

	// Its queue sets preemptMinRuntime 0s: the preempt end goes (a 0s protection has none),
	// and the first end is the reclaim one.
	unpreempted := later
	unpreempted.Preempt = model.MinRuntime{SetBy: "team"}
	updater.SetProtections([]model.ProtectionChange{{Job: "ns/job", Protection: unpreempted}})
	updater.Flush(ctx)
	got = read(t, c).Status.MinRuntime
	reclaimEnd := at(time.Hour + 5*time.Minute)
	if got == nil || got.Preempt.Until != nil || !got.ReclaimUntil.Equal(reclaimEnd) || !got.ProtectedUntil.Equal(reclaimEnd) {
		t.Fatalf("with preemptMinRuntime 0s the status shows %+v, want no preempt end and both other ends at %s", got, reclaimEnd)
	}
	// Only the preempt min-runtime protects: the reclaim ends go, each level's and the first.
	unreclaimed := later
	unreclaimed.Reclaim = []model.ReclaimLevel{{Outside: "team", MinRuntime: model.MinRuntime{SetBy: "team"}}}
	updater.SetProtections([]model.ProtectionChange{{Job: "ns/job", Protection: unreclaimed}})
	updater.Flush(ctx)
	got = read(t, c).Status.MinRuntime
	preemptEnd := at(time.Hour + time.Minute)
	if got == nil || got.ReclaimUntil != nil || len(got.Reclaim) != 1 || got.Reclaim[0].Until != nil ||
		!got.Preempt.Until.Equal(preemptEnd) || !got.ProtectedUntil.Equal(preemptEnd) {
		t.Fatalf("with reclaimMinRuntime 0s the status shows %+v, want no reclaim end and both other ends at %s", got, preemptEnd)
	}

	updater.SetProtections([]model.ProtectionChange{{Job: "ns/job", None: true}})
	updater.Flush(ctx)
	if got := read(t, c).Status.MinRuntime; got != nil {
		t.Fatalf("a job no longer protected still shows %+v", got)
	}
	if writes != 6 {
		t.Fatalf("%d writes, want 6 (shown, shown again, changed three times, cleared)", writes)
	}
}
