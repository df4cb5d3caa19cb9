package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"time"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// layout names how the output directory is laid out: a change to what this tool writes bumps
// it, so that a directory written by an older version is not taken for a current one.
const layout = "workloadcrds/1"

// handWrittenDir holds the hand-written CRDs, relative to the repository.
const handWrittenDir = "test/crds"

// complete is the file written last into an output directory: the directory is whole once it
// is there. It lists where each CRD came from.
const complete = "SOURCES.txt"

func main() {
	root := flag.String("root", repoRoot(), "the repository")
	out := flag.String("out", "", "where the pinned directories go (default ROOT/bin/crds/workloads)")
	flag.Parse()
	if *out == "" {
		*out = filepath.Join(*root, "bin", "crds", "workloads")
	}
	dir, err := gather(pins, filepath.Join(*root, handWrittenDir), *out, goModDownload)
	if err != nil {
		fmt.Fprintln(os.Stderr, "workloadcrds:", err)
		os.Exit(1)
	}
	fmt.Println(dir)
}

// repoRoot is the repository, found from this source file; from the working directory up to
// the first go.mod when the build trimmed its paths.
func repoRoot() string {
	_, file, _, _ := goruntime.Caller(0)
	if root := filepath.Join(filepath.Dir(file), "..", ".."); filepath.IsAbs(root) {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			return root
		}
	}
	dir, err := os.Getwd()
	if err != nil {
		return "."
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// downloader returns the directory of each module version ("module@version") in the module
// cache, downloading what is missing.
type downloader func(versions []string) (map[string]string, error)

// gather copies the CRDs of the pins' files and of the hand-written directory into a
// directory under out named after all of them, and returns its absolute path. When that
// directory is already complete it returns at once, without calling download.
func gather(pins []pin, handWritten, out string, download downloader) (string, error) {
	start := time.Now()
	own, err := readHandWritten(handWritten)
	if err != nil {
		return "", err
	}
	if out, err = filepath.Abs(out); err != nil {
		return "", err
	}
	dir := filepath.Join(out, key(pins, own))
	if _, err := os.Stat(filepath.Join(dir, complete)); err == nil {
		return dir, nil
	}

	var versions []string
	for _, p := range pins {
		if v := p.Module + "@" + p.Version; !slices.Contains(versions, v) {
			versions = append(versions, v)
		}
	}
	dirs, err := download(versions)
	if err != nil {
		return "", err
	}
	var sources []source
	for _, p := range pins {
		moduleDir := dirs[p.Module+"@"+p.Version]
		if moduleDir == "" {
			return "", fmt.Errorf("%s@%s: not in the module cache after go mod download", p.Module, p.Version)
		}
		for _, f := range p.Files {
			data, err := os.ReadFile(filepath.Join(moduleDir, filepath.FromSlash(f)))
			if err != nil {
				return "", fmt.Errorf("%s@%s: %s: %w", p.Module, p.Version, f, err)
			}
			sources = append(sources, source{name: p.Module + "@" + p.Version + " " + f, data: data})
		}
	}
	sources = append(sources, own...)

	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(out, ".partial-")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	written, err := writeCRDs(tmp, sources)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, complete), []byte(written), 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another run finished the same directory first: it is as good as this one.
		if _, statErr := os.Stat(filepath.Join(dir, complete)); statErr == nil {
			return dir, nil
		}
		return "", err
	}
	fmt.Fprintf(os.Stderr, "workloadcrds: %d CRDs from %d files into %s in %s\n", strings.Count(written, "\n"), len(sources), dir, time.Since(start).Round(time.Millisecond))
	return dir, nil
}

// source is one file of CRDs: where it comes from, and its content.
type source struct {
	name string
	data []byte
}

// readHandWritten reads the hand-written CRDs (*.yaml), in the order of their names.
func readHandWritten(dir string) ([]source, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no hand-written CRDs (*.yaml) in %s", dir)
	}
	slices.Sort(paths)
	var sources []source
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		sources = append(sources, source{name: handWrittenDir + "/" + filepath.Base(path), data: data})
	}
	return sources, nil
}

