package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func crd(name string) string {
	return "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: " + name + "\n"
}

// fakeModules writes module directories and a downloader that serves them, counting calls.
func fakeModules(t *testing.T, files map[string]map[string]string) (downloader, *int) {
	t.Helper()
	root := t.TempDir()
	dirs := map[string]string{}
	for version, contents := range files {
		dir := filepath.Join(root, strings.ReplaceAll(version, "/", "_"))
		for path, content := range contents {
			full := filepath.Join(dir, filepath.FromSlash(path))
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		dirs[version] = dir
	}
	calls := 0
	return func(versions []string) (map[string]string, error) {
		calls++
		return dirs, nil
	}, &calls
}

func handWritten(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A file of two CRDs is split, each CRD named after itself with its source in a comment;
// the hand-written ones join them; a second run with the same pins calls no go; a change to a
// hand-written file is another directory.
func TestGatherSplitsNamesAndCaches(t *testing.T) {
	download, calls := fakeModules(t, map[string]map[string]string{
		"example.com/m@v1.0.0": {"crds/two.yaml": "# licence\n---\n" + crd("as.example.com") + "---\n" + crd("bs.example.com")},
	})
	pins := []pin{{Module: "example.com/m", Version: "v1.0.0", Files: []string{"crds/two.yaml"}}}
	own := handWritten(t, map[string]string{"cs.example.com.yaml": "# hand-written\n" + crd("cs.example.com"), "README.md": "not a CRD"})
	out := t.TempDir()

	dir, err := gather(pins, own, out, download)
	if err != nil {
		t.Fatal(err)
	}
	for name, source := range map[string]string{
		"as.example.com": "example.com/m@v1.0.0 crds/two.yaml", "bs.example.com": "example.com/m@v1.0.0 crds/two.yaml",
		"cs.example.com": "test/crds/cs.example.com.yaml",
	} {
		data, err := os.ReadFile(filepath.Join(dir, name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(data), "# Copied by hack/workloadcrds from "+source+"\n") || !strings.Contains(string(data), "name: "+name+"\n") ||
			strings.Count(string(data), "kind: CustomResourceDefinition") != 1 {
			t.Errorf("%s.yaml:\n%s", name, data)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "README.md")); err == nil {
		t.Error("README.md copied")
	}
	if again, err := gather(pins, own, out, download); err != nil || again != dir || *calls != 1 {
		t.Errorf("second run: %s, %v, %d calls to go (want %s, nil, 1)", again, err, *calls, dir)
	}
	if err := os.WriteFile(filepath.Join(own, "cs.example.com.yaml"), []byte(crd("cs.example.com")), 0o644); err != nil {
		t.Fatal(err)
	}
	if other, err := gather(pins, own, out, download); err != nil || other == dir || *calls != 2 {
		t.Errorf("after a hand-written change: %s, %v, %d calls (want a new directory, 2 calls)", other, err, *calls)
	}
}

// What is not a CRD, a CRD twice, or a file missing is refused, naming the module and file.
func TestGatherRefuses(t *testing.T) {
	for _, c := range []struct {
		name, file, want string
	}{
		{"not a CRD", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n", "example.com/m@v1.0.0 crds/f.yaml: document 1 is v1 ConfigMap"},
		{"twice", crd("cs.example.com"), "CRD cs.example.com is also in"},
		{"empty", "# nothing\n", "example.com/m@v1.0.0 crds/f.yaml: no YAML document"},
	} {
		t.Run(c.name, func(t *testing.T) {
			download, _ := fakeModules(t, map[string]map[string]string{"example.com/m@v1.0.0": {"crds/f.yaml": c.file}})
			pins := []pin{{Module: "example.com/m", Version: "v1.0.0", Files: []string{"crds/f.yaml"}}}
			own := handWritten(t, map[string]string{"cs.example.com.yaml": crd("cs.example.com")})
			_, err := gather(pins, own, t.TempDir(), download)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want it to say %q", err, c.want)
			}
		})
	}
	download, _ := fakeModules(t, map[string]map[string]string{"example.com/m@v1.0.0": {}})
	pins := []pin{{Module: "example.com/m", Version: "v1.0.0", Files: []string{"crds/missing.yaml"}}}
	own := handWritten(t, map[string]string{"cs.example.com.yaml": crd("cs.example.com")})
	if _, err := gather(pins, own, t.TempDir(), download); err == nil || !strings.Contains(err.Error(), "example.com/m@v1.0.0: crds/missing.yaml:") {
		t.Errorf("error %v, want it to name the module and file", err)
	}
}

// The pinned files are each one CRD, and none is also hand-written: run against the module
// cache (go mod download), skipped with -short.
func TestPinsAreOneCRDEach(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go mod download")
	}
	dir, err := gather(pins, filepath.Join("..", "..", handWrittenDir), t.TempDir(), goModDownload)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, p := range pins {
		files += len(p.Files)
	}
	own, _ := filepath.Glob(filepath.Join("..", "..", handWrittenDir, "*.yaml"))
	if want := files + len(own) + 1; len(entries) != want { // + SOURCES.txt
		t.Errorf("%d files in %s, want %d: a pinned file held more or fewer than one CRD", len(entries), dir, want)
	}
}
