package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
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
	// Root is the repository's root, Out where the images are written.
	Root, Out string
	// Repository and Version name the scheduler's image (Version defaults to release.Version's: a release's number only on its tag).
	Repository, Version string
	// Platforms are the scheduler's GOOS/GOARCH pairs.
	Platforms []string
	// ReservationRepository names the reservation image (the chart's
	// gpuSharing.reservation.image.repository), tagged Version too; ReservationPlatforms are
	// its platforms, none for no reservation image.
	ReservationRepository string
	ReservationPlatforms  []string
}

func defaultOptions() options {
	platforms := []string{"linux/amd64", "linux/arm64"}
	return options{Root: ".", Repository: "ghcr.io/kai-minruntime/kai-scheduler", Platforms: platforms,
		ReservationRepository: "ghcr.io/kai-minruntime/kai-resource-reservation", ReservationPlatforms: platforms}
}

// built is what build wrote.
type built struct {
	Commit string
	// Scheduler and Reservation are the two images (Reservation's Index nil when it has no
	// platform).
	Scheduler, Reservation image
	// Files are the layout directories and the archives written.
	Files []string
}

// image is one multi-platform image.
type image struct {
	// Name is the program's, which names the archives.
	Name      string
	Reference name.Tag
	// Digest is the multi-platform index's.
	Digest v1.Hash
	Index  v1.ImageIndex
	// Platforms are the index's, in order; Images each platform's image by GOARCH.
	Platforms []string
	Images    map[string]v1.Image
}

// spec says what makes one image besides the base.
type spec struct {
	name, description, entrypoint, licenses string
	repository                              string
	platforms                               []string
	// binary builds the program for goarch into out.
	binary func(goarch, out string) error
	// layers are the platform's layers between the base and the binary.
	layers func(goarch string) ([]mutate.Addendum, error)
}

// build compiles the scheduler and the reservation program for every platform and writes
// each image's index as a layout and archives.
func build(opts options) (*built, error) {
	if opts.Version == "" {
		v, err := release.Version(opts.Root)
		if err != nil {
			return nil, err
		}
		opts.Version = v
	}
	commit, created := release.Commit(opts.Root)
	// The reservation's C compilers first: a missing one fails in a second, not after the
	// scheduler's builds.
	compilers := map[string]compiler{}
	for _, platform := range opts.ReservationPlatforms {
		_, goarch, _ := strings.Cut(platform, "/")
		cc, err := cCompiler(opts.Root, goarch, true)
		if err != nil {
			return nil, err
		}
		compilers[goarch] = cc
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

	at := v1.Time{Time: created}
	out := &built{Commit: commit}
	out.Scheduler, err = buildImage(opts, spec{
		name:        "kai-scheduler",
		description: "A KAI-Scheduler-compatible batch scheduler with guaranteed minimum runtime before preemption and reclaim",
		entrypoint:  Entrypoint, licenses: License, repository: opts.Repository, platforms: opts.Platforms,
		binary: func(goarch, binary string) error {
			return release.Build(opts.Root, "kai-scheduler", "linux", goarch, opts.Version, commit, binary)
		},
	}, base, commit, created, work)
	if err != nil {
		return nil, err
	}
	if len(opts.ReservationPlatforms) > 0 {
		out.Reservation, err = buildImage(opts, spec{
			name:        ReservationName,
			description: "Holds the one GPU its pod is given, for kai-scheduler's GPU sharing: finds it with NVML and names it on the pod",
			entrypoint:  ReservationEntrypoint, licenses: ReservationLicenses, repository: opts.ReservationRepository,
			platforms: opts.ReservationPlatforms,
			binary: func(goarch, binary string) error {
				return buildCgo(opts.Root, ReservationName, goarch, opts.Version, commit, binary, compilers[goarch])
			},
			layers: func(goarch string) ([]mutate.Addendum, error) {
				files, pkg, err := glibcFiles(opts.Root, goarch)
				if err != nil {
					return nil, err
				}
				layer, err := layerOf(created, files)
				if err != nil {
					return nil, err
				}
				return []mutate.Addendum{{Layer: layer, History: v1.History{Created: at,
					CreatedBy: "hack/image: glibc from Debian 12's " + pkg.String()}}}, nil
			},
		}, base, commit, created, work)
		if err != nil {
			return nil, err
		}
	}
	return out, out.write(opts, created)
}

// buildImage builds s's program for every platform and lays each on the base and s's layers,
// into one index.
func buildImage(opts options, s spec, base v1.Layer, commit string, created time.Time, work string) (image, error) {
	ref, err := name.NewTag(s.repository + ":" + opts.Version)
	if err != nil {
		return image{}, fmt.Errorf("image name %s:%s: %w", s.repository, opts.Version, err)
	}
	labels := map[string]string{
		"org.opencontainers.image.title":       s.name,
		"org.opencontainers.image.description": s.description,
		"org.opencontainers.image.source":      Source,
		"org.opencontainers.image.url":         Source,
		"org.opencontainers.image.version":     opts.Version,
		"org.opencontainers.image.revision":    commit,
		"org.opencontainers.image.licenses":    s.licenses,
		"org.opencontainers.image.created":     created.UTC().Format(time.RFC3339),
	}
	at := v1.Time{Time: created}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	out := image{Name: s.name, Reference: ref, Images: map[string]v1.Image{}}
	for _, platform := range s.platforms {
		goos, goarch, ok := strings.Cut(platform, "/")
		if !ok || goos != "linux" {
			return image{}, fmt.Errorf("platform %q: only linux/ARCH images are built", platform)
		}
		binary := filepath.Join(work, s.name+"-"+goarch)
		if err := s.binary(goarch, binary); err != nil {
			return image{}, err
		}
		layers := []mutate.Addendum{{Layer: base, History: v1.History{Created: at, CreatedBy: "hack/image: base (nonroot user 65532, /tmp, license)"}}}
		if s.layers != nil {
			more, err := s.layers(goarch)
			if err != nil {
				return image{}, err
			}
			layers = append(layers, more...)
		}
		img, err := imageFor(layers, binary, s.entrypoint, goarch, created, labels)
		if err != nil {
			return image{}, err
		}
		out.Images[goarch] = img
		out.Platforms = append(out.Platforms, platform)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: goos, Architecture: goarch}}})
	}
	out.Index = mutate.Annotations(idx, labels).(v1.ImageIndex)
	if out.Digest, err = out.Index.Digest(); err != nil {
		return image{}, err
	}
	return out, nil
}

