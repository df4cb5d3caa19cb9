// Command dist builds kubectl-kai's release archives: for each platform a .tar.gz of the
// static binary and the license, their SHA-256 sums, and a krew manifest naming them, into
// -out (make dist: _output/dist):
//
//	VERSION=0.2.0 go run ./hack/dist
//
// The archives are what the release workflow attaches to the GitHub release vVERSION; the
// krew manifest's URIs point there.
package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	"github.com/kai-minruntime/kai-scheduler/hack/internal/release"
)

// releases is where the release workflow publishes the archives.
const releases = release.Source + "/releases/download"

type options struct {
	Root, Out, Version string
	Platforms          []string
}

// archive is one platform's archive.
type archive struct {
	OS, Arch, File, SHA256 string
}

func main() {
	opts := options{Root: "."}
	platforms := flag.String("platforms", "linux/amd64,linux/arm64,darwin/amd64,darwin/arm64", "comma-separated GOOS/GOARCH")
	flag.StringVar(&opts.Out, "out", "_output/dist", "directory to write into (replaced)")
	flag.StringVar(&opts.Version, "version", os.Getenv("VERSION"), "version (default $VERSION, else git describe's: X.Y.Z only on the commit tagged vX.Y.Z)")
	flag.Parse()
	opts.Platforms = strings.Split(*platforms, ",")
	archives, err := dist(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
	for _, a := range archives {
		fmt.Printf("%s  %s\n", a.SHA256, filepath.Join(opts.Out, a.File))
	}
}

// dist builds every platform's archive, then the checksums and the krew manifest.
func dist(opts options) ([]archive, error) {
	if opts.Version == "" {
		v, err := release.Version(opts.Root)
		if err != nil {
			return nil, err
		}
		opts.Version = v
	}
	if err := os.RemoveAll(opts.Out); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return nil, err
	}
	license, err := os.ReadFile(filepath.Join(opts.Root, "LICENSE"))
	if err != nil {
		return nil, err
	}
	commit, created := release.Commit(opts.Root)
	var archives []archive
	var sums strings.Builder
	for _, platform := range opts.Platforms {
		goos, goarch, ok := strings.Cut(platform, "/")
		if !ok {
			return nil, fmt.Errorf("platform %q: want GOOS/GOARCH", platform)
		}
		a := archive{OS: goos, Arch: goarch, File: fmt.Sprintf("kubectl-kai_%s_%s_%s.tar.gz", opts.Version, goos, goarch)}
		binary := filepath.Join(opts.Out, "kubectl-kai-"+goos+"-"+goarch)
		if err := release.Build(opts.Root, "kubectl-kai", goos, goarch, opts.Version, commit, binary); err != nil {
			return nil, err
		}
		a.SHA256, err = writeArchive(filepath.Join(opts.Out, a.File), created, binary, license)
		_ = os.Remove(binary)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&sums, "%s  %s\n", a.SHA256, a.File)
		archives = append(archives, a)
	}
	if err := os.WriteFile(filepath.Join(opts.Out, "checksums.txt"), []byte(sums.String()), 0o644); err != nil {
		return nil, err
	}
	var manifest strings.Builder
	if err := krewManifest.Execute(&manifest, map[string]any{"Version": opts.Version, "Releases": releases, "Archives": archives}); err != nil {
		return nil, err
	}
	return archives, os.WriteFile(filepath.Join(opts.Out, "kai.yaml"), []byte(manifest.String()), 0o644)
}

// writeArchive writes a .tar.gz of the binary (as kubectl-kai) and the license, and returns
// its SHA-256.
func writeArchive(path string, created time.Time, binary string, license []byte) (string, error) {
	data, err := os.ReadFile(binary)
	if err != nil {
		return "", err
	}
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	sum := sha256.New()
	gz := gzip.NewWriter(io.MultiWriter(f, sum))
	tw := tar.NewWriter(gz)
	for _, entry := range []struct {
		name string
		mode int64
		data []byte
	}{{"kubectl-kai", 0o755, data}, {"LICENSE", 0o644, license}} {
		if err = tw.WriteHeader(&tar.Header{Name: entry.name, Mode: entry.mode, Size: int64(len(entry.data)), ModTime: created, Typeflag: tar.TypeReg}); err != nil {
			break
		}
		if _, err = tw.Write(entry.data); err != nil {
			break
		}
	}
	for _, closer := range []interface{ Close() error }{tw, gz, f} {
		if closeErr := closer.Close(); err == nil {
			err = closeErr
		}
	}
	return hex.EncodeToString(sum.Sum(nil)), err
}

// krewManifest installs kubectl-kai with `kubectl krew install --manifest=kai.yaml` (or from
// a krew index that carries it).
var krewManifest = template.Must(template.New("kai.yaml").Parse(`apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: kai
spec:
  version: v{{.Version}}
  homepage: https://github.com/kai-minruntime/kai-scheduler
  shortDescription: Explain KAI scheduling decisions and min-runtime protection
  description: |
    kubectl kai explains why a job of the kai-scheduler waits or runs, how long its
    min-runtime protects it and from whom, and snapshots a cluster for kai-sim.
  platforms:
{{- range .Archives}}
  - selector:
      matchLabels:
        os: {{.OS}}
        arch: {{.Arch}}
    uri: {{$.Releases}}/v{{$.Version}}/{{.File}}
    sha256: {{.SHA256}}
    bin: kubectl-kai
    files:
    - from: kubectl-kai
      to: .
    - from: LICENSE
      to: .
{{- end}}
`))
