package sim

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/app"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions/consolidation"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
)

// kai-sim runs the scheduler the binary runs: for every configuration a user may hand both,
// the actions and the plugins with their settings that kai-sim's schedulers run are those
// `kai-scheduler check-config` says the binary would run. A simulator assembled apart from
// the binary would drift from it here first.
func TestKaiSimRunsWhatCheckConfigSays(t *testing.T) {
	configs, err := filepath.Glob(filepath.Join("..", "..", "docs", "examples", "sim", "*.conf.yaml"))
	if err != nil || len(configs) == 0 {
		t.Fatalf("no example configurations: %v", err)
	}
	configs = append(configs, "", filepath.Join("..", "..", "docs", "examples", "config", "scheduler-config.yaml"))
	sc, err := input.Parse(input.BuiltinScenario())
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range configs {
		name := filepath.Base(path)
		if path == "" {
			name = "built-in default"
		}
		t.Run(name, func(t *testing.T) {
			var checked bytes.Buffer
			if !app.CheckConfig(&checked, path, consolidation.DefaultMaxMovedJobs) {
				t.Fatalf("check-config refuses it:\n%s", checked.String())
			}
			var data []byte
			if path != "" {
				if data, err = os.ReadFile(path); err != nil {
					t.Fatal(err)
				}
			}
			opts := Options{Period: time.Second, Config: data}
			pools := poolsOf(sc, opts.NodePoolLabelKey)
			loaded, _, err := loadPoolConfigs(pools, opts)
			if err != nil {
				t.Fatal(err)
			}
			e, err := newEngine(sc, opts, pools, loaded)
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range e.instances {
				policy := in.loop.Policy
				ran := "Actions, in order: " + strings.Join(policy.ActionSettings(), ", ") + "\nPlugins, in order:\n  " +
					strings.Join(in.report.Settings, "\n  ") + "\n"
				if !strings.Contains(checked.String(), ran) {
					t.Errorf("pool %q runs\n%s\nwhere check-config says\n%s", in.pool.Name, ran, checked.String())
				}
			}
		})
	}
}
