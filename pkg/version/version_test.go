package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

// A release build's -X values win over what Go recorded; without them a tree's build says
// "devel" and names the commit it was built from, marking local changes.
func TestVersionFromLinkerElseBuildInfo(t *testing.T) {
	defer func(v, c string) { Version, Commit = v, c }(Version, Commit)

	Version, Commit = "0.1.0", "abc123"
	if got := Get(); got.Version != "0.1.0" || got.Commit != "abc123" {
		t.Errorf("set at build time: got %+v", got)
	}
	if line := Line("kai-sim"); !strings.HasPrefix(line, "kai-sim 0.1.0 (commit abc123, go") {
		t.Errorf("line %q", line)
	}

	Version, Commit = "", ""
	if got := Get(); got.Version == "" || got.GoVersion == "" || !strings.Contains(got.Platform, "/") {
		t.Errorf("from build info: got %+v", got)
	}
	settings := []debug.BuildSetting{{Key: "vcs.revision", Value: "deadbeef"}, {Key: "vcs.modified", Value: "true"}}
	if got := commitOf(settings); got != "deadbeef-dirty" {
		t.Errorf("modified tree: commit %q", got)
	}
	if got := commitOf(settings[:1]); got != "deadbeef" {
		t.Errorf("clean tree: commit %q", got)
	}
	if got := (Info{Version: "devel", GoVersion: "go1.26.8", Platform: "linux/amd64"}).String(); got != "devel (commit unknown, go1.26.8 linux/amd64)" {
		t.Errorf("unknown commit: %q", got)
	}
}
