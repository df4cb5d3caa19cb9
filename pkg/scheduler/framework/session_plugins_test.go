package framework_test

import (
	"context"
	"errors"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/scenario"
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

func openSession(plugins ...framework.Plugin) *framework.Session {
	snapshot, err := model.NewSnapshot(nil, nil, nil)
	Expect(err).NotTo(HaveOccurred())
	return framework.OpenSession(context.Background(), framework.SessionOptions{
		Snapshot: snapshot, Clock: clocktesting.NewFakePassiveClock(scenario.Epoch), Plugins: plugins,
	})
}

var preemptor = &model.JobInfo{ID: "ns/preemptor"}
var victim = &model.JobInfo{ID: "ns/victim"}

var _ = Describe("IsPreemptible", func() {
	answer := func(name string, yes bool, calls *[]framework.ActionType) *fakePlugin {
		return &fakePlugin{name: name, isPreemptible: func(action framework.ActionType, p, v *model.JobInfo) framework.Status {
			Expect(p).To(BeIdenticalTo(preemptor))
			Expect(v).To(BeIdenticalTo(victim))
			*calls = append(*calls, action)
			if yes {
				return framework.Status{}
			}
			return no(name + " protects it")
		}}
	}

	It("is a success when no plugin registered the hook", func() {
		Expect(openSession().IsPreemptible(framework.Reclaim, preemptor, victim).IsSuccess()).To(BeTrue())
	})

	DescribeTable("ANDs every plugin's answer: the first refusal is the verdict, naming its plugin",
		func(answers []bool, wantMessage string) {
			var calls []framework.ActionType
			var plugins []framework.Plugin
			for i, yes := range answers {
				plugins = append(plugins, answer(string(rune('a'+i)), yes, &calls))
			}
			verdict := openSession(plugins...).IsPreemptible(framework.Preempt, preemptor, victim)
			Expect(verdict.IsSuccess()).To(Equal(wantMessage == ""))
			Expect(verdict.Message()).To(Equal(wantMessage))
		},
		Entry("all yes: preemptible", []bool{true, true, true}, ""),
		Entry("one no: protected", []bool{true, false, true}, "b: b protects it"),
		Entry("first no: protected", []bool{false, true}, "a: a protects it"),
		Entry("all no: protected, by the first", []bool{false, false}, "a: a protects it"),
	)

	It("passes the action type through to every plugin", func() {
		var calls []framework.ActionType
		ssn := openSession(answer("a", true, &calls), answer("b", true, &calls))
		ssn.IsPreemptible(framework.Reclaim, preemptor, victim)
		ssn.IsPreemptible(framework.Preempt, preemptor, victim)
		Expect(calls).To(Equal([]framework.ActionType{framework.Reclaim, framework.Reclaim, framework.Preempt, framework.Preempt}))
	})
})

var _ = Describe("GetAccumulatedScenarioFilters", func() {
	It("concatenates every plugin's filters in plugin order, passing action and job through", func() {
		var seen []framework.ActionType
		source := func(names ...string) framework.ScenarioFiltersFn {
			return func(action framework.ActionType, pending *model.JobInfo) []framework.ScenarioFilter {
				Expect(pending).To(BeIdenticalTo(preemptor))
				seen = append(seen, action)
				var filters []framework.ScenarioFilter
				for _, n := range names {
					filters = append(filters, namedFilter(n))
				}
				return filters
			}
		}
		ssn := openSession(
			&fakePlugin{name: "first", filters: source("f1", "f2")},
			&fakePlugin{name: "none", filters: source()},
			&fakePlugin{name: "last", filters: source("f3")},
		)
		filters := ssn.GetAccumulatedScenarioFilters(framework.Reclaim, preemptor)
		var names []string
		for _, f := range filters {
			names = append(names, f.Name())
		}
		Expect(names).To(Equal([]string{"f1", "f2", "f3"}))
		Expect(seen).To(Equal([]framework.ActionType{framework.Reclaim, framework.Reclaim, framework.Reclaim}))
	})

	It("is empty when no plugin registered the hook", func() {
		Expect(openSession().GetAccumulatedScenarioFilters(framework.Preempt, preemptor)).To(BeEmpty())
	})
})

var _ = Describe("Session lifecycle", func() {
	It("freezes now at open, whatever the clock does later", func() {
		clock := clocktesting.NewFakeClock(scenario.Epoch)
		snapshot, _ := model.NewSnapshot(nil, nil, nil)
		ssn := framework.OpenSession(context.Background(), framework.SessionOptions{Snapshot: snapshot, Clock: clock})
		clock.Step(3600e9)
		Expect(ssn.Now()).To(Equal(scenario.Epoch))
	})

	It("closes plugins in reverse order and drops their hooks", func() {
		var closed []string
		ssn := openSession(
			&fakePlugin{name: "a", closed: &closed, isPreemptible: func(framework.ActionType, *model.JobInfo, *model.JobInfo) framework.Status { return no("never") }},
			&fakePlugin{name: "b", closed: &closed},
		)
		Expect(ssn.IsPreemptible(framework.Reclaim, preemptor, victim).IsSuccess()).To(BeFalse())
		ssn.Close()
		Expect(closed).To(Equal([]string{"b", "a"}))
		Expect(ssn.IsPreemptible(framework.Reclaim, preemptor, victim).IsSuccess()).To(BeTrue(), "no hooks after close")
	})
})

var _ = Describe("Eviction messages", func() {
	It("read back the action and preemptor they were made with, and nothing else", func() {
		reason := framework.NewEvictionReason(framework.Reclaim, "team-a/train-7")
		action, preemptor, ok := framework.ParseEvictionMessage(reason.Message)
		Expect(ok).To(BeTrue())
		Expect(action).To(Equal(framework.Reclaim))
		Expect(preemptor).To(BeEquivalentTo("team-a/train-7"))
		_, _, ok = framework.ParseEvictionMessage("Taint manager: deleting due to NoExecute taint")
		Expect(ok).To(BeFalse())
	})
})

var _ = Describe("Verdicts", func() {
	It("are a success when zero, and a refusal says who and why", func() {
		var zero framework.Status
		Expect(zero.IsSuccess()).To(BeTrue())
		Expect(zero.Code()).To(Equal(framework.Success))
		Expect(zero.Message()).To(BeEmpty())
		Expect(framework.AsStatus(framework.Unschedulable, nil).IsSuccess()).To(BeTrue(), "no error, no objection")

		refusal := no("queue full").WithPlugin("proportion")
		Expect(refusal.IsSuccess()).To(BeFalse())
		Expect(refusal.Code()).To(Equal(framework.Unschedulable))
		Expect(refusal.Code().String()).To(Equal("Unschedulable"))
		Expect(refusal.Plugin()).To(Equal("proportion"))
		Expect(refusal.Reason()).To(Equal("queue full"))
		Expect(refusal.Message()).To(Equal("proportion: queue full"))
		Expect(no("node(s) were unschedulable").Message()).To(Equal("node(s) were unschedulable"),
			"a rule no plugin gives reads as kube-scheduler's words alone")
	})

	It("keep the error they were made of, for a caller that acts on it", func() {
		limit := &framework.LimitExceeded{Queue: "team", Resource: model.GPU, Limit: 4, Excess: 1}
		verdict := framework.AsStatus(framework.Unschedulable, limit).WithPlugin("proportion")
		var got *framework.LimitExceeded
		Expect(errors.As(verdict.Err(), &got)).To(BeTrue())
		Expect(got).To(BeIdenticalTo(limit))
		Expect(verdict.Message()).To(Equal(`proportion: queue "team" would exceed its nvidia.com/gpu limit of 4`))
	})

	It("name the plugin in every combining function: predicates, allocatable and scenario filters", func() {
		ssn := openSession(
			&fakePlugin{name: "yes", predicate: func(*model.PodInfo, *model.NodeInfo) framework.Status { return framework.Status{} },
				allocatable: func(*model.JobInfo, model.Resources) framework.Status { return framework.Status{} }},
			&fakePlugin{name: "fence", predicate: func(*model.PodInfo, *model.NodeInfo) framework.Status { return no("not here") },
				allocatable: func(*model.JobInfo, model.Resources) framework.Status {
					return framework.AsStatus(framework.UnschedulableAndUnresolvable, errors.New("never more"))
				}},
		)
		pod, node := &model.PodInfo{Name: "p"}, &model.NodeInfo{Name: "n"}
		Expect(ssn.Predicate(pod, node).Message()).To(Equal("fence: not here"))
		verdict := ssn.Allocatable(preemptor, model.Resources{})
		Expect(verdict.Plugin()).To(Equal("fence"))
		Expect(verdict.Code()).To(Equal(framework.UnschedulableAndUnresolvable))
		Expect(verdict.Message()).To(Equal("fence: never more"))
		Expect(openSession().Allocatable(preemptor, model.Resources{}).IsSuccess()).To(BeTrue())

		filters := []framework.ScenarioFilter{namedFilter("open"), refusingPlanFilter{refusingFilter{"growth", "too big"}},
			refusingFilter{"fair", "unfair"}}
		Expect(framework.ScenarioAllows(filters, nil).Message()).To(Equal("fair: unfair"))
		Expect(framework.PlanAllows(filters, nil).Message()).To(Equal("growth: too big"), "only plan filters judge plans")
		Expect(framework.ScenarioAllows(filters[:2], nil).IsSuccess()).To(BeTrue())
	})

	It("cost no allocation, refusals included: the victim search asks thousands of times a cycle", func() {
		protected := no("protected")
		ssn := openSession(&fakePlugin{name: "minruntime",
			isPreemptible: func(framework.ActionType, *model.JobInfo, *model.JobInfo) framework.Status { return protected }})
		var verdict framework.Status
		Expect(testing.AllocsPerRun(100, func() { verdict = ssn.IsPreemptible(framework.Reclaim, preemptor, victim) })).To(BeZero())
		Expect(verdict.Plugin()).To(Equal("minruntime"))
		Expect(protected.Plugin()).To(BeEmpty(), "naming the plugin changes the session's copy, not the plugin's")
		cordoned := &model.NodeInfo{Name: "n", Unschedulable: true}
		pod := &model.PodInfo{Name: "p"}
		Expect(testing.AllocsPerRun(100, func() { verdict = ssn.Predicate(pod, cordoned) })).To(BeZero())
		Expect(verdict.Code()).To(Equal(framework.UnschedulableAndUnresolvable))
		Expect(verdict.Message()).To(Equal("node(s) were unschedulable"), "kube-scheduler's words, no plugin's name")
	})
})
