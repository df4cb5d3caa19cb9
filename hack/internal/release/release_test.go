package release

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A release's default version is the chart's appVersion, however the line is quoted.
func TestChartAppVersion(t *testing.T) {
	for _, line := range []string{`appVersion: "1.2.3"`, `appVersion: 1.2.3`} {
		root := t.TempDir()
		dir := filepath.Join(root, "deployments", "kai-scheduler")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		chart := "apiVersion: v2\nname: kai-scheduler\nversion: 0.9.0\n" + line + "\n"
		if err := os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte(chart), 0o644); err != nil {
			t.Fatal(err)
		}
		if v, err := ChartAppVersion(root); err != nil || v != "1.2.3" {
			t.Errorf("%s: got %q, %v", line, v, err)
		}
	}
	if _, err := ChartAppVersion(t.TempDir()); err == nil {
		t.Error("no chart: no error")
	}
}

// Outside a checkout the commit is "unknown" and the time the epoch, so builds still agree.
func TestCommitOutsideACheckout(t *testing.T) {
	commit, at := Commit(t.TempDir())
	if commit != "unknown" || at.Unix() != 0 {
		t.Errorf("got %q at %v", commit, at)
	}
	commit, at = Commit("../../..")
	if commit == "unknown" || len(strings.TrimSuffix(commit, "-dirty")) != 40 || at.Unix() == 0 {
		t.Errorf("this checkout: got %q at %v", commit, at)
	}
}
