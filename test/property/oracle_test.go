package property

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

func dur(d time.Duration) *time.Duration { return &d }

// designTree is the min-runtime design's trees in one (seeds 000 and 003), plus a top-level
// leaf that sets nothing:
//
//	A (reclaim 30s) ─ B (preempt 600s, reclaim 600s) ─┬─ C ─┬─ leaf1 (preempt 300s, reclaim 0s)
//	                                    │     └─ leaf2 (reclaim 180s)
//	                                    └─ D (reclaim 60s) ─ leaf3
//	solo
//
// Jobs: v (train, leaf1), p (train, leaf3), q (build-preemptible, leaf1), n (build, leaf2),
// el (train, leaf1, three pods with minMember 1).
func designTree() *Scenario {
	s := &Scenario{Nodes: []Node{{Name: "node-0", GPUs: 8}}, Period: time.Second, Horizon: time.Hour, DefaultPreempt: dur(45 * time.Second)}
	s.Queues = []*Queue{
		{Name: "A", ReclaimMinRuntime: dur(30 * time.Second)},
		{Name: "B", Parent: "A", PreemptMinRuntime: dur(600 * time.Second), ReclaimMinRuntime: dur(600 * time.Second)},
		{Name: "C", Parent: "B"},
		{Name: "leaf1", Parent: "C", Leaf: true, PreemptMinRuntime: dur(300 * time.Second), ReclaimMinRuntime: dur(0)},
		{Name: "leaf2", Parent: "C", Leaf: true, ReclaimMinRuntime: dur(180 * time.Second)},
		{Name: "D", Parent: "B", ReclaimMinRuntime: dur(60 * time.Second)},
		{Name: "leaf3", Parent: "D", Leaf: true},
		{Name: "solo", Leaf: true},
	}
	job := func(name, queue, class string, pods, minMember int) *Job {
		j := &Job{Name: name, Queue: queue, PriorityClass: class, Priority: classPriority[class], MinMember: minMember, GPUs: 1}
		for i := range pods {
			j.Pods = append(j.Pods, Pod{Name: name + "-" + string(rune('0'+i)), Grace: 5})
		}
		return j
	}
	s.Jobs = []*Job{
		job("v", "leaf1", "train", 1, 1), job("p", "leaf3", "train", 1, 1), job("q", "leaf1", "build-preemptible", 1, 1),
		job("n", "leaf2", "build", 1, 1), job("el", "leaf1", "train", 3, 1),
	}
	return s
}

// placementTree is designTree on three nodes:
//
//	node-0  zone a  2 FPGAs
//	node-1  zone b  tainted dedicated=infer:NoSchedule
//	node-2  zone a  1 FPGA, room for two pods
//
// v and p ask for an FPGA per pod; q tolerates any dedicated taint and requires zone b, so
// node-1 is the only node it may use; n and el ask for nothing more than a GPU.
func placementTree() *Scenario {
	s := designTree()
	s.Nodes = []Node{
		{Name: "node-0", GPUs: 8, FPGAs: 2, Zone: "a"},
		{Name: "node-1", GPUs: 8, Zone: "b", Taints: []v1.Taint{{Key: "dedicated", Value: "infer", Effect: v1.TaintEffectNoSchedule}}},
		{Name: "node-2", GPUs: 8, FPGAs: 1, MaxPods: 2, Zone: "a"},
	}
	for _, j := range s.Jobs {
		switch j.Name {
		case "v", "p":
			j.FPGAs = 1
		case "q":
			j.Tolerations = []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpExists}}
			j.Zones = []string{"b"}
		}
	}
	return s
}

func TestMinRuntimeResolutionFollowsTheDesign(t *testing.T) {
	for _, c := range []struct {
		name                   string
		method, action         string
		preemptor, victim      string
		want                   time.Duration
		wantSourceContainsText string
	}{
		{"lca: leaf1 reclaims leaf3, D's own value", "lca", "reclaim", "leaf1", "leaf3", 60 * time.Second, "queue D"},
		{"lca: leaf1 reclaims leaf2, leaf2's own value", "lca", "reclaim", "leaf1", "leaf2", 180 * time.Second, "queue leaf2"},
		{"lca: leaf3 reclaims leaf1, C inherits B", "lca", "reclaim", "leaf3", "leaf1", 600 * time.Second, "queue B"},
		{"absent method is lca", "", "reclaim", "leaf3", "leaf1", 600 * time.Second, "queue B"},
		{"queue: leaf3 reclaims leaf1, leaf1's explicit 0s", "queue", "reclaim", "leaf3", "leaf1", 0, "queue leaf1"},
		{"queue: leaf1 reclaims leaf3, inherited from D", "queue", "reclaim", "leaf1", "leaf3", 60 * time.Second, "queue D"},
		{"lca across top-level queues starts at the victim's top", "lca", "reclaim", "solo", "leaf3", 30 * time.Second, "queue A"},
		{"lca: nothing set on solo's path, no default", "lca", "reclaim", "leaf1", "solo", 0, "no value set"},
		{"preempt: leaf1's own value", "lca", "preempt", "leaf1", "leaf1", 300 * time.Second, "queue leaf1"},
		{"preempt: leaf2 inherits B", "lca", "preempt", "leaf2", "leaf2", 600 * time.Second, "queue B"},
		{"preempt: nothing set falls to the default", "lca", "preempt", "solo", "solo", 45 * time.Second, "defaultPreemptMinRuntime"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := designTree()
			s.Method = c.method
			got, source := s.MinRuntime(c.action, c.preemptor, c.victim)
			if got != c.want || !strings.Contains(source, c.wantSourceContainsText) {
				t.Errorf("want %s from %s, got %s from %s", c.want, c.wantSourceContainsText, got, source)
			}
		})
	}
}

