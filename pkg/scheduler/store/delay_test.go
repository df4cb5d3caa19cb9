package store

import (
	"context"
	"testing"
	"time"

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// The PodGroup's field wins, then its annotation, then its pods'; a bad annotation leaves no
// delay, is kept on the job to be told in its condition, and is reported (as an event) on
// the PodGroup.
func TestPreemptionDelayPrecedenceAndBadAnnotations(t *testing.T) {
	const key = scheduling.PreemptionDelayAnnotation
	evicted := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name        string
		group       *builders.PodGroupWrapper
		podValue    string
		want        time.Duration
		wantProblem bool
	}{
		{"the field wins over both annotations", builders.MakePodGroup("ns", "job").PreemptionDelay(time.Minute).Annotation(key, "2m"), "3m", time.Minute, false},
		{"the PodGroup's annotation wins over the pods'", builders.MakePodGroup("ns", "job").Annotation(key, "2m"), "3m", 2 * time.Minute, false},
		{"the pods' annotation when the PodGroup has none", builders.MakePodGroup("ns", "job"), "3m", 3 * time.Minute, false},
		{"a unit-less number is named, not used", builders.MakePodGroup("ns", "job").Annotation(key, "300"), "3m", 0, true},
		{"a negative pod annotation is named", builders.MakePodGroup("ns", "job"), "-1m", 0, true},
		{"no delay anywhere", builders.MakePodGroup("ns", "job").EvictedAt(evicted), "", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := pod("a")
			if tc.podValue != "" {
				p = p.Annotation(key, tc.podValue)
			}
			objects := []client.Object{builders.MakeNode("n1").GPUs(8).Obj(), tc.group.Queue("q").Obj(), p.Obj()}
			c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(objects...).Build()
			snapshot, problems, err := (&Builder{Reader: c, SchedulerName: "kai-scheduler"}).Snapshot(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			job := snapshot.Job("ns/job")
			if job.PreemptionDelay != tc.want || (job.PreemptionDelayProblem != "") != tc.wantProblem {
				t.Fatalf("delay %v (problem %q), want %v (a problem: %v)", job.PreemptionDelay, job.PreemptionDelayProblem, tc.want, tc.wantProblem)
			}
			reported := len(problems) == 1 && problems[0].Reason == model.ReasonInvalidPreemptionDelay &&
				problems[0].Object.GetName() == "job" && isPodGroup(problems[0].Object)
			if reported != tc.wantProblem || (!tc.wantProblem && len(problems) != 0) {
				t.Fatalf("problems %v, want the PodGroup reported: %v", problems, tc.wantProblem)
			}
		})
	}
}

func isPodGroup(obj client.Object) bool {
	_, ok := obj.(*v2alpha2.PodGroup)
	return ok
}

// A job's eviction, remembered by the overlay, re-arms its preemption delay before the
// informer shows the PodGroup's stamp; once it shows it (or a later one), the overlay lets go.
func TestOverlayHoldsAnEvictionUntilTheInformerShowsIt(t *testing.T) {
	evicted := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	overlay := NewOverlay(clock.RealClock{})
	overlay.JobEvicted("ns/job", evicted)
	overlay.JobEvicted("ns/job", evicted.Add(-time.Minute)) // an earlier one changes nothing
	for _, tc := range []struct {
		name  string
		group *builders.PodGroupWrapper
		want  time.Time
	}{
		{"the informer lags", builders.MakePodGroup("ns", "job"), evicted},
		{"the informer shows an older eviction", builders.MakePodGroup("ns", "job").EvictedAt(evicted.Add(-time.Hour)), evicted},
		{"the informer shows it", builders.MakePodGroup("ns", "job").EvictedAt(evicted), evicted},
		{"forgotten once shown", builders.MakePodGroup("ns", "job"), time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(tc.group.Queue("q").Obj(), pod("a").Obj()).Build()
			snapshot, _, err := (&Builder{Reader: c, SchedulerName: "kai-scheduler", Overlay: overlay}).Snapshot(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			got := snapshot.Job("ns/job").LastEvictionTimestamp
			if (got == nil) != tc.want.IsZero() || (got != nil && !got.Equal(tc.want)) {
				t.Fatalf("last eviction %v, want %v", got, tc.want)
			}
		})
	}
}
