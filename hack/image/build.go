package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/kai-minruntime/kai-scheduler/hack/internal/release"
)

// What a cluster relies on in the image; the Dockerfile must say the same
// (TestDockerfileBuildsTheSameImage).
const (
	// Entrypoint is the scheduler's path: the chart gives the container arguments only.
	Entrypoint = "/usr/local/bin/kai-scheduler"
	// User is distroless's "nonroot", which the chart's securityContext (runAsNonRoot) needs.
	User = "65532:65532"
	// Source is the repository the image's labels name.
	Source = release.Source
	// License is the project's, as an SPDX expression.
	License = "Apache-2.0"
)

// options say what to build.
type options struct {
	// Root is the repository's root, Out where the image is written.
	Root, Out string
	// Repository and Version name the image (Version defaults to release.Version's: a release's number only on its tag).
	Repository, Version string
	// Platforms are GOOS/GOARCH pairs.
	Platforms []string
}

func defaultOptions() options {
	return options{Root: ".", Repository: "ghcr.io/kai-minruntime/kai-scheduler", Platforms: []string{"linux/amd64", "linux/arm64"}}
}

// built is what build wrote.
type built struct {
	Reference name.Tag
	Commit    string
	// Digest is the multi-platform index's.
	Digest v1.Hash
	Index  v1.ImageIndex
	// Files are the archives written, and the layout directory.
	Files []string
}

// build compiles the scheduler for every platform and writes the image's index as a layout
// and archives.
func build(opts options) (*built, error) {
	if opts.Version == "" {
		v, err := release.Version(opts.Root)
		if err != nil {
			return nil, err
		}
		opts.Version = v
	}
	ref, err := name.NewTag(opts.Repository + ":" + opts.Version)
	if err != nil {
		return nil, fmt.Errorf("image name %s:%s: %w", opts.Repository, opts.Version, err)
	}
	commit, created := release.Commit(opts.Root)
	labels := map[string]string{
		"org.opencontainers.image.title":       "kai-scheduler",
		"org.opencontainers.image.description": "A KAI-Scheduler-compatible batch scheduler with guaranteed minimum runtime before preemption and reclaim",
		"org.opencontainers.image.source":      Source,
		"org.opencontainers.image.url":         Source,
		"org.opencontainers.image.version":     opts.Version,
		"org.opencontainers.image.revision":    commit,
		"org.opencontainers.image.licenses":    License,
		"org.opencontainers.image.created":     created.UTC().Format(time.RFC3339),
	}
	license, err := os.ReadFile(filepath.Join(opts.Root, "LICENSE"))
	if err != nil {
		return nil, fmt.Errorf("the image carries the license: %w", err)
	}
	base, err := layerOf(created, baseFiles(license))
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "kai-image-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(work) }() // a temporary directory: at worst left behind

	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	images := map[string]v1.Image{}
	for _, platform := range opts.Platforms {
		goos, goarch, ok := strings.Cut(platform, "/")
		if !ok || goos != "linux" {
			return nil, fmt.Errorf("platform %q: only linux/ARCH images are built", platform)
		}
		binary := filepath.Join(work, "kai-scheduler-"+goarch)
		if err := release.Build(opts.Root, "kai-scheduler", goos, goarch, opts.Version, commit, binary); err != nil {
			return nil, err
		}
		img, err := imageFor(base, binary, goarch, created, labels)
		if err != nil {
			return nil, err
		}
		images[goarch] = img
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: goos, Architecture: goarch}}})
	}
	idx = mutate.Annotations(idx, labels).(v1.ImageIndex)
	digest, err := idx.Digest()
	if err != nil {
		return nil, err
	}
	out := &built{Reference: ref, Commit: commit, Digest: digest, Index: idx}
	return out, out.write(opts, images, created)
}