// ev builds an event; pod, action and preemptor are optional by type.
func ev(time float64, typ, job string, podActionPreemptor ...string) report.Event {
	e := report.Event{Time: time, Type: typ, PodGroup: "default/" + job}
	if len(podActionPreemptor) > 0 {
		e.Pod = podActionPreemptor[0]
	}
	if len(podActionPreemptor) > 2 {
		e.Action, e.Preemptor = podActionPreemptor[1], "default/"+podActionPreemptor[2]
	}
	return e
}

// bind binds pods onto node-0, designTree's only node, and starts the job.
func bind(t float64, job string, pods ...string) []report.Event {
	return bindOn(t, job, "node-0", pods...)
}

func bindOn(t float64, job, node string, pods ...string) []report.Event {
	var events []report.Event
	for _, p := range pods {
		e := ev(t, report.EventBind, job, p)
		e.Node = node
		events = append(events, e)
	}
	return append(events, ev(t, report.EventStart, job))
}

// runOn runs the job's first pod on node from t for 100s.
func runOn(t float64, job, node string) []report.Event {
	return append(bindOn(t, job, node, job+"-0"), complete(t+100, job)...)
}

// timeline joins event lists; every job of designTree not named in done is left unfinished.
func timeline(end float64, parts ...[]report.Event) *report.Result {
	r := &report.Result{Totals: report.Totals{SimulatedSeconds: end}}
	for _, p := range parts {
		r.Events = append(r.Events, p...)
	}
	return r
}

func complete(t float64, jobs ...string) []report.Event {
	var events []report.Event
	for _, j := range jobs {
		events = append(events, ev(t, report.EventComplete, j))
	}
	return events
}

// others finishes the jobs a case does not use, so that only the case's own failures show.
func others(jobs ...string) []report.Event {
	var events []report.Event
	for _, j := range jobs {
		events = append(events, bind(2000, j, j+"-0")...)
		events = append(events, ev(2100, report.EventComplete, j))
	}
	return events
}

// delayed is designTree with p, the reclaimer of its cases, given a preemption delay.
func delayed(d time.Duration) func() *Scenario {
	return func() *Scenario {
		s := designTree()
		s.Jobs[1].PreemptionDelay, s.Jobs[1].DelayAs = d, delayField
		return s
	}
}

// arriving is the scenario with job submitted at at: the change a hand-made eviction at that
// time follows, as kai-sim's would (E1 judges an eviction after a quiet period by the
// protections and delays that ended, and these cases are about other properties).
func arriving(scenario func() *Scenario, job string, at time.Duration) func() *Scenario {
	return func() *Scenario {
		s := scenario()
		for _, j := range s.Jobs {
			if j.Name == job {
				j.SubmitAt = at
			}
		}
		return s
	}
}

// rearmed is a timeline in which p runs from 0, is reclaimed for n at 650, and at at
// reclaims v, protected until 600, for itself.
func rearmed(at float64) *report.Result {
	evictions := []report.Event{ev(650, report.EventEvict, "p", "p-0", "reclaim", "n"), ev(at, report.EventEvict, "v", "v-0", "reclaim", "p")}
	for i := range evictions {
		evictions[i].Node = "node-0"
	}
	return timeline(3000,
		bind(0, "v", "v-0"), bind(0, "p", "p-0"), evictions[:1], bind(656, "n", "n-0"), complete(700, "n"),
		evictions[1:], bind(at+6, "p", "p-0"), complete(800, "p"), bind(801, "v", "v-0"), complete(900, "v"),
		others("q"), bind(0, "el", "el-0"), complete(10, "el"))
}

