package main

import (
	"archive/tar"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"

	"github.com/kai-minruntime/kai-scheduler/hack/internal/debs"
)

// glibc says where a platform's C library comes from and where its binaries look for it.
type glibc struct {
	// set is hack/debs.lock's set holding the package.
	set string
	// triplet names the multiarch directories: /lib/<triplet>, /usr/lib/<triplet>.
	triplet string
	// from is the package's directory of the libraries.
	from string
	// interp is the dynamic loader's path that the platform's binaries name (PT_INTERP).
	interp string
	// copyright is the package's copyright file, which the image carries as glibc's license.
	copyright string
}

// glibcs: amd64's from libc6 itself; arm64's from libc6-arm64-cross, the same glibc laid out
// for a cross toolchain (usr/aarch64-linux-gnu/lib), which the image lays where an arm64
// Debian has it.
var glibcs = map[string]glibc{
	"amd64": {set: "glibc-amd64", triplet: "x86_64-linux-gnu", from: "lib/x86_64-linux-gnu/",
		interp: "/lib64/ld-linux-x86-64.so.2", copyright: "usr/share/doc/libc6/copyright"},
	"arm64": {set: "glibc-arm64", triplet: "aarch64-linux-gnu", from: "usr/aarch64-linux-gnu/lib/",
		interp: "/lib/ld-linux-aarch64.so.1", copyright: "usr/share/doc/libc6-arm64-cross/copyright"},
}

// glibcFiles are the reservation image's C library for goarch: a cgo binary is linked to
// glibc, and so is the libnvidia-ml.so.1 the NVIDIA container toolkit mounts at the start of
// the container (into /usr/lib/<triplet>, which is made here, and made known to the loader
// by ld.so.conf as Debian does). The libraries go in /lib/<triplet>, the loader also at
// interp. Returns the files and the package they came from.
func glibcFiles(root, goarch string) ([]file, debs.Package, error) {
	g, ok := glibcs[goarch]
	if !ok {
		return nil, debs.Package{}, fmt.Errorf("no glibc for linux/%s in hack/image", goarch)
	}
	pkgs, err := debs.Lock(root, g.set)
	if err != nil {
		return nil, debs.Package{}, err
	}
	if len(pkgs) != 1 {
		return nil, debs.Package{}, fmt.Errorf("%s: set %s pins %d packages, want glibc's one", debs.LockFile, g.set, len(pkgs))
	}
	pkg := pkgs[0]
	deb, err := debs.Fetch(pkg, filepath.Join(root, "bin", "debs"))
	if err != nil {
		return nil, pkg, err
	}
	libDir := "lib/" + g.triplet + "/"
	files := []file{
		{name: "etc/", dir: true, mode: 0o755},
		{name: "etc/ld.so.conf", mode: 0o644, data: []byte("include /etc/ld.so.conf.d/*.conf\n")},
		{name: "etc/ld.so.conf.d/", dir: true, mode: 0o755},
		{name: "etc/ld.so.conf.d/" + g.triplet + ".conf", mode: 0o644,
			data: []byte("# Multiarch support\n/usr/local/lib/" + g.triplet + "\n/lib/" + g.triplet + "\n/usr/lib/" + g.triplet + "\n")},
		{name: "lib/", dir: true, mode: 0o755},
		{name: libDir, dir: true, mode: 0o755},
	}
	var copyright []byte
	loader := ""
	err = debs.Walk(deb, func(h *tar.Header, r io.Reader) error {
		name, err := debs.Clean(h.Name)
		if err != nil {
			return err
		}
		if name == g.copyright {
			copyright, err = io.ReadAll(r)
			return err
		}
		base, ok := strings.CutPrefix(name, g.from)
		if !ok || base == "" || strings.Contains(base, "/") || h.Typeflag != tar.TypeReg {
			return nil // the libraries only: not the package's docs, gconv modules or links
		}
		data, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		files = append(files, file{name: libDir + base, mode: 0o755, data: data})
		if base == path.Base(g.interp) {
			loader = libDir + base
		}
		return nil
	})
	if err != nil {
		return nil, pkg, err
	}
	if loader == "" || copyright == nil {
		return nil, pkg, fmt.Errorf("%s holds no %s or no %s", pkg, path.Base(g.interp), g.copyright)
	}
	interp := strings.TrimPrefix(g.interp, "/")
	if interp != loader {
		if dir := path.Dir(interp); dir != "lib" {
			files = append(files, file{name: dir + "/", dir: true, mode: 0o755})
		}
		files = append(files, file{name: interp, link: debs.RelativeLink(interp, "/"+loader)})
	}
	files = append(files,
		file{name: "usr/", dir: true, mode: 0o755}, file{name: "usr/lib/", dir: true, mode: 0o755},
		file{name: "usr/lib/" + g.triplet + "/", dir: true, mode: 0o755},
		file{name: "licenses/", dir: true, mode: 0o755}, file{name: "licenses/glibc/", dir: true, mode: 0o755},
		file{name: "licenses/glibc/copyright", mode: 0o644, data: copyright})
	return files, pkg, nil
}
