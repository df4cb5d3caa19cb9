package minruntime_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/plugins/minruntime"
)

func TestEscalate(t *testing.T) {
	queues := minruntime.Resolution{Duration: 45 * time.Minute, SetBy: "research"}
	doubling := minruntime.Escalation{Factor: 2, Ceiling: 4 * time.Hour}
	tests := []struct {
		name       string
		escalation minruntime.Escalation
		base       time.Duration
		evictions  int32
		want, from time.Duration
	}{
		{"never evicted: the queues' value", doubling, queues.Duration, 0, 45 * time.Minute, 0},
		{"once: doubled", doubling, queues.Duration, 1, 90 * time.Minute, 45 * time.Minute},
		{"twice: four times", doubling, queues.Duration, 2, 3 * time.Hour, 45 * time.Minute},
		{"three times: the ceiling, not 6h", doubling, queues.Duration, 3, 4 * time.Hour, 45 * time.Minute},
		{"a thousand times: the ceiling, no overflow", doubling, queues.Duration, 1000, 4 * time.Hour, 45 * time.Minute},
		{"off: the queues' value however often", minruntime.Escalation{Factor: 1}, queues.Duration, 5, 45 * time.Minute, 0},
		{"0s stays 0s: escalation protects nothing the operator left open", doubling, 0, 5, 0, 0},
		{"at or above the ceiling: left as it is, never shortened", doubling, 5 * time.Hour, 2, 5 * time.Hour, 0},
		{"a fractional factor, rounded to the second", minruntime.Escalation{Factor: 1.5, Ceiling: time.Hour}, 10*time.Minute + time.Second, 1,
			15*time.Minute + 2*time.Second, 10*time.Minute + time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := queues
			r.Duration = tt.base
			got := tt.escalation.Escalate(r, tt.evictions)
			if got.Duration != tt.want || got.EscalatedFrom != tt.from || got.SetBy != "research" {
				t.Errorf("Escalate(%s, %d) = %s escalated from %s (set by %q), want %s from %s",
					tt.base, tt.evictions, got.Duration, got.EscalatedFrom, got.SetBy, tt.want, tt.from)
			}
		})
	}
}

// Levels are shared by a queue's jobs: escalation copies them, never writes into them.
func TestEscalateLevelsCopies(t *testing.T) {
	levels := []api.ReclaimLevel{{Outside: "org", MinRuntime: minruntime.Resolution{Duration: time.Minute}}}
	e := minruntime.Escalation{Factor: 3, Ceiling: time.Hour}
	if got := e.EscalateLevels(levels, 0); &got[0] != &levels[0] {
		t.Error("a job never evicted must share the queue's levels")
	}
	got := e.EscalateLevels(levels, 2)
	if got[0].Duration != 9*time.Minute || levels[0].Duration != time.Minute {
		t.Errorf("escalated %s (want 9m), shared level now %s (want 1m)", got[0].Duration, levels[0].Duration)
	}
}

// Bad escalation arguments stop the scheduler with an error naming the argument.
func TestEscalationArguments(t *testing.T) {
	tests := []struct {
		args framework.Arguments
		want string // "" for accepted
	}{
		{framework.Arguments{"escalationFactor": "2", "escalationCeiling": "4h"}, ""},
		{framework.Arguments{"escalationFactor": "1"}, ""},
		{framework.Arguments{"escalationFactor": "2"}, "escalationCeiling: escalationFactor of 2 needs a ceiling above 0s"},
		{framework.Arguments{"escalationFactor": "2", "escalationCeiling": "0s"}, "needs a ceiling above 0s"},
		{framework.Arguments{"escalationFactor": "0.5", "escalationCeiling": "1h"}, "escalationFactor: must be a number of at least 1"},
		{framework.Arguments{"escalationFactor": "NaN", "escalationCeiling": "1h"}, "escalationFactor: must be a number"},
		{framework.Arguments{"escalationFactor": "twice", "escalationCeiling": "1h"}, `got "twice"`},
		{framework.Arguments{"escalationCeiling": "1h"}, "escalationCeiling: has no effect without escalationFactor above 1"},
		{framework.Arguments{"escalationFactor": "2", "escalationCeiling": "-1h"}, "escalationCeiling: must not be negative"},
	}
	for _, tt := range tests {
		p, err := minruntime.New(tt.args)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%v: refused: %v", tt.args, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%v: error %v, want one containing %q", tt.args, err, tt.want)
		case tt.want == "" && tt.args["escalationFactor"] == "2":
			if got := p.(*minruntime.Plugin).Escalation(); got != (minruntime.Escalation{Factor: 2, Ceiling: 4 * time.Hour}) {
				t.Errorf("%v: escalation %+v", tt.args, got)
			}
		}
	}
}