// TestOracleCanFail feeds hand-made timelines to the oracle: a correct one must pass, and
// each broken one must be reported under the right property, so no property is a check that
// cannot fail.
func TestOracleCanFail(t *testing.T) {
	evictOn := func(t float64, job, pod, node, action, preemptor string) []report.Event {
		e := ev(t, report.EventEvict, job, pod, action, preemptor)
		e.Node = node
		return []report.Event{e}
	}
	evict := func(t float64, job, pod, action, preemptor string) []report.Event {
		return evictOn(t, job, pod, "node-0", action, preemptor)
	}
	for _, c := range []struct {
		name     string
		scenario func() *Scenario // designTree when nil
		run      *report.Result
		want     []string // properties expected, in any order; none for a correct run
	}{
		{"reclaim when protection ends is correct", nil, timeline(3000,
			bind(0, "v", "v-0"), evict(600, "v", "v-0", "reclaim", "p"), bind(606, "p", "p-0"), complete(700, "p"),
			bind(701, "v", "v-0"), complete(900, "v"), others("q", "n"), bind(0, "el", "el-0"), complete(10, "el"),
		), nil},
		{"early eviction", arriving(designTree, "p", time.Minute), timeline(3000,
			bind(0, "v", "v-0"), evict(60, "v", "v-0", "reclaim", "p"), bind(66, "p", "p-0"), complete(700, "p"),
			bind(701, "v", "v-0"), complete(900, "v"), others("q", "n"), bind(0, "el", "el-0"), complete(10, "el"),
		), []string{PropSafety}},
		{"thrash: evicted twice for a preemptor that never started in between", nil, timeline(3000,
			bind(0, "v", "v-0"), evict(600, "v", "v-0", "reclaim", "p"), bind(606, "v", "v-0"),
			evict(1206, "v", "v-0", "reclaim", "p"), bind(1212, "p", "p-0"), complete(1300, "p"),
			bind(1301, "v", "v-0"), complete(1900, "v"), others("q", "n"), bind(0, "el", "el-0"), complete(10, "el"),
		), []string{PropNoThrash}},
		{"promise broken: the preemptor starts long after its victim's grace period", nil, timeline(3000,
			bind(0, "v", "v-0"), evict(600, "v", "v-0", "reclaim", "p"), bind(700, "p", "p-0"), complete(800, "p"),
			bind(801, "v", "v-0"), complete(900, "v"), others("q", "n"), bind(0, "el", "el-0"), complete(10, "el"),
		), []string{PropPromise}},
		{"unsettled: jobs left running at the horizon", nil, timeline(3600,
			bind(0, "v", "v-0"), others("q", "n", "p"), bind(0, "el", "el-0"), complete(10, "el"),
		), []string{PropLiveness}},
		// The second decision follows no change at all, which E1 reports too.
		{"elastic job loses a surplus pod while protected, then its gang", arriving(designTree, "q", 10*time.Second), timeline(3000,
			bind(0, "el", "el-0", "el-1", "el-2"), evict(10, "el", "el-2", "preempt", "q"),
			evict(20, "el", "el-0", "preempt", "q"), evict(20, "el", "el-1", "preempt", "q"),
			bind(26, "q", "q-0"), complete(100, "q"), bind(101, "el", "el-0"), complete(200, "el"), others("v", "n", "p"),
		), []string{PropSafety, PropNoThrash, PropCeiling}},
		{"non-preemptible victim", arriving(designTree, "p", 1000*time.Second), timeline(3000,
			bind(0, "n", "n-0"), evict(1000, "n", "n-0", "reclaim", "p"), bind(1006, "p", "p-0"), complete(1100, "p"),
			bind(1101, "n", "n-0"), complete(1200, "n"), others("v", "q"), bind(0, "el", "el-0"), complete(10, "el"),
		), []string{PropPreemptible}},
		{"reclaim inside the preemptor's preemption delay, from its submission", delayed(11 * time.Minute), timeline(3000,
			bind(0, "v", "v-0"), evict(600, "v", "v-0", "reclaim", "p"), bind(606, "p", "p-0"), complete(700, "p"),
			bind(701, "v", "v-0"), complete(900, "v"), others("q", "n"), bind(0, "el", "el-0"), complete(10, "el"),
		), []string{PropDelay}},
		{"reclaim once the preemptor's preemption delay ended is correct", delayed(10 * time.Minute), timeline(3000,
			bind(0, "v", "v-0"), evict(600, "v", "v-0", "reclaim", "p"), bind(606, "p", "p-0"), complete(700, "p"),
			bind(701, "v", "v-0"), complete(900, "v"), others("q", "n"), bind(0, "el", "el-0"), complete(10, "el"),
		), nil},
		// Nothing changed since n started at 656 either, which E1 reports too; at 680 the
		// delay's end explains the decision.
		{"reclaim inside a preemption delay re-armed by the preemptor's own eviction", arriving(delayed(30*time.Second), "n", 650*time.Second),
			rearmed(660), []string{PropDelay, PropCeiling}},
		{"reclaim once the re-armed preemption delay ended is correct", arriving(delayed(30*time.Second), "n", 650*time.Second), rearmed(680), nil},
		{"placement kept: the FPGA passes from a victim to its preemptor once the victim is gone", placementTree, timeline(3000,
			bindOn(0, "v", "node-2", "v-0"), evictOn(600, "v", "v-0", "node-2", "reclaim", "p"), bindOn(605, "p", "node-2", "p-0"),
			complete(700, "p"), bindOn(701, "v", "node-2", "v-0"), complete(900, "v"),
			runOn(0, "q", "node-1"), runOn(0, "n", "node-0"), runOn(0, "el", "node-0"),
		), nil},
		{"FPGA over-committed: taken while its holder still terminates", placementTree, timeline(3000,
			bindOn(0, "v", "node-2", "v-0"), evictOn(600, "v", "v-0", "node-2", "reclaim", "p"), bindOn(603, "p", "node-2", "p-0"),
			complete(700, "p"), bindOn(701, "v", "node-2", "v-0"), complete(900, "v"),
			runOn(0, "q", "node-1"), runOn(0, "n", "node-0"), runOn(0, "el", "node-0"),
		), []string{PropPlacement}},
		{"FPGA over-committed: taken in the cycle that evicted its holder, though its grace is 0s", func() *Scenario {
			s := placementTree()
			s.Jobs[0].Pods[0].Grace = 0 // v-0
			return s
		}, timeline(3000,
			bindOn(0, "v", "node-2", "v-0"), evictOn(600, "v", "v-0", "node-2", "reclaim", "p"), bindOn(600, "p", "node-2", "p-0"),
			complete(700, "p"), bindOn(701, "v", "node-2", "v-0"), complete(900, "v"),
			runOn(0, "q", "node-1"), runOn(0, "n", "node-0"), runOn(0, "el", "node-0"),
		), []string{PropPlacement}},
		{"FPGA over-committed: one FPGA given to two running pods", placementTree, timeline(3000,
			runOn(0, "v", "node-2"), runOn(50, "p", "node-2"),
			runOn(0, "q", "node-1"), runOn(0, "n", "node-0"), runOn(0, "el", "node-0"),
		), []string{PropPlacement}},
		{"untolerated taint: a pod without tolerations on the tainted node", placementTree, timeline(3000,
			runOn(0, "v", "node-0"), runOn(0, "p", "node-0"),
			runOn(0, "q", "node-1"), runOn(0, "n", "node-1"), runOn(0, "el", "node-0"),
		), []string{PropPlacement}},
		{"node affinity not matched: a pod that requires zone b in zone a", placementTree, timeline(3000,
			runOn(0, "v", "node-0"), runOn(0, "p", "node-0"),
			runOn(0, "q", "node-0"), runOn(0, "n", "node-0"), runOn(0, "el", "node-0"),
		), []string{PropPlacement}},
		{"too many pods: three pods on a node that takes two", placementTree, timeline(3000,
			runOn(0, "v", "node-0"), runOn(0, "p", "node-0"),
			runOn(0, "q", "node-1"), runOn(0, "n", "node-0"), bindOn(0, "el", "node-2", "el-0", "el-1", "el-2"), complete(10, "el"),
		), []string{PropPlacement}},
	} {
		t.Run(c.name, func(t *testing.T) {
			scenario := designTree
			if c.scenario != nil {
				scenario = c.scenario
			}
			failures, _ := judgeHanded(scenario(), c.run)
			expectProperties(t, failures, c.want)
		})
	}
}

