package minruntime_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/plugins/minruntime"
)

func dur(d time.Duration) *time.Duration { return &d }

// A job's own min-runtime may only shorten what its queues give it.
func TestShorten(t *testing.T) {
	queues := minruntime.Resolution{Duration: 10 * time.Minute, SetBy: "team", Path: []string{"org", "team"}}
	tests := []struct {
		name          string
		preempt, recl *time.Duration
		wantPreempt   minruntime.Resolution
		wantReclaim   minruntime.Resolution
	}{
		{"no annotation: the queues' value, as before", nil, nil, queues, queues},
		{"a lower reclaim value is honoured, named as the job's annotation, preempt untouched",
			nil, dur(time.Minute), queues,
			minruntime.Resolution{Duration: time.Minute, SetBy: scheduling.ReclaimMinRuntimeAnnotation, Path: queues.Path,
				Shortened: model.Shortened{Duration: 10 * time.Minute, SetBy: "team"}}},
		{"0s is the shortest: the job volunteers to be taken at any time",
			dur(0), nil,
			minruntime.Resolution{Duration: 0, SetBy: scheduling.PreemptMinRuntimeAnnotation, Path: queues.Path,
				Shortened: model.Shortened{Duration: 10 * time.Minute, SetBy: "team"}}, queues},
		{"an equal value is not honoured: the queues' value stands, declined",
			dur(10 * time.Minute), nil, declined(queues, 10*time.Minute), queues},
		{"a higher value is not honoured: the queues' value stands, declined",
			nil, dur(time.Hour), queues, declined(queues, time.Hour)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := &model.JobInfo{OwnPreemptMinRuntime: tt.preempt, OwnReclaimMinRuntime: tt.recl}
			if diff := cmp.Diff(tt.wantPreempt, minruntime.ShortenPreempt(queues, job)); diff != "" {
				t.Errorf("preempt (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantReclaim, minruntime.ShortenReclaim(queues, job)); diff != "" {
				t.Errorf("reclaim (-want +got):\n%s", diff)
			}
		})
	}
}

func declined(r minruntime.Resolution, asked time.Duration) minruntime.Resolution {
	r.Declined = &asked
	return r
}

// Each reclaim level is shortened on its own; a job without the annotation shares the
// queue's levels (no copy), and a declined one is told with the level it lost to.
func TestShortenLevels(t *testing.T) {
	levels := []model.ReclaimLevel{
		{Outside: "org", MinRuntime: model.MinRuntime{Duration: 30 * time.Minute, SetBy: "org"}},
		{Outside: "team", MinRuntime: model.MinRuntime{Duration: 5 * time.Minute, SetBy: "team"}},
	}
	if got := minruntime.ShortenLevels(levels, &model.JobInfo{}); &got[0] != &levels[0] {
		t.Errorf("a job without the annotation got a copy of its queue's levels")
	}
	job := &model.JobInfo{OwnReclaimMinRuntime: dur(10 * time.Minute)}
	got := minruntime.ShortenLevels(levels, job)
	if got[0].Duration != 10*time.Minute || !got[0].ByJob() || got[0].Source() != "the job's annotation "+scheduling.ReclaimMinRuntimeAnnotation {
		t.Errorf("outer level: got %+v, want 10m from the job's annotation", got[0])
	}
	if got[1].Duration != 5*time.Minute || got[1].SetBy != "team" || got[1].Declined == nil {
		t.Errorf("inner level: got %+v, want team's 5m, the annotation declined", got[1])
	}
	if levels[0].Duration != 30*time.Minute {
		t.Errorf("the queue's shared levels were modified")
	}
	lines := model.Protection{Reclaim: got}.Declined()
	if len(lines) != 1 || !strings.Contains(lines[0], "outside team") || !strings.Contains(lines[0], "queue team") {
		t.Errorf("declined lines: %q, want one naming the team level", lines)
	}
}
