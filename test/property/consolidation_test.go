package property

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// The held seeds configure no consolidation, so that they still build the scenarios that
// found their defects (see consolidationStream).
func TestHeldSeedsDrawNoConsolidation(t *testing.T) {
	for _, seed := range heldSeeds {
		s := Generate(seed)
		if s.Consolidation || s.MaxConsolidationPreemptees != nil || strings.Contains(s.ConfigYAML(), consolidationAction) {
			t.Errorf("held seed %d draws consolidation (moving at most %d jobs a cycle)", seed, s.MaxMoved())
		}
	}
}

// About half of the scenarios list consolidation after allocate, and among them every bound
// drawn occurs: 0, 1, 2 and the default.
func TestScenariosConsolidate(t *testing.T) {
	const seeds = 300
	consolidating, bounds := 0, map[int]int{}
	for seed := uint64(1); seed <= seeds; seed++ {
		s := Generate(seed)
		config := s.ConfigYAML()
		if !s.Consolidation {
			if strings.Contains(config, consolidationAction) || len(s.Flags()) > 0 {
				t.Errorf("seed %d: consolidation not drawn, yet configured: %v %s", seed, s.Flags(), config)
			}
			continue
		}
		consolidating++
		bounds[s.MaxMoved()]++
		if !strings.Contains(config, `actions: "allocate, consolidation, reclaim, preempt, stalegangeviction"`) {
			t.Errorf("seed %d: consolidation drawn but not after allocate in:\n%s", seed, config)
		}
	}
	if consolidating < seeds/3 || consolidating > 2*seeds/3 {
		t.Errorf("%d of %d scenarios consolidate, want about half", consolidating, seeds)
	}
	for _, n := range []int{0, 1, 2, defaultMaxMoved} {
		if bounds[n] == 0 {
			t.Errorf("no scenario moves at most %d jobs a cycle (drawn: %v)", n, bounds)
		}
	}
}

// A move is held to the longer of the victim's preempt min-runtime and, against another
// queue's preemptor, its reclaim min-runtime against that queue. designTree: leaf1 has
// preempt 300s and reclaim 0s; leaf2 inherits preempt 600s from B and has reclaim 180s.
func TestConsolidationResolvesTheLongerProtection(t *testing.T) {
	s := designTree()
	job := func(name string) *Job {
		for _, j := range s.Jobs {
			if j.Name == name {
				return j
			}
		}
		t.Fatalf("no job %s", name)
		return nil
	}
	for _, c := range []struct {
		name, preemptorQueue, victim string
		want                         time.Duration
		wantAs                       string
	}{
		{"same leaf: preempt alone", "leaf1", "v", 300 * time.Second, "preempt"},
		{"leaf2 for leaf1: preempt 600s above reclaim 180s", "leaf1", "n", 600 * time.Second, "preempt"},
		{"leaf1 for leaf2: preempt 300s above reclaim 0s", "leaf2", "v", 300 * time.Second, "preempt"},
		{"leaf1 for leaf3: reclaim 600s from B above preempt 300s", "leaf3", "v", 600 * time.Second, "reclaim"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := s.Resolve(consolidationAction, c.preemptorQueue, job(c.victim), 0)
			if r.MinRuntime != c.want || r.As != c.wantAs {
				t.Errorf("want %s as a %s, got %s as a %s (%s)", c.want, c.wantAs, r.MinRuntime, r.As, r.Source)
			}
		})
	}
	// Shortened each by its own annotation before the longer is taken: v's own reclaim 10s
	// leaves its preempt 300s against leaf3.
	job("v").OwnReclaim = "10s"
	if r := s.Resolve(consolidationAction, "leaf3", job("v"), 0); r.MinRuntime != 300*time.Second || r.As != "preempt" {
		t.Errorf("v with its own reclaim 10s, for leaf3: want 300s as a preempt, got %s as a %s (%s)", r.MinRuntime, r.As, r.Source)
	}
}

// consolidating is designTree with consolidation configured, moving at most maxMoved jobs a
// cycle (nil: the default), and leaf3's preempt min-runtime 0s: p is held against a move for
// a job of leaf1 by its reclaim min-runtime against leaf1 alone, 60s from D. job is submitted
// at at, the change a hand-made move at that time follows.
func consolidating(maxMoved *int, job string, at time.Duration) func() *Scenario {
	return func() *Scenario {
		s := arriving(designTree, job, at)()
		s.Consolidation, s.MaxConsolidationPreemptees = true, maxMoved
		s.Queue("leaf3").PreemptMinRuntime = dur(0)
		return s
	}
}