// TestOracleJudgesStaleEvictions: a gang whose pod failed, evicted as stale while min-runtime
// still protects it, is no early eviction (S1 does not judge it); a stale eviction of a job
// that is not short, or one made for a preemptor, is an S4 failure.
func TestOracleJudgesStaleEvictions(t *testing.T) {
	scenario := func() *Scenario {
		s := designTree()
		gang := &Job{Name: "g", Queue: "leaf1", PriorityClass: "train", Priority: classPriority["train"], MinMember: 3, GPUs: 1}
		for _, p := range []string{"g-0", "g-1", "g-2"} {
			gang.Pods = append(gang.Pods, Pod{Name: p, Grace: 5})
		}
		s.Jobs = append(s.Jobs, gang)
		return s
	}
	stale := func(t float64, pod, preemptor string) report.Event {
		e := ev(t, report.EventEvict, "g", pod)
		e.Action, e.Preemptor, e.Node = "stalegangeviction", preemptor, "node-0"
		return e
	}
	fail := ev(40, report.EventFail, "g", "g-2")
	rest := func() []report.Event {
		return append(append(others("v", "q", "n", "p"), bind(0, "el", "el-0")...), complete(10, "el")...)
	}
	for _, c := range []struct {
		name   string
		events []report.Event
		want   []string
	}{
		{"a short protected gang evicted as stale", []report.Event{fail, stale(100, "g-0", ""), stale(100, "g-1", "")}, nil},
		{"a whole gang evicted as stale", []report.Event{stale(100, "g-0", ""), stale(100, "g-1", ""), stale(100, "g-2", "")}, []string{PropStale}},
		{"a stale eviction for a preemptor", []report.Event{fail, stale(100, "g-0", "default/q"), stale(100, "g-1", "default/q")}, []string{PropStale}},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := timeline(3000, bind(0, "g", "g-0", "g-1", "g-2"), c.events, bind(200, "g", "g-0", "g-1", "g-2"), complete(300, "g"), rest())
			failures, figures := judgeHanded(scenario(), run)
			got := propertyList(failures)
			if !slices.Equal(got, c.want) || figures.StaleEvictions == 0 {
				t.Errorf("want properties %q, got %v (stale evictions judged %d)", c.want, failures, figures.StaleEvictions)
			}
		})
	}
}

func TestOracleCountsElasticEvictionsWithinMinimums(t *testing.T) {
	run := timeline(3000, bind(0, "el", "el-0", "el-1", "el-2"),
		[]report.Event{ev(10, report.EventEvict, "el", "el-2", "preempt", "q"), ev(10, report.EventEvict, "el", "el-1", "preempt", "q")},
		bind(16, "q", "q-0"), complete(100, "q"), complete(200, "el"), others("v", "n", "p"))
	failures, figures := judgeHanded(arriving(designTree, "q", 10*time.Second)(), run)
	if len(failures) != 0 || figures.ElasticAllowed != 2 || figures.Evictions != 2 {
		t.Errorf("want no failures, 2 evictions, 2 elastic allowed; got %v, %+v", failures, figures)
	}
}

// G1 fails a gang left on nodes with fewer pods than its minMember (the victim search once
// evicted a gang whole but left the pod allocate gave it in the same cycle), and passes one
// that keeps them or has none left.
func TestGangKeptFailsAGangLeftBelowItsMinimum(t *testing.T) {
	gang := &Job{Name: "g", MinMember: 3, Pods: []Pod{{Name: "g-0"}, {Name: "g-1"}, {Name: "g-2"}}}
	for _, c := range []struct {
		name   string
		active []string
		fails  bool
	}{
		{"one pod left behind", []string{"g-2"}, true},
		{"its minimum", []string{"g-0", "g-1", "g-2"}, false},
		{"none left", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := &judge{jobs: map[string]*Job{"default/g": gang}, pods: map[string]Pod{}, active: map[string]map[string]bool{"default/g": {}}, shortByFailure: map[string]bool{}}
			for _, p := range gang.Pods {
				j.pods[p.Name] = p
			}
			for _, p := range c.active {
				j.active["default/g"][p] = true
			}
			j.checkGangs(map[string]bool{"default/g": true}, 10)
			failed := slices.ContainsFunc(j.failures, func(f Failure) bool { return f.Property == PropGangKept })
			if failed != c.fails {
				t.Errorf("G1 failed: %v, want %v (%v)", failed, c.fails, j.failures)
			}
		})
	}
}

