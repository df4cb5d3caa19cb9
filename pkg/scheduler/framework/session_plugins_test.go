package framework_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

// fakePlugin registers whatever its fields hold.
type fakePlugin struct {
	name          string
	isPreemptible framework.IsPreemptibleFn
	filters       framework.ScenarioFiltersFn
	predicate     framework.PredicateFn
	allocatable   framework.AllocatableFn
	closed        *[]string
}

func (p *fakePlugin) Name() string { return p.name }
func (p *fakePlugin) OnSessionOpen(ssn *framework.Session) {
	if p.isPreemptible != nil {
		ssn.AddIsPreemptibleFn(p.name, p.isPreemptible)
	}
	if p.filters != nil {
		ssn.AddScenarioFiltersFn(p.name, p.filters)
	}
	if p.predicate != nil {
		ssn.AddPredicateFn(p.name, p.predicate)
	}
	if p.allocatable != nil {
		ssn.AddAllocatableFn(p.name, p.allocatable)
	}
}
func (p *fakePlugin) OnSessionClose(*framework.Session) {
	if p.closed != nil {
		*p.closed = append(*p.closed, p.name)
	}
}

// namedFilter is a scenario filter that only has a name.
type namedFilter string

func (f namedFilter) Name() string                               { return string(f) }
func (f namedFilter) Allows(framework.Scenario) framework.Status { return framework.Status{} }

// refusingFilter refuses every scenario, and every plan when it is a plan filter.
type refusingFilter struct{ name, reason string }

func (f refusingFilter) Name() string { return f.name }
func (f refusingFilter) Allows(framework.Scenario) framework.Status {
	return framework.NewStatus(framework.Unschedulable, f.reason)
}

type refusingPlanFilter struct{ refusingFilter }

func (f refusingPlanFilter) Allows(framework.Scenario) framework.Status { return framework.Status{} }
func (f refusingPlanFilter) AllowsPlan(framework.Scenario) framework.Status {
	return framework.NewStatus(framework.Unschedulable, f.reason)
}

// no is a refusal in a plugin's words, without its name: the session adds it.
func no(reason string) framework.Status { return framework.NewStatus(framework.Unschedulable, reason) }

func openSession(t *testing.T, plugins ...framework.Plugin) *framework.Session {
	t.Helper()
	snapshot, err := model.NewSnapshot(nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return framework.OpenSession(context.Background(), framework.SessionOptions{
		Snapshot: snapshot, Clock: clocktesting.NewFakePassiveClock(harness.Epoch), Plugins: plugins,
	})
}

var preemptor = &model.JobInfo{ID: "ns/preemptor"}
var victim = &model.JobInfo{ID: "ns/victim"}

// answer is a plugin whose IsPreemptible says yes or no, checking it is asked about
// preemptor and victim and recording the action it is asked for.
func answer(t *testing.T, name string, yes bool, calls *[]framework.ActionType) *fakePlugin {
	return &fakePlugin{name: name, isPreemptible: func(action framework.ActionType, p, v *model.JobInfo) framework.Status {
		if p != preemptor || v != victim {
			t.Errorf("%s asked about %s evicting %s, want the preemptor and the victim the session was given", name, p.ID, v.ID)
		}
		*calls = append(*calls, action)
		if yes {
			return framework.Status{}
		}
		return no(name + " protects it")
	}}
}

func TestIsPreemptibleWithoutHooksIsASuccess(t *testing.T) {
	if verdict := openSession(t).IsPreemptible(framework.Reclaim, preemptor, victim); !verdict.IsSuccess() {
		t.Errorf("no plugin registered the hook, yet the verdict is %q", verdict.Message())
	}
}

// IsPreemptible ANDs every plugin's answer: the first refusal is the verdict, naming its plugin.
func TestIsPreemptibleANDsEveryPluginsAnswer(t *testing.T) {
	for _, tt := range []struct {
		name        string
		answers     []bool
		wantMessage string
	}{
		{"all yes: preemptible", []bool{true, true, true}, ""},
		{"one no: protected", []bool{true, false, true}, "b: b protects it"},
		{"first no: protected", []bool{false, true}, "a: a protects it"},
		{"all no: protected, by the first", []bool{false, false}, "a: a protects it"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var calls []framework.ActionType
			var plugins []framework.Plugin
			for i, yes := range tt.answers {
				plugins = append(plugins, answer(t, string(rune('a'+i)), yes, &calls))
			}
			verdict := openSession(t, plugins...).IsPreemptible(framework.Preempt, preemptor, victim)
			if verdict.IsSuccess() != (tt.wantMessage == "") || verdict.Message() != tt.wantMessage {
				t.Errorf("verdict: success %v, message %q; want message %q", verdict.IsSuccess(), verdict.Message(), tt.wantMessage)
			}
		})
	}
}

