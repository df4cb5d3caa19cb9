package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kai-minruntime/kai-scheduler/hack/internal/release"
)

// make build leaves the three commands in ./bin (here a temporary one), each saying this
// checkout's version and commit: the README's "make build" then "bin/kai-scheduler" holds.
func TestMakeBuildLeavesTheCommandsStamped(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every command")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	before, _ := release.Version(root)
	bin := t.TempDir()
	build := exec.Command("make", "build", "BIN="+bin)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	version, err := release.Version(root)
	if err != nil {
		t.Fatal(err)
	}
	commit, _ := release.Commit(root)
	if version != before {
		t.Skip("the checkout changed while it was being built")
	}
	for _, command := range []string{"kai-scheduler", "kai-sim", "kubectl-kai"} {
		out, err := exec.Command(filepath.Join(bin, command), "--version").CombinedOutput()
		if err != nil {
			t.Errorf("%s --version: %v\n%s", command, err, out)
			continue
		}
		if want := command + " " + version + " (commit " + commit + ", "; !strings.HasPrefix(string(out), want) {
			t.Errorf("%s --version printed %q, want it to start with %q", command, out, want)
		}
	}
}