// A job's own min-runtime only shortens: a lower well-formed value replaces its queues'; an
// equal, higher, malformed or negative one changes nothing; each action reads its own.
func TestOracleShortensOnly(t *testing.T) {
	for _, c := range []struct {
		name, preempt, reclaim, action string
		want                           time.Duration
		wantSource                     string
	}{
		{"none", "", "", "reclaim", 10 * time.Minute, "queue q"},
		{"lower reclaim", "", "1m", "reclaim", time.Minute, "the job's annotation " + ownReclaimAnnotation},
		{"reclaim only: preempt keeps the queue's", "", "1m", "preempt", 10 * time.Minute, "queue q"},
		{"lower preempt, 0s", "0s", "", "preempt", 0, "the job's annotation " + ownPreemptAnnotation},
		{"equal", "", "10m", "reclaim", 10 * time.Minute, "queue q"},
		{"higher", "1h", "", "preempt", 10 * time.Minute, "queue q"},
		{"malformed", "", "soon", "reclaim", 10 * time.Minute, "queue q"},
		{"negative", "-1m", "", "preempt", 10 * time.Minute, "queue q"},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := &Job{OwnPreempt: c.preempt, OwnReclaim: c.reclaim}
			got, source := j.Shorten(c.action, 10*time.Minute, "queue q")
			if got != c.want || source != c.wantSource {
				t.Errorf("want %s from %s, got %s from %s", c.want, c.wantSource, got, source)
			}
		})
	}
}

// The held seeds draw no job's own min-runtime, so that they still build the scenarios
// that found their defects (see ownStream).
func TestHeldSeedsDrawNoOwnMinRuntime(t *testing.T) {
	for _, seed := range heldSeeds {
		for _, j := range Generate(seed).Jobs {
			if j.OwnPreempt != "" || j.OwnReclaim != "" {
				t.Errorf("held seed %d: job %s draws own min-runtimes %q, %q", seed, j.Name, j.OwnPreempt, j.OwnReclaim)
			}
		}
	}
}

// The held seeds leave escalation off and give no job a prior count, so that they still
// build the scenarios that found their defects (see escalationStream).
func TestHeldSeedsDrawNoEscalation(t *testing.T) {
	for _, seed := range heldSeeds {
		s := Generate(seed)
		if s.EscalationFactor != 0 || s.EscalationCeiling != 0 {
			t.Errorf("held seed %d: escalation ×%g up to %s", seed, s.EscalationFactor, s.EscalationCeiling)
		}
		for _, j := range s.Jobs {
			if j.PriorEvictions() != 0 {
				t.Errorf("held seed %d: job %s starts with %d evictions", seed, j.Name, j.PriorEvictions())
			}
		}
	}
}

// The held seeds give no queue an escalation annotation, so that they still build the
// scenarios that found their defects (see queueEscalationStream).
func TestHeldSeedsDrawNoQueueEscalation(t *testing.T) {
	for _, seed := range heldSeeds {
		for _, q := range Generate(seed).Queues {
			if q.EscalationFactor != nil || q.EscalationCeiling != nil {
				t.Errorf("held seed %d: queue %s draws escalation annotations %v", seed, q.Name, q.annotations())
			}
		}
	}
}

// The held seeds draw no checkpoint claim, so that they still build the scenarios that found
// their defects (see claimStream).
func TestHeldSeedsDrawNoCheckpointClaim(t *testing.T) {
	for _, seed := range heldSeeds {
		for _, j := range Generate(seed).Jobs {
			if j.CheckpointClaim != "" {
				t.Errorf("held seed %d: job %s draws the checkpoint claim %q", seed, j.Name, j.CheckpointClaim)
			}
		}
	}
}

// Escalation follows the design's rule: unchanged when off, never evicted, 0s or at the
// ceiling already; else multiplied once per eviction, rounded to the second, capped at the
// ceiling, never below the min-runtime it started from.
func TestOracleEscalates(t *testing.T) {
	for _, c := range []struct {
		name      string
		factor    float64
		ceiling   time.Duration
		d         time.Duration
		evictions int
		want      time.Duration
	}{
		{"off: no factor", 0, 0, time.Minute, 3, time.Minute},
		{"off: factor 1", 1, 0, time.Minute, 3, time.Minute},
		{"never evicted", 2, time.Hour, time.Minute, 0, time.Minute},
		{"0s stays open", 2, time.Hour, 0, 3, 0},
		{"at the ceiling already", 2, time.Minute, time.Minute, 3, time.Minute},
		{"above the ceiling stays", 2, time.Minute, 5 * time.Minute, 3, 5 * time.Minute},
		{"twice per eviction", 2, time.Hour, time.Minute, 3, 8 * time.Minute},
		{"capped", 3, 10 * time.Minute, 2 * time.Minute, 2, 10 * time.Minute},
		{"rounded to the second, half up", 1.5, time.Hour, 45 * time.Second, 1, 68 * time.Second},
		{"a factor near 1 rounds back to the min-runtime, never below", 1.001, time.Hour, 20 * time.Second, 1, 20 * time.Second},
		{"many evictions stay at the ceiling", 3, 6 * time.Minute, 20 * time.Second, 1000, 6 * time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &Scenario{EscalationFactor: c.factor, EscalationCeiling: c.ceiling}
			if got := s.EscalationOf("any").Escalate(c.d, c.evictions); got != c.want {
				t.Errorf("want %s, got %s", c.want, got)
			}
		})
	}
}

func factor(f float64) *float64 { return &f }