// TestOracleJudgesConsolidation feeds hand-made timelines of consolidation moves to the
// oracle: each broken one must be reported under the right property, and the correct ones
// must pass.
func TestOracleJudgesConsolidation(t *testing.T) {
	move := func(t float64, job string, preemptor string, pods ...string) []report.Event {
		var events []report.Event
		for _, p := range pods {
			e := ev(t, report.EventEvict, job, p, consolidationAction, preemptor)
			e.Node = "node-0"
			events = append(events, e)
		}
		return events
	}
	evict := func(t float64, job, action, preemptor string) []report.Event {
		e := ev(t, report.EventEvict, job, job+"-0", action, preemptor)
		e.Node = "node-0"
		return []report.Event{e}
	}
	el := append(bind(0, "el", "el-0"), complete(10, "el")...)
	// movedFor: p runs from 0 and is moved at at for q, which starts once p-0 (grace 5s) is
	// gone; p runs again after q.
	movedFor := func(at float64) *report.Result {
		return timeline(3000, bind(0, "p", "p-0"), move(at, "p", "q", "p-0"), bind(at+6, "q", "q-0"), complete(at+100, "q"),
			bind(at+101, "p", "p-0"), complete(at+300, "p"), others("v", "n"), el)
	}
	// twoMoved: v and el (one pod bound) are moved in one cycle at 300 for q.
	twoMoved := timeline(3000, bind(0, "v", "v-0"), bind(0, "el", "el-0"), move(300, "v", "q", "v-0"), move(300, "el", "q", "el-0"),
		bind(306, "q", "q-0"), complete(400, "q"), bind(401, "v", "v-0"), bind(401, "el", "el-0"), complete(500, "v", "el"), others("p", "n"))
	// thenReclaimed: v, moved (or preempted, as first says) for q at 300, runs again from 401 and is
	// reclaimed for p at 1001: 600s from B later, as an unescalated protection allows.
	thenReclaimed := func(first string) *report.Result {
		firstEviction := move(300, "v", "q", "v-0")
		if first != consolidationAction {
			firstEviction = evict(300, "v", first, "q")
		}
		return timeline(4000, bind(0, "v", "v-0"), firstEviction, bind(306, "q", "q-0"), complete(400, "q"), bind(401, "v", "v-0"),
			evict(1001, "v", "reclaim", "p"), bind(1007, "p", "p-0"), complete(1100, "p"), bind(1101, "v", "v-0"), complete(1300, "v"),
			others("n"), el)
	}
	// escalating: escalation ×2 up to an hour; q arrives at 300 and p at 1001.
	escalating := func() *Scenario {
		s := arriving(consolidating(nil, "q", 300*time.Second), "p", 1001*time.Second)()
		s.EscalationFactor, s.EscalationCeiling = 2, time.Hour
		return s
	}
	delayedQ := func() *Scenario {
		s := consolidating(nil, "q", 270*time.Second)()
		s.Jobs[2].PreemptionDelay, s.Jobs[2].DelayAs = time.Minute, delayField // q
		return s
	}
	// quiet: q is submitted at 0 and waits while v runs; v is moved for it at at, after a
	// quiet period.
	quiet := func(at float64) *report.Result {
		return timeline(3000, bind(0, "v", "v-0"), move(at, "v", "q", "v-0"), bind(at+6, "q", "q-0"), complete(at+100, "q"),
			bind(at+101, "v", "v-0"), complete(at+200, "v"), others("p", "n"), el)
	}
	for _, c := range []struct {
		name     string
		scenario func() *Scenario
		run      *report.Result
		want     []string
	}{
		{"a move once the victim's reclaim protection against the preemptor's queue ended is correct",
			consolidating(nil, "q", 60*time.Second), movedFor(60), nil},
		{"a move inside the reclaim protection against the preemptor's queue, though the preempt one is 0s",
			consolidating(nil, "q", 30*time.Second), movedFor(30), []string{PropSafety}},
		{"a move of a victim of higher priority than its preemptor", consolidating(nil, "p", 600*time.Second), timeline(3000,
			bind(0, "q", "q-0"), move(600, "q", "p", "q-0"), bind(606, "p", "p-0"), complete(700, "p"), bind(701, "q", "q-0"), complete(800, "q"),
			others("v", "n"), el), []string{PropActionRules}},
		{"a move for a preemptor that is not preemptible", consolidating(nil, "n", 300*time.Second), timeline(3000,
			bind(0, "v", "v-0"), move(300, "v", "n", "v-0"), bind(306, "n", "n-0"), complete(400, "n"), bind(401, "v", "v-0"), complete(500, "v"),
			others("p", "q"), el), []string{PropActionRules}},
		{"two jobs moved in a cycle that may move one", consolidating(ptr(1), "q", 300*time.Second), twoMoved, []string{PropMoves}},
		{"two jobs moved in a cycle that may move two is correct", consolidating(ptr(2), "q", 300*time.Second), twoMoved, nil},
		{"a move when --max-consolidation-preemptees is 0", consolidating(ptr(0), "q", 60*time.Second), movedFor(60), []string{PropMoves}},
		{"a move when consolidation is not configured", func() *Scenario {
			s := consolidating(nil, "q", 60*time.Second)()
			s.Consolidation = false
			return s
		}, movedFor(60), []string{PropMoves}},
		{"a move does not escalate the victim's next protection", escalating, thenReclaimed(consolidationAction), nil},
		{"a preempt does: the same reclaim is early", escalating, thenReclaimed("preempt"), []string{PropSafety}},
		{"a move inside its preemptor's preemption delay", delayedQ, quiet(300), []string{PropDelay}},
		{"a move when the victim's protection ends, after a quiet period, is correct", consolidating(nil, "q", 0), quiet(300), nil},
		{"a move after a quiet period that no protection's end explains", consolidating(nil, "q", 0), quiet(500), []string{PropCeiling}},
	} {
		t.Run(c.name, func(t *testing.T) {
			failures, figures := judgeHanded(c.scenario(), c.run)
			expectProperties(t, failures, c.want)
			moves := slices.ContainsFunc(c.run.Events, func(e report.Event) bool { return e.Action == consolidationAction })
			if moves && figures.Moves == 0 {
				t.Errorf("the oracle judged no move: the case proves nothing")
			}
		})
	}
}
