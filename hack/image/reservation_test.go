package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// checkReservation checks one platform's reservation image: its config, and that what the
// binary needs to start is in the image: its dynamic loader (PT_INTERP) and every library it
// names (DT_NEEDED), for that platform. On the host's platform it runs the binary from the
// image's unpacked filesystem with the image's own loader and libraries: without a GPU it must
// get as far as loading NVML and say that libnvidia-ml.so.1 is missing, which proves the
// image's glibc runs it and that it was built with cgo.
func checkReservation(t *testing.T, img v1.Image, arch, version, commit string) {
	t.Helper()
	checkConfig(t, img, "reservation", arch, ReservationEntrypoint, map[string]string{
		"org.opencontainers.image.title":    "kai-resource-reservation",
		"org.opencontainers.image.source":   "https://github.com/kai-minruntime/kai-scheduler",
		"org.opencontainers.image.version":  version,
		"org.opencontainers.image.revision": commit,
		"org.opencontainers.image.licenses": "Apache-2.0 AND LGPL-2.1-or-later",
	})

	fs := filesystem(t, img)
	bin, ok := fs.resolve(ReservationEntrypoint)
	if !ok || bin.header.Mode&0o111 == 0 {
		t.Fatalf("reservation %s: no executable %s", arch, ReservationEntrypoint)
	}
	e, err := elf.NewFile(bytes.NewReader(bin.data))
	if err != nil {
		t.Fatalf("reservation %s: %s is not an ELF binary: %v", arch, ReservationEntrypoint, err)
	}
	if want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]; e.Machine != want {
		t.Errorf("reservation %s image holds a %s binary", arch, e.Machine)
	}
	interp := ""
	for _, prog := range e.Progs {
		if prog.Type == elf.PT_INTERP {
			data, _ := io.ReadAll(prog.Open())
			interp = string(bytes.TrimRight(data, "\x00"))
		}
	}
	if interp == "" {
		t.Errorf("reservation %s: the binary is static: built without cgo, it cannot load NVML", arch)
	} else if loader, ok := fs.resolve(interp); !ok || loader.header.Typeflag != tar.TypeReg {
		t.Errorf("reservation %s: the binary's loader %s is not in the image", arch, interp)
	}
	needed, err := e.ImportedLibraries()
	if err != nil || len(needed) == 0 {
		t.Errorf("reservation %s: the binary needs no library (%v): not a cgo build?", arch, err)
	}
	triplet := glibcs[arch].triplet
	for _, lib := range needed {
		found := false
		for _, dir := range []string{"/lib/" + triplet, "/usr/lib/" + triplet, "/lib", "/usr/lib"} {
			if _, ok := fs.resolve(dir + "/" + lib); ok {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("reservation %s: the binary needs %s, which is not in the image", arch, lib)
		}
	}
	for _, want := range []string{"/usr/lib/" + triplet + "/", "/etc/ld.so.conf", "/licenses/glibc/copyright", "/licenses/kai-scheduler/LICENSE"} {
		if _, ok := fs[strings.Trim(want, "/")]; !ok {
			t.Errorf("reservation %s: no %s in the image", arch, want)
		}
	}
	if passwd, _ := fs.resolve("/etc/passwd"); !strings.Contains(string(passwd.data), "nonroot:x:65532:65532:") {
		t.Errorf("reservation %s: /etc/passwd has no nonroot user 65532", arch)
	}
	if tmp := fs["tmp"]; tmp.header == nil || tmp.header.Mode&0o1777 != 0o1777 {
		t.Errorf("reservation %s: no /tmp of mode 1777", arch)
	}

	if runtime.GOOS != "linux" || runtime.GOARCH != arch || interp == "" {
		return
	}
	for _, dir := range []string{"/lib/" + triplet, "/usr/lib/" + triplet, "/usr/lib64", "/usr/lib"} {
		if _, err := os.Stat(dir + "/libnvidia-ml.so.1"); err == nil {
			t.Logf("reservation %s: not run: this host has %s/libnvidia-ml.so.1, which the image's loader would find", arch, dir)
			return
		}
	}
	dir := t.TempDir()
	fs.unpack(t, dir)
	cmd := exec.Command(filepath.Join(dir, interp), "--library-path", filepath.Join(dir, "lib", triplet), filepath.Join(dir, ReservationEntrypoint))
	cmd.Env = []string{"POD_NAME=reservation-test", "POD_NAMESPACE=kai-resource-reservation"}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "libnvidia-ml.so.1 could not be loaded") {
		t.Errorf("reservation %s, run on the image's glibc without a GPU: %v, printed %q; want exit 1 and NVML's missing libnvidia-ml.so.1", arch, err, out)
	}
}

// tree is an image's flattened filesystem, by path without the leading slash.
type tree map[string]entry

// filesystem reads the image's flattened filesystem once.
func filesystem(t *testing.T, img v1.Image) tree {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	r := tar.NewReader(bufio.NewReader(rc))
	fs := tree{}
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			return fs
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		fs[strings.Trim(h.Name, "/")] = entry{header: h, data: data}
	}
}

// resolve finds name, following symlinks (relative ones from the link's directory, absolute
// ones from the image's root, never the host's), as the container would.
func (fs tree) resolve(name string) (entry, bool) {
	name = path.Clean("/" + name)
	for range 16 {
		// The directories on the way may be links too.
		parts := strings.Split(strings.TrimPrefix(name, "/"), "/")
		resolved := ""
		for i, part := range parts {
			p := strings.TrimPrefix(resolved+"/"+part, "/")
			e, ok := fs[p]
			if !ok {
				return entry{}, false
			}
			if e.header.Typeflag == tar.TypeSymlink {
				target := e.header.Linkname
				if !path.IsAbs(target) {
					target = path.Join("/"+path.Dir(p), target)
				}
				name = path.Clean(target + "/" + strings.Join(parts[i+1:], "/"))
				resolved = "\x00" // start over from the link's target
				break
			}
			resolved = p
		}
		if resolved != "\x00" {
			return fs[resolved], true
		}
	}
	return entry{}, false
}

// unpack writes the filesystem under dir: directories, files with their modes, symlinks.
func (fs tree) unpack(t *testing.T, dir string) {
	t.Helper()
	names := make([]string, 0, len(fs))
	for name := range fs {
		names = append(names, name)
	}
	slices.Sort(names) // a directory before what it holds
	for _, name := range names {
		e, target := fs[name], filepath.Join(dir, filepath.FromSlash(name))
		var err error
		switch e.header.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(target, 0o755)
		case tar.TypeSymlink:
			err = os.Symlink(e.header.Linkname, target)
		case tar.TypeReg:
			err = os.WriteFile(target, e.data, os.FileMode(e.header.Mode).Perm())
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Without a cross compiler (a fresh checkout that has not fetched one, and no CC_LINUX_ARM64),
// the arm64 reservation build is refused in one line that names what is missing, never built
// without cgo.
func TestArm64WithoutACrossCompilerSaysWhatIsMissing(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the fetched cross compiler is for linux/amd64 hosts")
	}
	root := t.TempDir()
	lock, err := os.ReadFile("../debs.lock")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "hack"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "hack", "debs.lock"), lock, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CC_LINUX_ARM64", "")
	_, err = cCompiler(root, "arm64", false)
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "CC_LINUX_ARM64") || !strings.Contains(err.Error(), "bin/cross") {
		t.Errorf("got %v, want one line naming bin/cross and CC_LINUX_ARM64", err)
	}
}
