package metrics

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// names are the metric names the scheduler serves, with a histogram's series suffixes.
func names() map[string]bool {
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	served := map[string]bool{}
	for _, c := range newCollectors().all() {
		ch := make(chan *prometheus.Desc, 4)
		c.Describe(ch)
		close(ch)
		for d := range ch {
			name := fqName.FindStringSubmatch(d.String())[1]
			for _, suffix := range []string{"", "_bucket", "_sum", "_count"} {
				served[name+suffix] = true
			}
		}
	}
	return served
}

// The dashboard shipped in deployments/ must only query metrics the scheduler serves: a
// renamed metric would otherwise leave an operator with empty panels and no error.
func TestDashboardQueriesServedMetrics(t *testing.T) {
	data, err := os.ReadFile("../../../deployments/grafana/kai-scheduler-min-runtime.json")
	if err != nil {
		t.Fatal(err)
	}
	var dashboard struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(data, &dashboard); err != nil {
		t.Fatalf("the dashboard is not valid JSON: %v", err)
	}
	served := names()
	metric := regexp.MustCompile(`kai_scheduler_[a-z_]+`)
	queried := 0
	for _, p := range dashboard.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q queries nothing", p.Title)
		}
		for _, target := range p.Targets {
			for _, name := range metric.FindAllString(target.Expr, -1) {
				queried++
				if !served[name] {
					t.Errorf("panel %q queries %s, which the scheduler does not serve", p.Title, name)
				}
			}
		}
	}
	for _, want := range []string{"kai_scheduler_min_runtime_protected_jobs", "kai_scheduler_min_runtime_wait_seconds",
		"kai_scheduler_runtime_at_eviction_seconds", "kai_scheduler_min_runtime_refusals_total", "kai_scheduler_queue_fair_share"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the dashboard does not show %s", want)
		}
	}
	if queried == 0 {
		t.Error("the dashboard queries no metric")
	}
}