// A job's escalation follows the design's rule: factor and ceiling each from the nearest
// queue up from its leaf that sets it, else the plugin's arguments; a factor above 1 left
// with no ceiling is off. designTree: leaf1 under C, B, A.
func TestOracleResolvesQueueEscalation(t *testing.T) {
	for _, c := range []struct {
		name            string
		argFactor       float64
		argCeiling      time.Duration
		annotate        func(q map[string]*Queue)
		wantFactor      float64
		wantCeiling     time.Duration
		wantFrom        [2]string // factor's queue, ceiling's queue
		wantEscalatedTo time.Duration
	}{
		{"no annotations: the arguments", 2, 10 * time.Minute, func(map[string]*Queue) {}, 2, 10 * time.Minute, [2]string{"", ""}, 4 * time.Minute},
		{"no annotations, no arguments: off", 0, 0, func(map[string]*Queue) {}, 1, 0, [2]string{"", ""}, time.Minute},
		{"the nearest factor wins, the ceiling from the arguments", 2, 10 * time.Minute, func(q map[string]*Queue) {
			q["A"].EscalationFactor, q["C"].EscalationFactor = factor(1.5), factor(3)
		}, 3, 10 * time.Minute, [2]string{"C", ""}, 9 * time.Minute},
		{"factor and ceiling from different queues, neither from the arguments", 0, 0, func(q map[string]*Queue) {
			q["B"].EscalationFactor, q["leaf1"].EscalationCeiling = factor(2), dur(3*time.Minute)
		}, 2, 3 * time.Minute, [2]string{"B", "leaf1"}, 3 * time.Minute},
		{"a factor of 1 turns the arguments off", 2, 10 * time.Minute, func(q map[string]*Queue) {
			q["leaf1"].EscalationFactor = factor(1)
		}, 1, 10 * time.Minute, [2]string{"leaf1", ""}, time.Minute},
		{"a factor without a ceiling on the path is off", 0, 0, func(q map[string]*Queue) {
			q["C"].EscalationFactor = factor(2)
			q["leaf2"].EscalationCeiling = dur(10 * time.Minute) // another path's
		}, 1, 0, [2]string{"C", ""}, time.Minute},
		{"a ceiling of 0s turns the arguments off", 2, 10 * time.Minute, func(q map[string]*Queue) {
			q["A"].EscalationCeiling = dur(0)
		}, 1, 0, [2]string{"", "A"}, time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := designTree()
			s.EscalationFactor, s.EscalationCeiling = c.argFactor, c.argCeiling
			byName := map[string]*Queue{}
			for _, q := range s.Queues {
				byName[q.Name] = q
			}
			c.annotate(byName)
			e := s.EscalationOf("leaf1")
			if e.Factor != c.wantFactor || e.Ceiling != c.wantCeiling || [2]string{e.FactorFrom, e.CeilingFrom} != c.wantFrom {
				t.Errorf("want ×%g up to %s from %q, got %s", c.wantFactor, c.wantCeiling, c.wantFrom, e)
			}
			if got := e.Escalate(time.Minute, 2); got != c.wantEscalatedTo {
				t.Errorf("1m after 2 evictions: want %s, got %s", c.wantEscalatedTo, got)
			}
		})
	}
}

// TestOracleJudgesEscalation: v's reclaim min-runtime against leaf3 is 600s (queue B); with
// escalation ×2 up to 15m, its second run, after reclaim ended its first, is protected 900s.
// S1 holds it to that, from the count the timeline gives or the PodGroup's prior one; E1
// fails an eviction that time alone allowed after the ceiling, unless the cluster changed
// just before it.
func TestOracleJudgesEscalation(t *testing.T) {
	// annotate, when given, sets queues' escalation annotations.
	scenario := func(factor float64, ceiling time.Duration, priorReclaim int, annotate ...func(*Scenario)) func() *Scenario {
		return func() *Scenario {
			s := designTree()
			s.EscalationFactor, s.EscalationCeiling = factor, ceiling
			for _, a := range annotate {
				a(s)
			}
			s.Jobs[0].PriorReclaim = priorReclaim // v
			r := &Job{Name: "r", Queue: "leaf3", PriorityClass: "train", Priority: classPriority["train"], MinMember: 1, GPUs: 1,
				Pods: []Pod{{Name: "r-0", Grace: 5}}}
			s.Jobs = append(s.Jobs, r)
			return s
		}
	}
	escalated := scenario(2, 15*time.Minute, 0)
	// annotated: queue qname's annotations (nil: unset).
	annotated := func(qname string, f *float64, ceiling *time.Duration) func(*Scenario) {
		return func(s *Scenario) { s.Queue(qname).EscalationFactor, s.Queue(qname).EscalationCeiling = f, ceiling }
	}
	// byQueues: no escalation arguments; B's annotation sets ×2 and leaf1's 15m, so v
	// escalates as under escalated.
	byQueues := scenario(0, 0, 0, annotated("B", factor(2), nil), annotated("leaf1", nil, dur(15*time.Minute)))
	evict := func(t float64, job, preemptor string) []report.Event {
		e := ev(t, report.EventEvict, job, job+"-0", "reclaim", preemptor)
		e.Node = "node-0"
		return []report.Event{e}
	}
	// secondRun: p reclaims v when its 600s end, v runs again from 701, and r reclaims it at
	// at; changes, when set, are what else happens at their own times.
	secondRun := func(at float64, changes ...[]report.Event) *report.Result {
		parts := [][]report.Event{
			bind(0, "v", "v-0"), evict(600, "v", "p"), bind(606, "p", "p-0"), complete(700, "p"), bind(701, "v", "v-0"),
			evict(at, "v", "r"), bind(at+6, "r", "r-0"), complete(at+100, "r"), bind(at+101, "v", "v-0"), complete(at+300, "v"),
			bind(0, "el", "el-0"), complete(10, "el"), others("n"),
		}
		if len(changes) == 0 {
			parts = append(parts, others("q"))
		}
		return timeline(4000, append(parts, changes...)...)
	}
	for _, c := range []struct {
		name     string
		scenario func() *Scenario
		run      *report.Result
		want     []string
	}{
		{"reclaim when the escalated protection ends is correct", escalated, secondRun(1601), nil},
		{"reclaim when the unescalated protection ends: early (S1), and nothing ended then (E1)", escalated, secondRun(1301),
			[]string{PropSafety, PropCeiling}},
		{"reclaim when an uncapped escalation would end: held past the ceiling", escalated, secondRun(1901), []string{PropCeiling}},
		{"the same after a change in the period before: E1 cannot tell", escalated,
			secondRun(1901, bind(1900, "q", "q-0"), complete(1950, "q")), nil},
		{"escalation off with factor 1: the second run ends at 600s", scenario(1, 0, 0), secondRun(1301), nil},
		{"queues' annotations escalate without arguments: the escalated end is correct", byQueues, secondRun(1601), nil},
		{"queues' annotations escalate without arguments: early at the unescalated end (S1, E1)", byQueues, secondRun(1301),
			[]string{PropSafety, PropCeiling}},
		{"the preemptor's queue's annotations do not escalate the victim", scenario(0, 0, 0,
			annotated("leaf3", factor(2), dur(15*time.Minute))), secondRun(1301), nil},
		{"a queue's factor 1 turns the arguments' escalation off", scenario(2, 15*time.Minute, 0,
			annotated("C", factor(1), nil)), secondRun(1301), nil},
		{"a queue's factor without a ceiling on the path is off", scenario(0, 0, 0,
			annotated("leaf1", factor(2), nil), annotated("leaf2", nil, dur(15*time.Minute))), secondRun(1301), nil},
		{"a queue's factor without a ceiling on the path is off: held past 600s by nothing (E1)", scenario(0, 0, 0,
			annotated("leaf1", factor(2), nil)), secondRun(1601), []string{PropCeiling}},
		{"a queue's 0s ceiling turns the arguments' escalation off", scenario(2, 15*time.Minute, 0,
			annotated("A", nil, dur(0))), secondRun(1301), nil},
		{"a prior count escalates the first run", scenario(2, 15*time.Minute, 1), timeline(4000,
			bind(0, "v", "v-0"), evict(900, "v", "p"), bind(906, "p", "p-0"), complete(1000, "p"), bind(1001, "v", "v-0"), complete(1200, "v"),
			bind(0, "el", "el-0"), complete(10, "el"), others("n", "q", "r")), nil},
		{"a prior count escalates the first run: early at 600s", scenario(2, 15*time.Minute, 1), timeline(4000,
			bind(0, "v", "v-0"), evict(600, "v", "p"), bind(606, "p", "p-0"), complete(700, "p"), bind(701, "v", "v-0"), complete(900, "v"),
			bind(0, "el", "el-0"), complete(10, "el"), others("n", "q", "r")), []string{PropSafety, PropCeiling}},
	} {
		t.Run(c.name, func(t *testing.T) {
			failures, figures := judgeHanded(c.scenario(), c.run)
			expectProperties(t, failures, c.want)
			if figures.TimeDriven == 0 {
				t.Errorf("E1 judged no eviction: the case proves nothing about it")
			}
		})
	}
}

