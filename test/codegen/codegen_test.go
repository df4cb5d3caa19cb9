package codegen

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// generatedFile reports whether a path (relative to the repository) is written by hack/generate.sh.
func generatedFile(rel string) bool {
	return strings.HasSuffix(rel, "zz_generated.deepcopy.go") ||
		strings.HasPrefix(rel, filepath.Join("deployments", "kai-scheduler", "crds")+string(filepath.Separator))
}

// TestGeneratedFilesAreCurrent fails when someone changed the API types without running
// `make generate`, which would ship CRDs that disagree with the Go types.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	controllerGen := tool(t, root, "CONTROLLER_GEN", "controller-gen")

	// The copy holds the inputs of generation only; generated files are left out so that a
	// generator that stopped producing a file is noticed too.
	copyTree := t.TempDir()
	for _, input := range []string{"go.mod", "go.sum", "hack", "pkg/apis"} {
		copyInputs(t, filepath.Join(root, input), filepath.Join(copyTree, input))
	}
	cmd := exec.Command(filepath.Join(copyTree, "hack", "generate.sh"), copyTree)
	cmd.Env = append(os.Environ(), "CONTROLLER_GEN="+controllerGen)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/generate.sh failed: %v\n%s", err, out)
	}

	committed := generatedUnder(t, root)
	regenerated := generatedUnder(t, copyTree)
	for rel, want := range regenerated {
		got, ok := committed[rel]
		switch {
		case !ok:
			t.Errorf("%s is generated but not committed: run `make generate`", rel)
		case !bytes.Equal(got, want):
			t.Errorf("%s is stale: run `make generate`", rel)
		}
	}
	for rel := range committed {
		if _, ok := regenerated[rel]; !ok {
			t.Errorf("%s is committed but no longer generated: delete it", rel)
		}
	}
	if len(regenerated) == 0 {
		t.Fatal("generation produced no files; the generator or this test is broken")
	}
}

// tool finds a generator: the path in the environment variable, else ./bin/name.
func tool(t *testing.T, root, envVar, name string) string {
	t.Helper()
	path := os.Getenv(envVar)
	if path == "" {
		path = filepath.Join(root, "bin", name)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s not found at %s: run `make tools` (make test does it for you)", name, path)
	}
	return path
}

func copyInputs(t *testing.T, from, to string) {
	t.Helper()
	base := filepath.Dir(from)
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(base, path)
		target := filepath.Join(filepath.Dir(to), rel)
		if d.IsDir() {
			if d.Name() == "tools" && filepath.Base(filepath.Dir(path)) == "hack" {
				return filepath.SkipDir // a separate module, not an input
			}
			return os.MkdirAll(target, 0o755)
		}
		if generatedFile(rel) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatalf("copying %s: %v", from, err)
	}
}

// generatedUnder maps each generated file below dir (relative path) to its contents.
func generatedUnder(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, sub := range []string{"pkg", "deployments"} {
		start := filepath.Join(dir, sub)
		if _, err := os.Stat(start); os.IsNotExist(err) {
			continue
		}
		err := filepath.WalkDir(start, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(dir, path)
			if !generatedFile(rel) {
				return nil
			}
			data, err := os.ReadFile(path)
			files[rel] = data
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}
