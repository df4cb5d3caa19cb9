package minruntime_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/plugins/minruntime"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/store"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
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
	levels := []model.ReclaimLevel{{Outside: "org", MinRuntime: minruntime.Resolution{Duration: time.Minute}}}
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

// A queue's annotations set escalation for its subtree, each setting from the nearest queue
// that sets it, the plugin's arguments where none does; a factor with no ceiling anywhere
// leaves escalation off, told by Describe.
func TestEscalationForQueue(t *testing.T) {
	queue := func(name, parent string, annotations ...string) *v2.Queue {
		q := builders.MakeQueue(name).Parent(parent).Obj()
		q.Annotations = map[string]string{}
		for i := 0; i+1 < len(annotations); i += 2 {
			q.Annotations[annotations[i]] = annotations[i+1]
		}
		return q
	}
	var infos []*model.QueueInfo
	for _, q := range []*v2.Queue{
		queue("org", "", scheduling.EscalationCeilingAnnotation, "2h"),
		queue("research", "org", scheduling.EscalationFactorAnnotation, "3"),
		queue("team", "research", scheduling.EscalationCeilingAnnotation, "90m"),
		queue("prod", "org", scheduling.EscalationFactorAnnotation, "1"),
		queue("loose", "", scheduling.EscalationFactorAnnotation, "2"),
	} {
		infos = append(infos, store.QueueInfo(q))
	}
	tree := model.NewQueueTree(infos)
	plugin := minruntime.Escalation{Factor: 2, Ceiling: 4 * time.Hour}
	off := minruntime.Escalation{Factor: 1}
	tests := []struct {
		name      string
		args      minruntime.Escalation
		queue     string
		want      minruntime.Escalation
		described string
	}{
		{"the nearest of each: factor from research, ceiling from team", plugin, "team",
			minruntime.Escalation{Factor: 3, Ceiling: 90 * time.Minute, FactorSetBy: "research", CeilingSetBy: "team"},
			"×3 per eviction (queue research), up to 1h30m0s (queue team)"},
		{"factor from research, ceiling from org", off, "research",
			minruntime.Escalation{Factor: 3, Ceiling: 2 * time.Hour, FactorSetBy: "research", CeilingSetBy: "org"},
			"×3 per eviction (queue research), up to 2h0m0s (queue org)"},
		{"a queue turns escalation off under arguments that turn it on", plugin, "prod",
			minruntime.Escalation{Factor: 1, Ceiling: 2 * time.Hour, FactorSetBy: "prod", CeilingSetBy: "org"}, "off (queue prod)"},
		{"a factor without a ceiling anywhere: off, and said why", off, "loose",
			minruntime.Escalation{Factor: 1, FactorSetBy: "loose", NoCeiling: true},
			"off: the factor (queue loose) has no ceiling above 0s on the queue's path or in the plugin's arguments"},
		{"the same factor with the plugin's ceiling", plugin, "loose",
			minruntime.Escalation{Factor: 2, Ceiling: 4 * time.Hour, FactorSetBy: "loose"}, "×2 per eviction (queue loose), up to 4h0m0s"},
		{"an unknown queue: the plugin's arguments", plugin, "nowhere", plugin, "×2 per eviction, up to 4h0m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.args.For(tree, tt.queue)
			if got != tt.want {
				t.Errorf("For(%s) = %+v, want %+v", tt.queue, got, tt.want)
			}
			if d := got.Describe(); d != tt.described {
				t.Errorf("Describe() = %q, want %q", d, tt.described)
			}
		})
	}
}

// An escalation annotation that cannot be read is ignored (the setting inherited) and named
// in a problem on the Queue.
func TestBadEscalationAnnotationsAreIgnoredAndTold(t *testing.T) {
	q := builders.MakeQueue("research").Obj()
	q.Annotations = map[string]string{scheduling.EscalationFactorAnnotation: "0.5", scheduling.EscalationCeilingAnnotation: "soon"}
	info := store.QueueInfo(q)
	if info.EscalationFactor != nil || info.EscalationCeiling != nil {
		t.Errorf("bad values were kept: factor %v, ceiling %v", info.EscalationFactor, info.EscalationCeiling)
	}
	converted := store.New("kai-scheduler", scheduling.NodePool{})
	converted.Upsert(q)
	_, problems, err := (&store.Builder{Store: converted}).Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var told []string
	for _, p := range problems {
		if p.Object.GetName() == "research" && p.Reason == model.ReasonInvalidEscalationAnnotation {
			told = append(told, p.Message)
		}
	}
	if len(told) != 2 || !strings.Contains(told[0], "escalation-factor") || !strings.Contains(told[1], `"soon"`) {
		t.Errorf("problems told %q, want one per annotation, naming each", told)
	}
}
