package release

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// workflow is the part of a GitHub workflow these tests read
// (YAML 1.2, as GitHub reads it: "on" is a key, not a boolean).
type workflow struct {
	On   map[string]any `yaml:"on"`
	Jobs map[string]struct {
		Steps []struct {
			Run  string `yaml:"run"`
			Uses string `yaml:"uses"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

func readWorkflow(t *testing.T, name string) (workflow, string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", ".github", "workflows", name))
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	if err := yaml.Unmarshal(data, &w); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var runs []string
	for _, job := range w.Jobs {
		for _, step := range job.Steps {
			runs = append(runs, step.Run)
		}
	}
	return w, strings.Join(runs, "\n")
}

// Pull requests run what .ci/run runs: make test.
func TestPullRequestsRunMakeTest(t *testing.T) {
	w, runs := readWorkflow(t, "ci.yaml")
	if _, ok := w.On["pull_request"]; !ok {
		t.Error("ci.yaml does not run on pull requests")
	}
	if strings.TrimSpace(runs) != "make test" {
		t.Errorf("ci.yaml runs %q, want exactly make test", runs)
	}
	ci, err := os.ReadFile(filepath.Join("..", "..", "..", ".ci", "run"))
	if err != nil || !strings.Contains(string(ci), "make test") {
		t.Errorf(".ci/run does not run make test: %q, %v", ci, err)
	}
}

// A tag v* releases: it checks the tag against the chart's appVersion, then builds and
// pushes the image and the chart, and publishes kubectl-kai's archives, in that order (a
// release pushed before its version is checked, or created before its archives are built,
// would publish the wrong thing).
func TestTagsRelease(t *testing.T) {
	w, runs := readWorkflow(t, "release.yaml")
	push, _ := w.On["push"].(map[string]any)
	tags, _ := push["tags"].([]any)
	if !slices.Contains(tags, any("v*")) {
		t.Errorf("release.yaml runs on %v, want pushes of tags v*", w.On)
	}
	after, previous := 0, ""
	for _, want := range []string{"appVersion", "make image VERSION=", "crane push _output/image/oci", "helm package deployments/kai-scheduler",
		"helm push", "oci://", "make dist VERSION=", "gh release create", "_output/dist/*"} {
		at := strings.Index(runs, want)
		if at < 0 {
			t.Errorf("release.yaml never runs %q", want)
			continue
		}
		if at < after {
			t.Errorf("release.yaml runs %q before %q", want, previous)
		}
		after, previous = at, want
	}
}

// The README installs the release the chart's appVersion names, the changelog lists it, and
// kubectl-kai installs at it: bumping the version without them fails here.
func TestDocsNameTheChartsRelease(t *testing.T) {
	version, err := ChartAppVersion(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"ghcr.io/kai-minruntime/kai-scheduler:" + version,
		"oci://ghcr.io/kai-minruntime/charts/kai-scheduler --version " + version,
		"cmd/kubectl-kai@v" + version,
	} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README.md does not name %q", want)
		}
	}
	changelog, err := os.ReadFile(filepath.Join("..", "..", "..", "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(changelog), "## ["+version+"] - ") {
		t.Errorf("CHANGELOG.md has no section for %s", version)
	}
}