// key names the output directory after the layout, the pins and the hand-written files.
func key(pins []pin, handWritten []source) string {
	h := sha256.New()
	fmt.Fprintln(h, layout)
	for _, p := range pins {
		for _, f := range p.Files {
			fmt.Fprintf(h, "%s@%s %s\n", p.Module, p.Version, f)
		}
	}
	for _, s := range handWritten {
		fmt.Fprintf(h, "%s %d\n", s.name, len(s.data))
		h.Write(s.data)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// crdHeader is what each document must be.
type crdHeader struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
}

// writeCRDs writes every CRD of the sources into dir, one CRD a file named <CRD name>.yaml:
// a file of several YAML documents is split. Each file starts with a comment naming its
// source; the document follows byte for byte. It returns the list of what came from where.
func writeCRDs(dir string, sources []source) (string, error) {
	from := map[string]string{} // CRD name -> source
	var list strings.Builder
	for _, s := range sources {
		docs, err := documents(s.data)
		if err != nil {
			return "", fmt.Errorf("%s: %w", s.name, err)
		}
		if len(docs) == 0 {
			return "", fmt.Errorf("%s: no YAML document", s.name)
		}
		for i, doc := range docs {
			var h crdHeader
			if err := yaml.Unmarshal(doc, &h); err != nil {
				return "", fmt.Errorf("%s: document %d: %w", s.name, i+1, err)
			}
			if h.APIVersion != "apiextensions.k8s.io/v1" || h.Kind != "CustomResourceDefinition" || h.Metadata.Name == "" {
				return "", fmt.Errorf("%s: document %d is %s %s %q, not a named apiextensions.k8s.io/v1 CustomResourceDefinition",
					s.name, i+1, h.APIVersion, h.Kind, h.Metadata.Name)
			}
			name := h.Metadata.Name
			if name != filepath.Base(name) || strings.HasPrefix(name, ".") {
				return "", fmt.Errorf("%s: document %d: CRD name %q cannot name a file", s.name, i+1, name)
			}
			if other, dup := from[name]; dup {
				return "", fmt.Errorf("%s: CRD %s is also in %s: a cluster holds one CRD of a name", s.name, name, other)
			}
			from[name] = s.name
			content := append([]byte("# Copied by hack/workloadcrds from "+s.name+"\n"), doc...)
			if err := os.WriteFile(filepath.Join(dir, name+".yaml"), content, 0o644); err != nil {
				return "", err
			}
			fmt.Fprintf(&list, "%s.yaml\t%s\n", name, s.name)
		}
	}
	return list.String(), nil
}

// documents splits YAML into its documents, leaving out those holding only comments.
func documents(data []byte) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if !onlyComments(doc) {
			docs = append(docs, doc)
		}
	}
}

func onlyComments(doc []byte) bool {
	for line := range strings.Lines(string(doc)) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			return false
		}
	}
	return true
}

// goModDownload runs `go mod download -json` (the go on PATH) on the versions, in an empty
// directory so that no go.mod is consulted or changed, and returns each one's directory.
func goModDownload(versions []string) (map[string]string, error) {
	work, err := os.MkdirTemp("", "workloadcrds-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(work) }()
	cmd := exec.Command("go", append([]string{"mod", "download", "-json"}, versions...)...)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "GOWORK=off", "GO111MODULE=on")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()

	dirs := map[string]string{}
	var failures []string
	dec := json.NewDecoder(&stdout)
	for {
		var m struct{ Path, Version, Dir, Error string }
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go mod download -json %s: reading its output: %w (stderr: %s)", strings.Join(versions, " "), err, stderr.String())
		}
		if m.Error != "" {
			failures = append(failures, fmt.Sprintf("%s@%s: %s", m.Path, m.Version, m.Error))
			continue
		}
		dirs[m.Path+"@"+m.Version] = m.Dir
	}
	if len(failures) > 0 {
		return nil, fmt.Errorf("go mod download failed:\n  %s", strings.Join(failures, "\n  "))
	}
	if runErr != nil {
		return nil, fmt.Errorf("go mod download -json %s: %w: %s", strings.Join(versions, " "), runErr, stderr.String())
	}
	return dirs, nil
}
