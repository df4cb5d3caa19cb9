package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/kai-minruntime/kai-scheduler/hack/internal/debs"
	"github.com/kai-minruntime/kai-scheduler/hack/internal/release"
)

// The images are built as make image builds them, then opened with the same library to check
// what a cluster relies on: both platforms in each index, the entrypoint the chart (or the
// reservation pod) runs, a non-root user, the labels, each platform's binary for that
// platform, and the host's binary printing the version of this checkout (git describe's: a
// release's number only on its tag), or, for the reservation program, running on the image's
// own glibc. Every archive holds the same images.
//
// The reservation image is built for the platforms whose C compiler is here without fetching
// one: the host's gcc for its own platform, and linux/arm64 only once make image has fetched
// Debian's cross toolchain into bin/cross (or with CC_LINUX_ARM64), so that make test on a
// fresh machine neither downloads it nor compiles the program twice more; the log says
// which platform was left out and why.
func TestImageIsWhatTheChartRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the scheduler for two platforms")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	opts := defaultOptions()
	opts.Root, opts.Out = root, t.TempDir()
	opts.ReservationPlatforms = nil
	for _, platform := range defaultOptions().ReservationPlatforms {
		_, arch, _ := strings.Cut(platform, "/")
		if _, err := cCompiler(root, arch, false); err != nil {
			t.Logf("the %s reservation image is not built or checked here: %v", platform, err)
			continue
		}
		opts.ReservationPlatforms = append(opts.ReservationPlatforms, platform)
	}
	version, err := release.Version(root)
	if err != nil {
		t.Fatal(err)
	}
	b, err := build(opts)
	if errors.Is(err, debs.ErrSuperseded) {
		// The archive moved on, not this tree: make image fails on it, and the release with
		// it, until the pin is bumped; the scheduler's image is still checked here.
		t.Logf("NOT CHECKED: the reservation image, whose pinned glibc is gone from Debian's mirror: %v", err)
		opts.ReservationPlatforms = nil
		b, err = build(opts)
	}
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := release.Version(root); after != version {
		t.Skip("the checkout changed while it was being built")
	}
	if b.Scheduler.Reference.TagStr() != version {
		t.Errorf("tagged %s, want this checkout's version %s", b.Scheduler.Reference.TagStr(), version)
	}

	// The layout holds one entry, the index, named for docker, podman and containerd.
	idx := layoutIndex(t, filepath.Join(opts.Out, "oci"), "ghcr.io/kai-minruntime/kai-scheduler:"+version, b.Scheduler.Digest)
	manifest, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, desc := range manifest.Manifests {
		platforms = append(platforms, desc.Platform.String())
		img, err := idx.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		checkImage(t, img, desc.Platform.Architecture, version, b.Commit)
	}
	if want := []string{"linux/amd64", "linux/arm64"}; !slices.Equal(platforms, want) {
		t.Errorf("platforms %v, want %v", platforms, want)
	}

	// The host's binary runs and says what it is.
	if runtime.GOOS == "linux" && slices.Contains(platforms, "linux/"+runtime.GOARCH) {
		img := imageOf(t, idx, runtime.GOARCH)
		binary := filepath.Join(t.TempDir(), "kai-scheduler")
		if err := os.WriteFile(binary, fileIn(t, img, Entrypoint).data, 0o755); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(binary, "--version").CombinedOutput()
		if err != nil {
			t.Fatalf("%s --version: %v\n%s", binary, err, out)
		}
		if want := "kai-scheduler " + version + " (commit " + b.Commit + ", "; !strings.HasPrefix(string(out), want) {
			t.Errorf("--version printed %q, want it to start with %q", out, want)
		}
	}
	checkArchives(t, opts.Out, b.Scheduler, idx)

	// The reservation image: its own layout and archives, each platform's program on that
	// platform's glibc.
	var reservation v1.ImageIndex
	if len(opts.ReservationPlatforms) > 0 {
		reservation = layoutIndex(t, filepath.Join(opts.Out, ReservationName+"-oci"),
			"ghcr.io/kai-minruntime/kai-resource-reservation:"+version, b.Reservation.Digest)
		m, err := reservation.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, desc := range m.Manifests {
			got = append(got, desc.Platform.String())
			img, err := reservation.Image(desc.Digest)
			if err != nil {
				t.Fatal(err)
			}
			checkReservation(t, img, desc.Platform.Architecture, version, b.Commit)
		}
		if !slices.Equal(got, opts.ReservationPlatforms) {
			t.Errorf("reservation platforms %v, want %v", got, opts.ReservationPlatforms)
		}
		checkArchives(t, opts.Out, b.Reservation, reservation)
	}

	// A registry takes the layout's index as crane push sends it, and serves each platform
	// its own image.
	server := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer server.Close()
	pushed, err := name.ParseReference(strings.TrimPrefix(server.URL, "http://") + "/kai-scheduler:" + version)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(pushed, idx); err != nil {
		t.Fatalf("pushing the index: %v", err)
	}
	for _, arch := range []string{"amd64", "arm64"} {
		img, err := remote.Image(pushed, remote.WithPlatform(v1.Platform{OS: "linux", Architecture: arch}))
		if err != nil {
			t.Fatalf("pulling linux/%s: %v", arch, err)
		}
		got, _ := img.Digest()
		want, _ := imageOf(t, idx, arch).Digest()
		if got != want {
			t.Errorf("the registry serves linux/%s as %s, built %s", arch, got, want)
		}
	}

	// The same commit builds the same images: the host's platform, built again (one more
	// compile of each, not two), has the digests the first build gave it.
	host := "linux/" + runtime.GOARCH
	opts.Out, opts.Platforms = t.TempDir(), []string{host}
	if slices.Contains(opts.ReservationPlatforms, host) {
		opts.ReservationPlatforms = []string{host}
	} else {
		opts.ReservationPlatforms = nil
	}
	again, err := build(opts)
	if err != nil {
		t.Fatal(err)
	}
	pairs := [][2]v1.ImageIndex{{idx, again.Scheduler.Index}}
	if opts.ReservationPlatforms != nil {
		pairs = append(pairs, [2]v1.ImageIndex{reservation, again.Reservation.Index})
	}
	for _, pair := range pairs {
		first, _ := imageOf(t, pair[0], runtime.GOARCH).Digest()
		second, _ := imageOf(t, pair[1], runtime.GOARCH).Digest()
		if first != second && !strings.HasSuffix(b.Commit, "-dirty") {
			t.Errorf("built twice from commit %s: linux/%s image %s, then %s", b.Commit, runtime.GOARCH, first, second)
		}
	}
}

