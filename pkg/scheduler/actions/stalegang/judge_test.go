package stalegang_test

import (
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions/stalegang"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

func TestJudge(t *testing.T) {
	now := harness.Epoch.Add(time.Hour)
	tests := []struct {
		name string
		edit func(*model.JobInfo) // of a gang of 2 with one pod running since Epoch
		want func(stalegang.Verdict) bool
	}{
		{"a job below its minimum is short since now, without a trace", func(*model.JobInfo) {},
			func(v stalegang.Verdict) bool {
				return v == stalegang.Verdict{Short: true, Group: "gang", Have: 1, Minimum: 2, Since: now, Grace: time.Minute, EvictAt: now.Add(time.Minute)}
			}},
		{"a job whose pods began to succeed is finishing, not short", func(j *model.JobInfo) { j.SucceededPods = 1 },
			func(v stalegang.Verdict) bool { return !v.Short }},
		{"a failure older than the pods running now (an earlier run's) is no trace", func(j *model.JobInfo) { j.LastPodFailure = harness.Epoch.Add(-time.Second) },
			func(v stalegang.Verdict) bool { return !v.Traced }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := &model.JobInfo{ID: "ns/j", MinMember: 2}
			j.AddPod(&model.PodInfo{Name: "j-0", Status: model.Running, CreationTime: harness.Epoch})
			tt.edit(j)
			if v := stalegang.Judge(j, time.Minute, now); !tt.want(v) {
				t.Errorf("Judge = %+v", v)
			}
		})
	}
}
