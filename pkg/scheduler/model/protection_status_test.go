package model_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/google/go-cmp/cmp"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// shownColumns are the fields of a status that kubectl get pg and readers of the status
// show, as kubectl prints them: RFC3339, empty when absent.
type shownColumns struct {
	PreemptUntil   string // the Preempt-Until column: .preempt.until
	ReclaimUntil   string // the Reclaim-Until column: .reclaimUntil
	ProtectedUntil string // .protectedUntil, kept for earlier readers
	LevelUntils    []string
}

func printed(t *metav1.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// Each side shows an end only when its min-runtime protects something: a min-runtime of 0s
// shows no end (not the start), and a job no min-runtime protects shows none at all. The
// reclaim end is the first end among the levels that protect.
func TestProtectionStatusShowsEachSideOnlyWhereItProtects(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 500_000_000, time.UTC) // ends round up to whole seconds
	level := func(outside string, d time.Duration) model.ReclaimLevel {
		return model.ReclaimLevel{Outside: outside, MinRuntime: model.MinRuntime{Duration: d, SetBy: outside}}
	}
	for _, c := range []struct {
		name       string
		protection model.Protection
		want       shownColumns
	}{{
		name: "reclaim only (preemptMinRuntime 0s, the usual setup): no preempt end",
		protection: model.Protection{Start: start, Preempt: model.MinRuntime{SetBy: "team"},
			Reclaim: []model.ReclaimLevel{level("team", 30*time.Minute)}},
		want: shownColumns{ReclaimUntil: "2026-01-01T00:30:01Z", ProtectedUntil: "2026-01-01T00:30:01Z",
			LevelUntils: []string{"2026-01-01T00:30:01Z"}},
	}, {
		name: "preempt only (reclaimMinRuntime 0s): no reclaim end",
		protection: model.Protection{Start: start, Preempt: model.MinRuntime{Duration: 10 * time.Minute},
			Reclaim: []model.ReclaimLevel{level("team", 0)}},
		want: shownColumns{PreemptUntil: "2026-01-01T00:10:01Z", ProtectedUntil: "2026-01-01T00:10:01Z",
			LevelUntils: []string{""}},
	}, {
		name: "both: each its own end, the earlier of them first",
		protection: model.Protection{Start: start, Preempt: model.MinRuntime{Duration: time.Hour},
			Reclaim: []model.ReclaimLevel{level("dept", 2*time.Hour), level("team", 20*time.Minute)}},
		want: shownColumns{PreemptUntil: "2026-01-01T01:00:01Z", ReclaimUntil: "2026-01-01T00:20:01Z",
			ProtectedUntil: "2026-01-01T00:20:01Z", LevelUntils: []string{"2026-01-01T02:00:01Z", "2026-01-01T00:20:01Z"}},
	}, {
		name: "neither: no end anywhere",
		protection: model.Protection{Start: start,
			Reclaim: []model.ReclaimLevel{level("dept", 0), level("team", 0)}},
		want: shownColumns{LevelUntils: []string{"", ""}},
	}, {
		name: "a reclaim level of 0s is left out of the reclaim end",
		protection: model.Protection{Start: start,
			Reclaim: []model.ReclaimLevel{level("dept", time.Hour), level("team", 0)}},
		want: shownColumns{ReclaimUntil: "2026-01-01T01:00:01Z", ProtectedUntil: "2026-01-01T01:00:01Z",
			LevelUntils: []string{"2026-01-01T01:00:01Z", ""}},
	}, {
		name:       "no queue beside its path: no reclaim level, no reclaim end",
		protection: model.Protection{Start: start, Preempt: model.MinRuntime{Duration: time.Minute}},
		want:       shownColumns{PreemptUntil: "2026-01-01T00:01:01Z", ProtectedUntil: "2026-01-01T00:01:01Z"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			s := c.protection.Status()
			got := shownColumns{PreemptUntil: printed(s.Preempt.Until), ReclaimUntil: printed(s.ReclaimUntil),
				ProtectedUntil: printed(s.ProtectedUntil)}
			for _, r := range s.Reclaim {
				got.LevelUntils = append(got.LevelUntils, printed(r.Until))
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("shown ends (-want +got):\n%s", diff)
			}
			if !s.Start.Equal(&metav1.Time{Time: start.Truncate(time.Second)}) {
				t.Errorf("start %s, want %s", s.Start, start.Truncate(time.Second))
			}
			// The scheduler reads the status back as the protection it wrote: the absent
			// ends change nothing it compares.
			if back := model.ShownProtection(s); back == nil || !back.Equal(c.protection.Shown()) {
				t.Errorf("read back %+v, want %+v", back, c.protection.Shown())
			}
			if protects := c.protection.Protects(); protects != (got.ProtectedUntil != "") {
				t.Errorf("Protects() is %v but the status shows protectedUntil %q: the scheduler writes a status exactly when it shows an end", protects, got.ProtectedUntil)
			}
		})
	}
}