// layoutIndex opens the layout in dir, which must hold one entry, the index of digest, named
// ref for docker, podman and containerd; it returns the index.
func layoutIndex(t *testing.T, dir, ref string, digest v1.Hash) v1.ImageIndex {
	t.Helper()
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	topManifest, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(topManifest.Manifests) != 1 || !topManifest.Manifests[0].MediaType.IsIndex() {
		t.Fatalf("%s holds %+v, want one index", dir, topManifest.Manifests)
	}
	entry := topManifest.Manifests[0]
	if got := entry.Annotations["io.containerd.image.name"]; got != ref {
		t.Errorf("%s: io.containerd.image.name %q, want %q", dir, got, ref)
	}
	if entry.Digest != digest {
		t.Errorf("%s: layout's index %s, built %s", dir, entry.Digest, digest)
	}
	idx, err := top.ImageIndex(entry.Digest)
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

// checkArchives checks that img's archives hold the same images as its layout's index: the
// OCI archive the same layout, each docker archive its platform's config.
func checkArchives(t *testing.T, out string, img image, idx v1.ImageIndex) {
	t.Helper()
	version := img.Reference.TagStr()
	unpacked := t.TempDir()
	untar(t, filepath.Join(out, img.Name+"-"+version+".oci.tar"), unpacked)
	fromArchive, err := layout.ImageIndexFromPath(unpacked)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := fromArchive.IndexManifest(); err != nil || len(m.Manifests) != 1 || m.Manifests[0].Digest != img.Digest {
		t.Errorf("the %s OCI archive holds %+v (%v), want the index %s", img.Name, m, err, img.Digest)
	}
	for _, platform := range img.Platforms {
		_, arch, _ := strings.Cut(platform, "/")
		archived, err := tarball.ImageFromPath(filepath.Join(out, img.Name+"-"+version+"-linux-"+arch+".tar"), &img.Reference)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := imageOf(t, idx, arch).ConfigName()
		if got, err := archived.ConfigName(); err != nil || got != want {
			t.Errorf("%s linux/%s docker archive: config %s (%v), want %s", img.Name, arch, got, err, want)
		}
	}
}

// checkConfig checks an image's config: its platform, its entrypoint and no command (the chart
// gives the scheduler arguments only, the reservation pod gives none), the non-root user and
// the labels.
func checkConfig(t *testing.T, img v1.Image, name, arch, entrypoint string, labels map[string]string) {
	t.Helper()
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.OS != "linux" || cfg.Architecture != arch {
		t.Errorf("%s %s image's config says %s/%s", name, arch, cfg.OS, cfg.Architecture)
	}
	if !slices.Equal(cfg.Config.Entrypoint, []string{entrypoint}) || len(cfg.Config.Cmd) != 0 {
		t.Errorf("%s %s: entrypoint %v, cmd %v; want %s and no command", name, arch, cfg.Config.Entrypoint, cfg.Config.Cmd, entrypoint)
	}
	if cfg.Config.User != "65532:65532" {
		t.Errorf("%s %s: user %q, want 65532:65532", name, arch, cfg.Config.User)
	}
	for key, want := range labels {
		if got := cfg.Config.Labels[key]; got != want || got == "" {
			t.Errorf("%s %s: label %s = %q, want %q", name, arch, key, got, want)
		}
	}
}

// checkImage checks one platform's image: its config and the files the container needs.
func checkImage(t *testing.T, img v1.Image, arch, version, commit string) {
	t.Helper()
	checkConfig(t, img, "scheduler", arch, Entrypoint, map[string]string{
		"org.opencontainers.image.source":   "https://github.com/kai-minruntime/kai-scheduler",
		"org.opencontainers.image.version":  version,
		"org.opencontainers.image.revision": commit,
		"org.opencontainers.image.licenses": "Apache-2.0",
	})

	bin := fileIn(t, img, Entrypoint)
	if bin.header.Mode&0o111 == 0 {
		t.Errorf("%s: %s is not executable (mode %o)", arch, Entrypoint, bin.header.Mode)
	}
	e, err := elf.NewFile(bytes.NewReader(bin.data))
	if err != nil {
		t.Fatalf("%s: %s is not an ELF binary: %v", arch, Entrypoint, err)
	}
	if want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]; e.Machine != want {
		t.Errorf("%s image holds a %s binary", arch, e.Machine)
	}
	for _, prog := range e.Progs {
		if prog.Type == elf.PT_INTERP {
			t.Errorf("%s: the binary needs a dynamic loader; the image has none", arch)
		}
	}
	if passwd := string(fileIn(t, img, "/etc/passwd").data); !strings.Contains(passwd, "nonroot:x:65532:65532:") {
		t.Errorf("%s: /etc/passwd has no nonroot user 65532:\n%s", arch, passwd)
	}
	if tmp := fileIn(t, img, "/tmp/"); tmp.header.Mode&0o1777 != 0o1777 {
		t.Errorf("%s: /tmp mode %o, want 1777", arch, tmp.header.Mode)
	}
	if license := string(fileIn(t, img, "/licenses/kai-scheduler/LICENSE").data); !strings.Contains(license, "Apache License") {
		t.Errorf("%s: no license in the image", arch)
	}
}