// write replaces opts.Out with the layout and the archives.
func (b *built) write(opts options, images map[string]v1.Image, created time.Time) error {
	if err := os.RemoveAll(opts.Out); err != nil {
		return err
	}
	dir := filepath.Join(opts.Out, "oci")
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	// docker, podman and containerd (kind) name what they load from these annotations.
	if err := p.AppendIndex(b.Index, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": b.Reference.TagStr(),
		"io.containerd.image.name":          b.Reference.String(),
	})); err != nil {
		return err
	}
	archive := filepath.Join(opts.Out, fmt.Sprintf("kai-scheduler-%s.oci.tar", b.Reference.TagStr()))
	if err := tarDirectory(dir, archive, created); err != nil {
		return err
	}
	b.Files = append(b.Files, dir, archive)
	for _, platform := range opts.Platforms {
		_, goarch, _ := strings.Cut(platform, "/")
		file := filepath.Join(opts.Out, fmt.Sprintf("kai-scheduler-%s-linux-%s.tar", b.Reference.TagStr(), goarch))
		if err := tarball.WriteToFile(file, b.Reference, images[goarch]); err != nil {
			return err
		}
		b.Files = append(b.Files, file)
	}
	return nil
}

// imageFor lays the binary on the base and sets what the container runs as.
func imageFor(base v1.Layer, binary, goarch string, created time.Time, labels map[string]string) (v1.Image, error) {
	data, err := os.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	app, err := layerOf(created, []file{
		{name: "usr/", dir: true, mode: 0o755}, {name: "usr/local/", dir: true, mode: 0o755},
		{name: "usr/local/bin/", dir: true, mode: 0o755},
		{name: strings.TrimPrefix(Entrypoint, "/"), mode: 0o755, data: data},
	})
	if err != nil {
		return nil, err
	}
	at := v1.Time{Time: created}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, History: v1.History{Created: at, CreatedBy: "hack/image: base (nonroot user 65532, /tmp, license)"}},
		mutate.Addendum{Layer: app, History: v1.History{Created: at, CreatedBy: "hack/image: " + Entrypoint}})
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Created = "linux", goarch, at
	cfg.Config.Entrypoint = []string{Entrypoint}
	cfg.Config.User = User
	cfg.Config.WorkingDir = "/"
	cfg.Config.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	cfg.Config.Labels = labels
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return nil, err
	}
	return mutate.Annotations(img, labels).(v1.Image), nil
}

// file is an entry of a layer.
type file struct {
	name string
	dir  bool
	mode int64
	uid  int
	data []byte
}

// baseFiles are what distroless's static image gives a Go binary that needs no libc: users,
// a writable /tmp, a home for nonroot; and the license the image is distributed under.
func baseFiles(license []byte) []file {
	return []file{
		{name: "etc/", dir: true, mode: 0o755},
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{name: "etc/nsswitch.conf", mode: 0o644, data: []byte("hosts: files dns\n")},
		{name: "home/", dir: true, mode: 0o755},
		{name: "home/nonroot/", dir: true, mode: 0o700, uid: 65532},
		{name: "licenses/", dir: true, mode: 0o755},
		{name: "licenses/kai-scheduler/", dir: true, mode: 0o755},
		{name: "licenses/kai-scheduler/LICENSE", mode: 0o644, data: license},
		{name: "root/", dir: true, mode: 0o700},
		{name: "tmp/", dir: true, mode: 0o1777},
	}
}

// layerOf makes a layer of files, every time and owner fixed so that it is reproducible.
func layerOf(created time.Time, files []file) (v1.Layer, error) {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, Uid: f.uid, Gid: f.uid, ModTime: created, Format: tar.FormatPAX}
		if f.dir {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.data))
		}
		if err := w.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := w.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.OCILayer))
}

// tarDirectory archives dir's files (an OCI layout) into out, in name order, times fixed.
func tarDirectory(dir, out string, created time.Time) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			return w.WriteHeader(&tar.Header{Name: rel + "/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: created})
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := w.WriteHeader(&tar.Header{Name: rel, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(data)), ModTime: created}); err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	})
	if closeErr := w.Close(); err == nil {
		err = closeErr
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	return err
}
