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

// Build compiles the command at ./cmd/NAME of root for goos/goarch into out: static (no
// cgo), without local paths or a build ID so that the same commit gives the same bytes,
// and with the version and commit that --version prints.
func Build(root, command, goos, goarch, version, commit, out string) error {
	const pkg = "github.com/kai-minruntime/kai-scheduler/pkg/version"
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags", fmt.Sprintf("-s -w -buildid= -X %s.Version=%s -X %s.Commit=%s", pkg, version, pkg, commit),
		"-o", out, "./cmd/"+command)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
	if output, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s for %s/%s: %w\n%s", command, goos, goarch, err, output)
	}
	return nil
}