// imageOf returns the index's image for linux/arch.
func imageOf(t *testing.T, idx v1.ImageIndex, arch string) v1.Image {
	t.Helper()
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, desc := range m.Manifests {
		if desc.Platform != nil && desc.Platform.Architecture == arch {
			img, err := idx.Image(desc.Digest)
			if err != nil {
				t.Fatal(err)
			}
			return img
		}
	}
	t.Fatalf("no linux/%s image", arch)
	return nil
}

type entry struct {
	header *tar.Header
	data   []byte
}

// fileIn reads a file of the image's flattened filesystem.
func fileIn(t *testing.T, img v1.Image, name string) entry {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	r := tar.NewReader(bufio.NewReader(rc))
	want := strings.Trim(name, "/") // directories are named with or without their slash
	for {
		h, err := r.Next()
		if err == io.EOF {
			t.Fatalf("no %s in the image", name)
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSuffix(h.Name, "/") == want {
			data, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			return entry{header: h, data: data}
		}
	}
}

// untar unpacks an archive into dir.
func untar(t *testing.T, archive, dir string) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := tar.NewReader(f)
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(target, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(target, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The Dockerfile, for those who build with Docker, makes the image the cluster relies on:
// the same entrypoint, user, license and labels, from a static build of the same version.
func TestDockerfileBuildsTheSameImage(t *testing.T) {
	data, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	dockerfile := string(data)
	for _, want := range []string{
		`ENTRYPOINT ["` + Entrypoint + `"]`,
		"USER " + User,
		"COPY --from=build /out/kai-scheduler " + Entrypoint,
		"COPY LICENSE /licenses/kai-scheduler/LICENSE",
		"FROM gcr.io/distroless/static:nonroot",
		"CGO_ENABLED=0",
		`org.opencontainers.image.source="` + Source + `"`,
		`org.opencontainers.image.licenses="` + License + `"`,
		"pkg/version.Version=${VERSION}",
		"pkg/version.Commit=${COMMIT}",
	} {
		if !strings.Contains(dockerfile, want) {
			t.Errorf("the Dockerfile does not say %q", want)
		}
	}
	goMod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(goMod)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "go "); ok {
			minor := strings.Join(strings.Split(v, ".")[:2], ".")
			if !strings.Contains(dockerfile, "FROM --platform=$BUILDPLATFORM golang:"+minor+" AS build") {
				t.Errorf("the Dockerfile does not build with Go %s, which go.mod names", minor)
			}
		}
	}
}