func TestIsPreemptiblePassesTheActionTypeToEveryPlugin(t *testing.T) {
	var calls []framework.ActionType
	ssn := openSession(t, answer(t, "a", true, &calls), answer(t, "b", true, &calls))
	ssn.IsPreemptible(framework.Reclaim, preemptor, victim)
	ssn.IsPreemptible(framework.Preempt, preemptor, victim)
	if want := []framework.ActionType{framework.Reclaim, framework.Reclaim, framework.Preempt, framework.Preempt}; !slices.Equal(calls, want) {
		t.Errorf("plugins asked for %v, want %v", calls, want)
	}
}

// GetAccumulatedScenarioFilters concatenates every plugin's filters in plugin order, passing
// action and job through.
func TestScenarioFiltersConcatenateInPluginOrder(t *testing.T) {
	var seen []framework.ActionType
	source := func(names ...string) framework.ScenarioFiltersFn {
		return func(action framework.ActionType, pending *model.JobInfo) []framework.ScenarioFilter {
			if pending != preemptor {
				t.Errorf("filters asked for %s, want the preemptor", pending.ID)
			}
			seen = append(seen, action)
			var filters []framework.ScenarioFilter
			for _, n := range names {
				filters = append(filters, namedFilter(n))
			}
			return filters
		}
	}
	ssn := openSession(t,
		&fakePlugin{name: "first", filters: source("f1", "f2")},
		&fakePlugin{name: "none", filters: source()},
		&fakePlugin{name: "last", filters: source("f3")},
	)
	filters := ssn.GetAccumulatedScenarioFilters(framework.Reclaim, preemptor)
	var names []string
	for _, f := range filters {
		names = append(names, f.Name())
	}
	if want := []string{"f1", "f2", "f3"}; !slices.Equal(names, want) {
		t.Errorf("filters %v, want %v", names, want)
	}
	if want := []framework.ActionType{framework.Reclaim, framework.Reclaim, framework.Reclaim}; !slices.Equal(seen, want) {
		t.Errorf("plugins asked for %v, want %v", seen, want)
	}
}

func TestScenarioFiltersWithoutHooksAreEmpty(t *testing.T) {
	if got := openSession(t).GetAccumulatedScenarioFilters(framework.Preempt, preemptor); len(got) != 0 {
		t.Errorf("no plugin registered the hook, yet %d filters", len(got))
	}
}

func TestSessionFreezesNowAtOpen(t *testing.T) {
	clock := clocktesting.NewFakeClock(harness.Epoch)
	snapshot, _ := model.NewSnapshot(nil, nil, nil)
	ssn := framework.OpenSession(context.Background(), framework.SessionOptions{Snapshot: snapshot, Clock: clock})
	clock.Step(3600e9)
	if got := ssn.Now(); !got.Equal(harness.Epoch) {
		t.Errorf("now is %s after the clock moved on, want %s, the time the session opened", got, harness.Epoch)
	}
}

