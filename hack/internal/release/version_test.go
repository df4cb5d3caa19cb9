package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// imageTag is the OCI distribution spec's grammar for a tag.
var imageTag = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// Only the commit a release tag names carries the release's number: a commit before any tag,
// or after one, or a tree with changes, says so in its version, whatever the chart's
// appVersion claims.
func TestVersionIsGitDescribes(t *testing.T) {
	root := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	chart := filepath.Join(root, "deployments", "kai-scheduler", "Chart.yaml")
	commit := func(appVersion string) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(chart), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(chart, []byte("appVersion: \""+appVersion+"\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", ".")
		git("commit", "-q", "--allow-empty", "-m", "appVersion "+appVersion)
		return git("rev-parse", "--short=7", "HEAD")
	}
	want := func(when, expected string) {
		t.Helper()
		got, err := Version(root)
		if err != nil || got != expected {
			t.Errorf("%s: version %q (%v), want %q", when, got, err, expected)
		}
	}

	if _, err := Version(root); err == nil || !strings.Contains(err.Error(), "VERSION=") {
		t.Errorf("outside a checkout: %v, want an error saying to name a version", err)
	}
	git("init", "-q")
	first := commit("0.1.0")
	want("no tag yet, though the chart says 0.1.0", "0.0.0-1-g"+first)
	second := commit("0.1.0")
	want("two commits, no tag", "0.0.0-2-g"+second)
	git("tag", "v0.1.0")
	want("on the tag", "0.1.0")
	if err := os.WriteFile(chart, []byte("appVersion: \"0.1.0\"\n# edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want("the tag with uncommitted changes", "0.1.0-dirty")
	third := commit("0.1.0")
	want("a commit after the tag", "0.1.0-1-g"+third)
	git("tag", "not-a-release")
	want("a tag that is not vX.Y.Z", "0.1.0-1-g"+third)
	if err := os.WriteFile(chart, []byte("appVersion: \"0.2.0\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want("after the tag, with changes", "0.1.0-1-g"+third+"-dirty")
	// The image is tagged with the version: it must be a valid tag as it is.
	if v, _ := Version(root); !imageTag.MatchString(v) {
		t.Errorf("%q is not a valid image tag", v)
	}
}