// L1 on hand-made timelines: borrowers a and b, one pod of one GPU each, share node-0; at
// 300 s owner o reclaims one of them. The one left must not have saved its work later.
func TestOracleJudgesLeastLostWork(t *testing.T) {
	claim := func(seconds int) string {
		return time.Date(2026, 1, 1, 0, 0, seconds, 0, time.UTC).Format(time.RFC3339)
	}
	for _, c := range []struct {
		name         string
		aStart       float64
		aClaim       string
		aInterval    time.Duration
		evicted      string
		wantL1, want int // L1 failures, pairs judged
	}{
		{"equal starts, no checkpoints: the name decides", 0, "", 0, "a", 0, 1},
		{"equal starts, no checkpoints: b out of turn", 0, "", 0, "b", 1, 1},
		{"a claimed a checkpoint: a goes", 0, claim(200), 0, "a", 0, 1},
		{"a claimed a checkpoint: b out of turn", 0, claim(200), 0, "b", 1, 1},
		{"a's claim predates its run from 100 s: it counts as that start, later than b's", 100, claim(50), 0, "a", 0, 1},
		{"a's claim in the future counts as now", 0, claim(5000), 0, "b", 1, 1},
		{"a reported a checkpoint at 300 s itself (every 60 s): b out of turn", 0, "", time.Minute, "b", 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &Scenario{Nodes: []Node{{Name: "node-0", GPUs: 2}}, Period: time.Second, Horizon: time.Hour,
				Queues: []*Queue{{Name: "owner", Quota: 2, Limit: -1, Leaf: true}, {Name: "borrower", Limit: -1, Leaf: true}}}
			one := func(name, queue string) *Job {
				j := &Job{Name: name, Queue: queue, PriorityClass: "train", Priority: 50, MinMember: 1, GPUs: 1,
					Pods: []Pod{{Name: name + "-0"}}}
				s.Jobs = append(s.Jobs, j)
				return j
			}
			a := one("a", "borrower")
			a.CheckpointClaim, a.Checkpoint = c.aClaim, c.aInterval
			one("b", "borrower")
			// o arrives as it evicts: the change a reclaim follows, as kai-sim's would (E1).
			one("o", "owner").SubmitAt = 300 * time.Second
			kept := map[string]string{"a": "b", "b": "a"}[c.evicted]
			eviction := ev(300, report.EventEvict, c.evicted, c.evicted+"-0", "reclaim", "o")
			eviction.Node = "node-0"
			r := timeline(3000,
				bind(c.aStart, "a", "a-0"), bind(0, "b", "b-0"), []report.Event{eviction}, bind(301, "o", "o-0"),
				complete(400, "o", kept), bind(401, c.evicted, c.evicted+"-0"), complete(500, c.evicted))
			failures, figures := judgeHanded(s, r)
			l1 := 0
			for _, f := range failures {
				if f.Property != PropLeastLostWork {
					t.Errorf("unexpected failure %s", f)
					continue
				}
				l1++
			}
			if l1 != c.wantL1 || figures.LostWorkPairs != c.want {
				t.Errorf("%d L1 failures on %d pairs, want %d on %d: %v", l1, figures.LostWorkPairs, c.wantL1, c.want, failures)
			}
		})
	}
}

