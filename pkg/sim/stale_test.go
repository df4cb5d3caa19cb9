package sim_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/metrics"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/internal/simtest"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// The documented example: a pod of a gang fails at 2m, the three left are evicted as stale
// 60s later (the configuration's default grace period), though min-runtime protects the job
// for an hour, and the restarted job completes.
func TestStaleGangExample(t *testing.T) {
	sc, err := input.Parse(simtest.Example(t, "stale-gang.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	recorded := &metrics.Recording{}
	result, err := sim.Run(context.Background(), sc, sim.Options{Config: simtest.Example(t, "stale-gang.conf.yaml"), Until: time.Hour,
		Metrics: func(string) metrics.Recorder { return recorded }})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range result.Events {
		if e.Type == report.EventFail || e.Type == report.EventEvict {
			lines = append(lines, strings.Join([]string{e.Type, e.Pod, e.Action, e.Preemptor, time.Duration(e.Time * float64(time.Second)).String()}, " "))
			if e.Type == report.EventEvict && !strings.Contains(e.Reason, "staleness grace period 1m0s") {
				t.Errorf("eviction reason %q does not name the grace period", e.Reason)
			}
		}
	}
	want := "Fail train-3   2m0s|Evict train-0 stalegangeviction  3m0s|Evict train-1 stalegangeviction  3m0s|Evict train-2 stalegangeviction  3m0s"
	if got := strings.Join(lines, "|"); got != want {
		t.Errorf("failures and evictions:\n%s\nwant:\n%s", got, want)
	}
	if job := result.Jobs[0]; job.Completed == nil {
		t.Error("the restarted job did not complete")
	}
	if got := recorded.Recorded(); got.StaleGangEvictions != 1 || got.Evictions["stalegangeviction"] != 3 || len(got.MinRuntimeRefusals) != 0 {
		t.Errorf("metrics %+v, want one stale gang of three pods and no refusal", got)
	}
}

func TestFailAfterMustBeADuration(t *testing.T) {
	bad := strings.Replace(string(simtest.Example(t, "stale-gang.yaml")), `fail-after: "2m"`, `fail-after: "soon"`, 1)
	if _, err := input.Parse([]byte(bad)); err == nil || !strings.Contains(err.Error(), "Pod demo/train-3: metadata.annotations.sim.kai.scheduler/fail-after") {
		t.Errorf("error %v, want the pod and the annotation named", err)
	}
}