func TestSessionClosesPluginsInReverseOrderAndDropsTheirHooks(t *testing.T) {
	var closed []string
	ssn := openSession(t,
		&fakePlugin{name: "a", closed: &closed, isPreemptible: func(framework.ActionType, *model.JobInfo, *model.JobInfo) framework.Status { return no("never") }},
		&fakePlugin{name: "b", closed: &closed},
	)
	if ssn.IsPreemptible(framework.Reclaim, preemptor, victim).IsSuccess() {
		t.Fatal("a's refusal is not the verdict before close")
	}
	ssn.Close()
	if want := []string{"b", "a"}; !slices.Equal(closed, want) {
		t.Errorf("closed %v, want %v", closed, want)
	}
	if !ssn.IsPreemptible(framework.Reclaim, preemptor, victim).IsSuccess() {
		t.Error("a hook answers after close")
	}
}

// Eviction messages read back the action and preemptor they were made with, and nothing else.
func TestEvictionMessagesReadBack(t *testing.T) {
	reason := framework.NewEvictionReason(framework.Reclaim, "team-a/train-7")
	action, preemptor, ok := framework.ParseEvictionMessage(reason.Message)
	if !ok || action != framework.Reclaim || preemptor != "team-a/train-7" {
		t.Errorf("ParseEvictionMessage(%q) = %v, %q, %v; want Reclaim, team-a/train-7, true", reason.Message, action, preemptor, ok)
	}
	if _, _, ok := framework.ParseEvictionMessage("Taint manager: deleting due to NoExecute taint"); ok {
		t.Error("another component's eviction message parsed as the scheduler's")
	}
}

// A verdict is a success when zero, and a refusal says who and why.
func TestVerdictsSayWhoAndWhy(t *testing.T) {
	var zero framework.Status
	if !zero.IsSuccess() || zero.Code() != framework.Success || zero.Message() != "" {
		t.Errorf("zero verdict: success %v, code %v, message %q; want a silent success", zero.IsSuccess(), zero.Code(), zero.Message())
	}
	if !framework.AsStatus(framework.Unschedulable, nil).IsSuccess() {
		t.Error("no error, no objection: AsStatus of nil must be a success")
	}

	refusal := no("queue full").WithPlugin("proportion")
	if refusal.IsSuccess() || refusal.Code() != framework.Unschedulable {
		t.Errorf("refusal: success %v, code %v; want Unschedulable", refusal.IsSuccess(), refusal.Code())
	}
	for _, c := range []struct{ what, got, want string }{
		{"code's name", refusal.Code().String(), "Unschedulable"},
		{"plugin", refusal.Plugin(), "proportion"},
		{"reason", refusal.Reason(), "queue full"},
		{"message", refusal.Message(), "proportion: queue full"},
		// a rule no plugin gives reads as kube-scheduler's words alone
		{"message without a plugin", no("node(s) were unschedulable").Message(), "node(s) were unschedulable"},
	} {
		if c.got != c.want {
			t.Errorf("refusal's %s: %s, want %s", c.what, c.got, c.want)
		}
	}
}

// A verdict keeps the error it was made of, for a caller that acts on it.
func TestVerdictsKeepTheirError(t *testing.T) {
	limit := &framework.LimitExceeded{Queue: "team", Resource: model.GPU, Limit: 4, Excess: 1}
	verdict := framework.AsStatus(framework.Unschedulable, limit).WithPlugin("proportion")
	var got *framework.LimitExceeded
	if !errors.As(verdict.Err(), &got) || got != limit {
		t.Errorf("the verdict's error is %v, want the LimitExceeded it was made of", verdict.Err())
	}
	if want := `proportion: queue "team" would exceed its nvidia.com/gpu limit of 4`; verdict.Message() != want {
		t.Errorf("message %q, want %q", verdict.Message(), want)
	}
}