// expectProperties fails t unless failures break exactly the properties want, in any order.
func expectProperties(t *testing.T, failures []Failure, want []string) {
	t.Helper()
	got := propertyList(failures)
	slices.Sort(got)
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		var lines []string
		for _, f := range failures {
			lines = append(lines, f.String())
		}
		t.Errorf("want properties %q, got %q:\n%s", want, got, strings.Join(lines, "\n"))
	}
}

// quotaPair is two top-level queues on one 8-GPU node: owner (GPU quota given) and borrower
// (quota 0), with the jobs given (queue, pods of one GPU each, all of one gang).
func quotaPair(ownerQuota float64, jobs map[string][2]any) *Scenario {
	s := &Scenario{Nodes: []Node{{Name: "node-0", GPUs: 8}}, Period: time.Second, Horizon: time.Hour}
	s.Queues = []*Queue{{Name: "owner", Quota: ownerQuota, Limit: -1, Leaf: true}, {Name: "borrower", Limit: -1, Leaf: true}}
	for _, name := range slices.Sorted(maps.Keys(jobs)) {
		queue, pods := jobs[name][0].(string), jobs[name][1].(int)
		j := &Job{Name: name, Queue: queue, PriorityClass: "train", Priority: 50, MinMember: pods, GPUs: 1}
		for i := range pods {
			j.Pods = append(j.Pods, Pod{Name: fmt.Sprintf("%s-%d", name, i)})
		}
		s.Jobs = append(s.Jobs, j)
	}
	return s
}

// evictFor evicts pods of job by reclaim for preemptor at t.
func evictFor(t float64, job, preemptor string, pods ...string) []report.Event {
	var events []report.Event
	for _, p := range pods {
		events = append(events, ev(t, report.EventEvict, job, p, "reclaim", preemptor))
	}
	return events
}

// The quota rules fail where the scheduler breaks them: a reclaim from a queue holding no more
// than its quota (Q1), one that drains a queue below its quota by more than any job it took
// (Q2), and a cycle that leaves an owed job waiting while a borrower holds what it is owed
// (Q3); and they pass the same reclaims done right.
func TestQuotaRulesFailWhereTheSchedulerBreaksThem(t *testing.T) {
	judged := func(s *Scenario, parts ...[]report.Event) []string {
		failures, _ := judgeHanded(s, timeline(500, parts...))
		var props []string
		for _, f := range failures {
			if strings.HasPrefix(f.Property, "Q") {
				props = append(props, f.Property[:2])
			}
		}
		return props
	}
	// owner (quota 4) holds its 4; borrower's job reclaims one of them.
	within := quotaPair(4, map[string][2]any{"o": {"owner", 4}, "b": {"borrower", 1}})
	if got := judged(within, bind(0, "o", "o-0", "o-1", "o-2", "o-3"), evictFor(10, "o", "b", "o-0")); !slices.Equal(got, []string{"Q1"}) {
		t.Errorf("a reclaim from a queue within its quota: %v, want Q1", got)
	}
	// owner (quota 2) holds 4 one-GPU jobs; a reclaim for borrower takes 3 (Q2) or 2 (fine).
	four := map[string][2]any{"o0": {"owner", 1}, "o1": {"owner", 1}, "o2": {"owner", 1}, "o3": {"owner", 1}, "b": {"borrower", 3}}
	running := [][]report.Event{bind(0, "o0", "o0-0"), bind(0, "o1", "o1-0"), bind(0, "o2", "o2-0"), bind(0, "o3", "o3-0")}
	if got := judged(quotaPair(2, four), append(running, evictFor(10, "o0", "b", "o0-0"), evictFor(10, "o1", "b", "o1-0"), evictFor(10, "o2", "b", "o2-0"))...); !slices.Equal(got, []string{"Q2"}) {
		t.Errorf("a reclaim that drains a queue below its quota: %v, want Q2", got)
	}
	if got := judged(quotaPair(2, four), append(running, evictFor(10, "o0", "b", "o0-0"), evictFor(10, "o1", "b", "o1-0"))...); len(got) != 0 {
		t.Errorf("a reclaim down to the quota: %v, want no quota failure", got)
	}
	// borrower fills the node; owner's job (4 of its quota of 4) arrives at 5s and is never
	// served: owed from the first cycle after.
	owed := quotaPair(4, map[string][2]any{"b": {"borrower", 8}, "o": {"owner", 4}})
	owed.JudgeOwed = true
	owed.Jobs[1].SubmitAt = 5 * time.Second
	borrowed := bind(0, "b", "b-0", "b-1", "b-2", "b-3", "b-4", "b-5", "b-6", "b-7")
	if got := judged(owed, borrowed); len(got) == 0 || got[0] != "Q3" {
		t.Errorf("an owed job left waiting: %v, want Q3", got)
	}
	served := append(evictFor(5, "b", "o", "b-0", "b-1", "b-2", "b-3", "b-4", "b-5", "b-6", "b-7"), bind(6, "o", "o-0", "o-1", "o-2", "o-3")...)
	if got := judged(owed, borrowed, served); len(got) != 0 {
		t.Errorf("an owed job served in the first cycle: %v, want no quota failure", got)
	}
}