// write replaces opts.Out with each image's layout and archives.
func (b *built) write(opts options, created time.Time) error {
	if err := os.RemoveAll(opts.Out); err != nil {
		return err
	}
	// The scheduler's layout keeps the name oci/ that releases push; the reservation's is
	// beside it. One layout per image: crane push takes a layout of one index.
	if err := b.writeImage(b.Scheduler, filepath.Join(opts.Out, "oci"), opts.Out, created); err != nil {
		return err
	}
	if b.Reservation.Index == nil {
		return nil
	}
	return b.writeImage(b.Reservation, filepath.Join(opts.Out, ReservationName+"-oci"), opts.Out, created)
}

// writeImage writes img as a layout in dir, the layout as one OCI archive and each platform
// as a docker archive, in out.
func (b *built) writeImage(img image, dir, out string, created time.Time) error {
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	// docker, podman and containerd (kind) name what they load from these annotations.
	if err := p.AppendIndex(img.Index, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": img.Reference.TagStr(),
		"io.containerd.image.name":          img.Reference.String(),
	})); err != nil {
		return err
	}
	archive := filepath.Join(out, fmt.Sprintf("%s-%s.oci.tar", img.Name, img.Reference.TagStr()))
	if err := tarDirectory(dir, archive, created); err != nil {
		return err
	}
	b.Files = append(b.Files, dir, archive)
	for _, platform := range img.Platforms {
		_, goarch, _ := strings.Cut(platform, "/")
		file := filepath.Join(out, fmt.Sprintf("%s-%s-linux-%s.tar", img.Name, img.Reference.TagStr(), goarch))
		if err := tarball.WriteToFile(file, img.Reference, img.Images[goarch]); err != nil {
			return err
		}
		b.Files = append(b.Files, file)
	}
	return nil
}

// imageFor lays the binary, at entrypoint, on the layers and sets what the container runs as.
func imageFor(layers []mutate.Addendum, binary, entrypoint, goarch string, created time.Time, labels map[string]string) (v1.Image, error) {
	data, err := os.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	var files []file
	dir := ""
	for _, elem := range strings.Split(strings.Trim(path.Dir(entrypoint), "/"), "/") {
		dir += elem + "/"
		files = append(files, file{name: dir, dir: true, mode: 0o755})
	}
	files = append(files, file{name: strings.TrimPrefix(entrypoint, "/"), mode: 0o755, data: data})
	app, err := layerOf(created, files)
	if err != nil {
		return nil, err
	}
	at := v1.Time{Time: created}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.Append(img, append(layers, mutate.Addendum{Layer: app, History: v1.History{Created: at, CreatedBy: "hack/image: " + entrypoint}})...)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Created = "linux", goarch, at
	cfg.Config.Entrypoint = []string{entrypoint}
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
	// link is a symlink's target.
	link string
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
		switch {
		case f.dir:
			h.Typeflag = tar.TypeDir
		case f.link != "":
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, f.link, 0o777
		default:
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
