package model_test

import (
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// A job's saved point is its checkpoint clamped to [start of its run, now], and without a
// checkpoint its start stamp, unchanged from how victims were ranked before checkpoints.
func TestSavedPointClampsTheCheckpointToTheRun(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	// job runs one pod; podStart is what the kubelet reports (nil: not started yet), created
	// when the pod was created.
	job := func(stamp, checkpoint, podStart *time.Time, created time.Time) *model.JobInfo {
		j := &model.JobInfo{ID: "ns/j", LastStartTimestamp: stamp, LastCheckpoint: checkpoint}
		j.AddPod(&model.PodInfo{Name: "j-0", Status: model.Running, StartTime: podStart, CreationTime: created})
		return j
	}
	for _, c := range []struct {
		name       string
		job        *model.JobInfo
		want       *time.Time // nil: unknown
		wantSource model.SavedPointSource
	}{
		{"no checkpoint: the start stamp", job(at(-2*time.Hour), nil, at(-2*time.Hour), now.Add(-2*time.Hour)),
			at(-2 * time.Hour), model.SavedAtStart},
		{"no checkpoint and no stamp: unknown, as before, even if the pods started",
			job(nil, nil, at(-time.Hour), now.Add(-time.Hour)), nil, model.SavedAtStart},
		{"a checkpoint within the run", job(at(-2*time.Hour), at(-10*time.Minute), at(-2*time.Hour), now.Add(-2*time.Hour)),
			at(-10 * time.Minute), model.SavedAtCheckpoint},
		{"a checkpoint of an earlier run counts as the start", job(at(-time.Hour), at(-3*time.Hour), at(-time.Hour), now.Add(-time.Hour)),
			at(-time.Hour), model.CheckpointBeforeStart},
		{"a checkpoint in the future counts as now", job(at(-time.Hour), at(time.Hour), at(-time.Hour), now.Add(-time.Hour)),
			&now, model.CheckpointAfterNow},
		{"without a stamp the pods' start bounds the checkpoint", job(nil, at(-3*time.Hour), at(-time.Hour), now.Add(-time.Hour)),
			at(-time.Hour), model.CheckpointBeforeStart},
		{"a stamp of an earlier run gives way to the pods' start",
			job(at(-5*time.Hour), at(-3*time.Hour), at(-time.Hour), now.Add(-time.Hour)), at(-time.Hour), model.CheckpointBeforeStart},
		{"a run without a known start cannot place the checkpoint: as without one",
			job(nil, at(-time.Minute), nil, now.Add(-time.Hour)), nil, model.CheckpointWithoutStart},
		{"a start stamp in the future stays the saved point, as without a checkpoint",
			job(at(time.Hour), at(-time.Minute), at(-time.Hour), now.Add(-time.Hour)), at(time.Hour), model.CheckpointBeforeStart},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.job.SavedPoint(now)
			switch {
			case c.want == nil && got.Known:
				t.Fatalf("saved point %s, want unknown", got.At)
			case c.want != nil && (!got.Known || !got.At.Equal(*c.want)):
				t.Fatalf("saved point %s (known %v), want %s", got.At, got.Known, *c.want)
			case got.Source != c.wantSource:
				t.Fatalf("source %d, want %d", got.Source, c.wantSource)
			}
			// Reporting a checkpoint never makes a job count as losing more.
			without := *c.job
			without.LastCheckpoint = nil
			if model.CompareSavedPoints(got, without.SavedPoint(now)) > 0 {
				t.Fatalf("with its checkpoint the job ranks after itself without one: %+v", got)
			}
		})
	}
}

// Two jobs' order by saved point does not change as time passes, unless a future checkpoint
// is reached: then they were tied and are not any more.
func TestSavedPointOrderHoldsAsTimePasses(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	job := func(checkpoint *time.Time) *model.JobInfo {
		return &model.JobInfo{LastStartTimestamp: &start, LastCheckpoint: checkpoint}
	}
	cp := start.Add(time.Hour)
	older, newer, none := job(&cp), job(ptr(cp.Add(time.Minute))), job(nil)
	for now := cp.Add(time.Minute); now.Before(start.Add(24 * time.Hour)); now = now.Add(17 * time.Minute) {
		if c := model.CompareSavedPoints(newer.SavedPoint(now), older.SavedPoint(now)); c >= 0 {
			t.Fatalf("at %s the later checkpoint does not go first (%d)", now, c)
		}
		if c := model.CompareSavedPoints(older.SavedPoint(now), none.SavedPoint(now)); c >= 0 {
			t.Fatalf("at %s a checkpoint does not go before a start (%d)", now, c)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// The reduced order the victim search compares agrees with the saved points' times, down
// to the nanosecond and across the epoch, with unknown points last.
func TestSavedOrderAgreesWithTheTimes(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	times := []time.Time{base, base.Add(time.Nanosecond), base.Add(time.Second - time.Nanosecond),
		base.Add(time.Second), time.Unix(-1, 5), time.Unix(0, 0), {}}
	for _, l := range times {
		for _, r := range times {
			lp, rp := model.SavedPoint{At: l, Known: true}, model.SavedPoint{At: r, Known: true}
			if got, want := model.CompareSavedPoints(lp, rp), r.Compare(l); got != want {
				t.Errorf("CompareSavedPoints(%s, %s) = %d, want %d (later first)", l, r, got, want)
			}
			if got := model.CompareSavedPoints(lp, model.SavedPoint{At: r}); got != -1 {
				t.Errorf("a known point (%s) does not go before an unknown one: %d", l, got)
			}
		}
	}
	if got := model.CompareSavedPoints(model.SavedPoint{At: base}, model.SavedPoint{At: base.Add(time.Hour)}); got != 0 {
		t.Errorf("two unknown points are not tied, whatever their At: %d", got)
	}
}