// Every combining function names the plugin: predicates, allocatable and scenario filters.
func TestVerdictsNameThePluginInEveryCombiningFunction(t *testing.T) {
	ssn := openSession(t,
		&fakePlugin{name: "yes", predicate: func(*model.PodInfo, *model.NodeInfo) framework.Status { return framework.Status{} },
			allocatable: func(*model.JobInfo, model.Resources) framework.Status { return framework.Status{} }},
		&fakePlugin{name: "fence", predicate: func(*model.PodInfo, *model.NodeInfo) framework.Status { return no("not here") },
			allocatable: func(*model.JobInfo, model.Resources) framework.Status {
				return framework.AsStatus(framework.UnschedulableAndUnresolvable, errors.New("never more"))
			}},
	)
	pod, node := &model.PodInfo{Name: "p"}, &model.NodeInfo{Name: "n"}
	if got := ssn.Predicate(pod, node).Message(); got != "fence: not here" {
		t.Errorf("predicate: %q, want %q", got, "fence: not here")
	}
	verdict := ssn.Allocatable(preemptor, model.Resources{})
	if verdict.Plugin() != "fence" || verdict.Code() != framework.UnschedulableAndUnresolvable || verdict.Message() != "fence: never more" {
		t.Errorf("allocatable: plugin %q, code %v, message %q; want fence, UnschedulableAndUnresolvable, %q",
			verdict.Plugin(), verdict.Code(), verdict.Message(), "fence: never more")
	}
	if !openSession(t).Allocatable(preemptor, model.Resources{}).IsSuccess() {
		t.Error("allocatable without hooks is not a success")
	}

	filters := []framework.ScenarioFilter{namedFilter("open"), refusingPlanFilter{refusingFilter{"growth", "too big"}},
		refusingFilter{"fair", "unfair"}}
	if got := framework.ScenarioAllows(filters, nil).Message(); got != "fair: unfair" {
		t.Errorf("ScenarioAllows: %q, want %q", got, "fair: unfair")
	}
	if got := framework.PlanAllows(filters, nil).Message(); got != "growth: too big" {
		t.Errorf("PlanAllows: %q, want %q: only plan filters judge plans", got, "growth: too big")
	}
	if !framework.ScenarioAllows(filters[:2], nil).IsSuccess() {
		t.Error("ScenarioAllows refused with no scenario filter refusing")
	}
}

// Verdicts cost no allocation, refusals included: the victim search asks thousands of times a
// cycle.
func TestVerdictsCostNoAllocation(t *testing.T) {
	protected := no("protected")
	ssn := openSession(t, &fakePlugin{name: "minruntime",
		isPreemptible: func(framework.ActionType, *model.JobInfo, *model.JobInfo) framework.Status { return protected }})
	var verdict framework.Status
	if allocs := testing.AllocsPerRun(100, func() { verdict = ssn.IsPreemptible(framework.Reclaim, preemptor, victim) }); allocs != 0 {
		t.Errorf("IsPreemptible allocates %v times a call, want 0", allocs)
	}
	if verdict.Plugin() != "minruntime" {
		t.Errorf("the refusal names %q, want minruntime", verdict.Plugin())
	}
	if protected.Plugin() != "" {
		t.Errorf("the plugin's own verdict names %q: naming the plugin must change the session's copy, not the plugin's", protected.Plugin())
	}
	cordoned := &model.NodeInfo{Name: "n", Unschedulable: true}
	pod := &model.PodInfo{Name: "p"}
	if allocs := testing.AllocsPerRun(100, func() { verdict = ssn.Predicate(pod, cordoned) }); allocs != 0 {
		t.Errorf("Predicate allocates %v times a call, want 0", allocs)
	}
	if verdict.Code() != framework.UnschedulableAndUnresolvable || verdict.Message() != "node(s) were unschedulable" {
		t.Errorf("cordoned node: code %v, message %q; want UnschedulableAndUnresolvable and kube-scheduler's words, no plugin's name",
			verdict.Code(), verdict.Message())
	}
}
