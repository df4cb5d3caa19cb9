package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// A release's kubectl-kai archive holds the binary and the license; the binary says the
// release's version; the checksums and the krew manifest name the archive by its real sum
// and where the release publishes it.
func TestArchivesChecksumsAndKrewManifest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kubectl-kai")
	}
	platform := runtime.GOOS + "/" + runtime.GOARCH
	opts := options{Root: "../..", Out: t.TempDir(), Version: "9.8.7", Platforms: []string{platform}}
	archives, err := dist(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(archives) != 1 || archives[0].File != "kubectl-kai_9.8.7_"+runtime.GOOS+"_"+runtime.GOARCH+".tar.gz" {
		t.Fatalf("archives %+v", archives)
	}
	path := filepath.Join(opts.Out, archives[0].File)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != archives[0].SHA256 {
		t.Errorf("reported sum %s is not the archive's", archives[0].SHA256)
	}

	files := untarGz(t, path)
	if !strings.Contains(string(files["LICENSE"]), "Apache License") {
		t.Error("no license in the archive")
	}
	binary := filepath.Join(t.TempDir(), "kubectl-kai")
	if err := os.WriteFile(binary, files["kubectl-kai"], 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(binary, "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "kubectl-kai 9.8.7 (commit ") {
		t.Errorf("--version: %q, %v", out, err)
	}

	checksums, err := os.ReadFile(filepath.Join(opts.Out, "checksums.txt"))
	if err != nil || string(checksums) != archives[0].SHA256+"  "+archives[0].File+"\n" {
		t.Errorf("checksums.txt: %q, %v", checksums, err)
	}
	manifestData, err := os.ReadFile(filepath.Join(opts.Out, "kai.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		Kind     string
		Metadata struct{ Name string }
		Spec     struct {
			Version   string
			Platforms []struct {
				Selector struct{ MatchLabels map[string]string } `json:"selector"`
				URI      string                                  `json:"uri"`
				SHA256   string                                  `json:"sha256"`
				Bin      string                                  `json:"bin"`
			}
		}
	}
	if err := yaml.Unmarshal(manifestData, &manifest); err != nil {
		t.Fatalf("kai.yaml is not YAML: %v\n%s", err, manifestData)
	}
	p := manifest.Spec.Platforms
	if manifest.Kind != "Plugin" || manifest.Metadata.Name != "kai" || manifest.Spec.Version != "v9.8.7" || len(p) != 1 {
		t.Fatalf("kai.yaml:\n%s", manifestData)
	}
	wantURI := "https://github.com/kai-minruntime/kai-scheduler/releases/download/v9.8.7/" + archives[0].File
	if p[0].URI != wantURI || p[0].SHA256 != archives[0].SHA256 || p[0].Bin != "kubectl-kai" ||
		p[0].Selector.MatchLabels["os"] != runtime.GOOS || p[0].Selector.MatchLabels["arch"] != runtime.GOARCH {
		t.Errorf("krew platform %+v, want %s with sum %s", p[0], wantURI, archives[0].SHA256)
	}
}

func untarGz(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	r := tar.NewReader(gz)
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if files[h.Name], err = io.ReadAll(r); err != nil {
			t.Fatal(err)
		}
	}
}
