package release

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Source is the project's repository, as labels and download links name it.
const Source = "https://github.com/kai-minruntime/kai-scheduler"

var appVersionLine = regexp.MustCompile(`(?m)^appVersion:\s*"?([^"\s]+)"?\s*$`)

// ChartAppVersion reads the chart's appVersion: the image tag its Deployment pulls by
// default, and so the version a release without another builds.
func ChartAppVersion(root string) (string, error) {
	chart := filepath.Join(root, "deployments", "kai-scheduler", "Chart.yaml")
	data, err := os.ReadFile(chart)
	if err != nil {
		return "", err
	}
	m := appVersionLine.FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("%s: no appVersion", chart)
	}
	return string(m[1]), nil
}

// Version names what a build of root's checkout is, after `git describe`: "X.Y.Z" on a commit
// tagged vX.Y.Z, "X.Y.Z-N-g<sha>" N commits after it, and "-dirty" appended when tracked
// files have uncommitted changes. With no release tag behind the commit it counts from an
// implicit 0.0.0 at the root ("0.0.0-N-g<sha>"), so a build that is not a release never
// carries a release's number, the chart's appVersion included. Outside a Git checkout there
// is nothing to tell the version by, and the error says to name one.
func Version(root string) (string, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	if _, err := git("rev-parse", "--verify", "HEAD"); err != nil {
		return "", fmt.Errorf("%s is not a Git checkout with a commit, so its version is unknown: name one (VERSION=x.y.z, or -version)", root)
	}
	if described, err := git("describe", "--tags", "--match", "v[0-9]*", "--dirty", "--abbrev=7"); err == nil {
		return strings.TrimPrefix(described, "v"), nil
	}
	count, err := git("rev-list", "--count", "HEAD")
	if err != nil {
		return "", fmt.Errorf("counting the commits of %s: %w", root, err)
	}
	short, err := git("rev-parse", "--short=7", "HEAD")
	if err != nil {
		return "", fmt.Errorf("reading the commit of %s: %w", root, err)
	}
	version := "0.0.0-" + count + "-g" + short
	if status, err := git("status", "--porcelain", "--untracked-files=no"); err == nil && status != "" {
		version += "-dirty"
	}
	return version, nil
}

// Commit returns the checkout's commit ("-dirty" with uncommitted changes to tracked files)
// and the commit's time; outside a Git checkout, "unknown" and the Unix epoch.
func Commit(root string) (string, time.Time) {
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	epoch := time.Unix(0, 0).UTC()
	commit, err := git("rev-parse", "HEAD")
	if err != nil {
		return "unknown", epoch
	}
	if status, err := git("status", "--porcelain", "--untracked-files=no"); err == nil && status != "" {
		commit += "-dirty"
	}
	seconds, err := git("log", "-1", "--format=%ct")
	if err != nil {
		return commit, epoch
	}
	s, err := strconv.ParseInt(seconds, 10, 64)
	if err != nil {
		return commit, epoch
	}
	return commit, time.Unix(s, 0).UTC()
}

// Stamp is the linker flags that make a binary's --version print version and commit.
func Stamp(version, commit string) string {
	const pkg = "github.com/kai-minruntime/kai-scheduler/pkg/version"
	return fmt.Sprintf("-X %s.Version=%s -X %s.Commit=%s", pkg, version, pkg, commit)
}

// Build compiles the command at ./cmd/NAME of root for goos/goarch into out: static (no
// cgo), without local paths or a build ID so that the same commit gives the same bytes,
// and with the version and commit that --version prints.
func Build(root, command, goos, goarch, version, commit, out string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -buildid= "+Stamp(version, commit),
		"-o", out, "./cmd/"+command)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
	if output, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s for %s/%s: %w\n%s", command, goos, goarch, err, output)
	}
	return nil
}
