package minruntime_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/plugins/minruntime"
)

func TestEffectiveStartCannotBeExtendedByEditingTheStamp(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { v := now.Add(d); return &v }
	job := func(stamp *time.Time, podStarts ...*time.Time) *model.JobInfo {
		j := &model.JobInfo{LastStartTimestamp: stamp}
		for _, s := range podStarts {
			j.Pods = append(j.Pods, &model.PodInfo{Status: model.Running, StartTime: s})
		}
		return j
	}
	created := func(j *model.JobInfo, ago time.Duration) *model.JobInfo {
		for _, p := range j.Pods {
			p.CreationTime = now.Add(ago)
		}
		return j
	}
	tests := []struct {
		name      string
		job       *model.JobInfo
		want      *time.Time
		wantNoted bool
	}{
		{"the stamp counts when pods started after it (the usual case)",
			job(at(-10*time.Minute), at(-9*time.Minute)), at(-10 * time.Minute), false},
		{"a stamp rewritten later than the pods started is capped by them",
			job(at(-1*time.Minute), at(-30*time.Minute), at(-20*time.Minute)), at(-30 * time.Minute), true},
		{"a stamp in the future is ignored",
			job(at(time.Hour), at(-5*time.Minute)), at(-5 * time.Minute), true},
		{"a pod start reported in whole seconds, just before the stamp, does not cut protection short",
			job(at(-10*time.Minute+300*time.Millisecond), at(-10*time.Minute)), at(-10*time.Minute + 300*time.Millisecond), false},
		{"a stamp rewritten earlier, but not before the pods exist, only shortens protection",
			job(at(-2*time.Hour), at(-5*time.Minute)), at(-2 * time.Hour), false},
		{"a stamp left from an earlier run, older than every running pod, gives way to the pods' start",
			created(job(at(-5*time.Hour), at(-time.Minute)), -2*time.Minute), at(-time.Minute), true},
		{"without a stamp the pods' start counts",
			job(nil, at(-3*time.Minute)), at(-3 * time.Minute), false},
		{"with neither the job has not run", job(nil), nil, false},
		{"a future stamp and no started pod: not running yet", job(at(time.Minute)), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, known, note := minruntime.EffectiveStart(tt.job, now)
			if tt.want == nil {
				if known {
					t.Fatalf("got start %v, want none", got)
				}
			} else if !known || !got.Equal(*tt.want) {
				t.Fatalf("got %v (known %v), want %v", got, known, *tt.want)
			}
			if (note != "") != tt.wantNoted {
				t.Errorf("note %q, want noted=%v", note, tt.wantNoted)
			}
		})
	}
}

func TestArgumentErrorsNameTheArgument(t *testing.T) {
	tests := []struct {
		args framework.Arguments
		want string
	}{
		{framework.Arguments{"defaultReclaimMinRuntime": "-5m"}, "defaultReclaimMinRuntime: must not be negative"},
		{framework.Arguments{"defaultPreemptMinRuntime": "ten minutes"}, `defaultPreemptMinRuntime: invalid duration "ten minutes"`},
		{framework.Arguments{"reclaimResolveMethod": "nearest"}, `reclaimResolveMethod: must be "lca" or "queue", got "nearest"`},
		{framework.Arguments{"defaultReclaimMinRuntme": "5m"}, `unknown argument "defaultReclaimMinRuntme"`},
	}
	for _, tt := range tests {
		if _, err := minruntime.New(tt.args); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%v) = %v, want an error containing %q", tt.args, err, tt.want)
		}
	}
	if _, err := minruntime.New(framework.Arguments{
		"defaultPreemptMinRuntime": "1d", "defaultReclaimMinRuntime": "1w2d", "reclaimResolveMethod": "queue",
	}); err != nil {
		t.Errorf("days, weeks and the queue method are valid: %v", err)
	}
}
