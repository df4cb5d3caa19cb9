package conf

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestLoadFilePrefixesEveryMessageWithThePath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scheduler.yaml")
	doc := "actions: alocate\nqueueDepthPerAction: {}\ntiers:\n- plugins:\n  - name: minrutime\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	_, warnings, err := LoadFile(path, testKnown)
	if err == nil {
		t.Fatal("LoadFile: want an error")
	}
	expectMessages(t, "error", strings.Split(err.Error(), "\n"), []string{
		path + `: actions: unknown action "alocate"`,
		path + `: tiers[0].plugins[0].name: unknown plugin "minrutime"`,
	})
	expectMessages(t, "warning", warnings, []string{path + `: unknown key "queueDepthPerAction" ignored`})
}

func TestLoadFileValid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scheduler.yaml")
	if err := os.WriteFile(path, DefaultYAML(), 0o600); err != nil {
		t.Fatal(err)
	}
	config, warnings, err := LoadFile(path, testKnown)
	if err != nil || len(warnings) != 0 || len(config.Plugins()) != 5 {
		t.Fatalf("LoadFile = %+v, %q, %v", config, warnings, err)
	}
}

func TestLoadFileMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.yaml")
	_, _, err := LoadFile(path, testKnown)
	if err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), path+": ") {
		t.Fatalf("LoadFile = %v; want a not-exist error starting with the path", err)
	}
}

// SchedulerConfiguration is the type to generate files from, so its field names must be the
// ones Load reads.
func TestSchedulerConfigurationRoundTrip(t *testing.T) {
	tiers := []Tier{
		{Plugins: []PluginOption{{Name: "priority"}}},
		{Plugins: []PluginOption{{Name: "minruntime", Arguments: map[string]string{"defaultReclaimMinRuntime": "1d"}}}},
	}
	data, err := yaml.Marshal(SchedulerConfiguration{Actions: "allocate, reclaim", Tiers: tiers})
	if err != nil {
		t.Fatal(err)
	}
	config, warnings, err := Load(data, testKnown)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("Load(%s): %q, %v", data, warnings, err)
	}
	want := &Config{Actions: []string{"allocate", "reclaim"}, Tiers: tiers, DefaultStalenessGracePeriod: DefaultStalenessGracePeriod}
	if !reflect.DeepEqual(config, want) {
		t.Fatalf("Load(%s) = %+v, want %+v", data, config, want)
	}
}
