package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Two schedulers' runs are shown side by side with their means, and a time as the ratio of
// the first's mean to the second's.
func TestTableShowsRunsMeansAndRatio(t *testing.T) {
	write := func(label, dir string, seconds float64) string {
		path := filepath.Join(t.TempDir(), dir)
		if err := os.MkdirAll(path, 0o755); err != nil {
			t.Fatal(err)
		}
		data := fmt.Sprintf(`{"scenario":"reclaim","label":%q,"headline":"all running","figures":{"all running":%v},"peakRSSMB":100}`,
			label, seconds)
		if err := os.WriteFile(filepath.Join(path, "reclaim.json"), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	a, err := load([]string{write("old", "o1", 50), write("old", "o2", 60)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := load([]string{write("new", "n1", 20), write("new", "n2", 24)})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	printTable(&out, a, b)
	want := "| reclaim | all running (s) | 50, 60 (mean 55) | 20, 24 (mean 22) | 2.50× |"
	if !strings.Contains(out.String(), want) {
		t.Fatalf("table:\n%s\nwant the line %q", out.String(), want)
	}
}
