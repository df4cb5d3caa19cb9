package framework_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/scenario"
)

// fakePlugin registers whatever its fields hold.
type fakePlugin struct {
	name          string
	isPreemptible framework.IsPreemptibleFn
	filters       framework.ScenarioFiltersFn
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
}
func (p *fakePlugin) OnSessionClose(*framework.Session) {
	if p.closed != nil {
		*p.closed = append(*p.closed, p.name)
	}
}

// namedFilter is a scenario filter that only has a name.
type namedFilter string

func (f namedFilter) Name() string                             { return string(f) }
func (f namedFilter) Allows(framework.Scenario) (bool, string) { return true, "" }

func openSession(plugins ...framework.Plugin) *framework.Session {
	snapshot, err := api.NewSnapshot(nil, nil, nil)
	Expect(err).NotTo(HaveOccurred())
	return framework.OpenSession(context.Background(), framework.SessionOptions{
		Snapshot: snapshot, Clock: clocktesting.NewFakePassiveClock(scenario.Epoch), Plugins: plugins,
	})
}

var preemptor = &api.JobInfo{ID: "ns/preemptor"}
var victim = &api.JobInfo{ID: "ns/victim"}

var _ = Describe("IsPreemptible", func() {
	answer := func(name string, yes bool, calls *[]framework.ActionType) *fakePlugin {
		return &fakePlugin{name: name, isPreemptible: func(action framework.ActionType, p, v *api.JobInfo) bool {
			Expect(p).To(BeIdenticalTo(preemptor))
			Expect(v).To(BeIdenticalTo(victim))
			*calls = append(*calls, action)
			return yes
		}}
	}

	It("is true when no plugin registered the hook", func() {
		Expect(openSession().IsPreemptible(framework.Reclaim, preemptor, victim)).To(BeTrue())
	})

	DescribeTable("ANDs every plugin's answer",
		func(answers []bool, want bool) {
			var calls []framework.ActionType
			var plugins []framework.Plugin
			for i, yes := range answers {
				plugins = append(plugins, answer(string(rune('a'+i)), yes, &calls))
			}
			Expect(openSession(plugins...).IsPreemptible(framework.Preempt, preemptor, victim)).To(Equal(want))
		},
		Entry("all yes: preemptible", []bool{true, true, true}, true),
		Entry("one no: protected", []bool{true, false, true}, false),
		Entry("first no: protected", []bool{false, true}, false),
		Entry("all no: protected", []bool{false, false}, false),
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
			return func(action framework.ActionType, pending *api.JobInfo) []framework.ScenarioFilter {
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
		snapshot, _ := api.NewSnapshot(nil, nil, nil)
		ssn := framework.OpenSession(context.Background(), framework.SessionOptions{Snapshot: snapshot, Clock: clock})
		clock.Step(3600e9)
		Expect(ssn.Now()).To(Equal(scenario.Epoch))
	})

	It("closes plugins in reverse order and drops their hooks", func() {
		var closed []string
		ssn := openSession(
			&fakePlugin{name: "a", closed: &closed, isPreemptible: func(framework.ActionType, *api.JobInfo, *api.JobInfo) bool { return false }},
			&fakePlugin{name: "b", closed: &closed},
		)
		Expect(ssn.IsPreemptible(framework.Reclaim, preemptor, victim)).To(BeFalse())
		ssn.Close()
		Expect(closed).To(Equal([]string{"b", "a"}))
		Expect(ssn.IsPreemptible(framework.Reclaim, preemptor, victim)).To(BeTrue(), "no hooks after close")
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
