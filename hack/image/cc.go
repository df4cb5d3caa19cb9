package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/kai-minruntime/kai-scheduler/hack/internal/debs"
)

// compiler is the C compiler a cgo build for one platform runs.
type compiler struct {
	// Argv is the program, then flags.
	Argv []string
	// Env is what else the compiler needs in its environment.
	Env []string
}

// crossSet is the lock's set of Debian 12's aarch64 cross toolchain: host tools for
// linux/amd64, which is where this machine's kind of CI runs.
const crossSet = "cross-arm64"

// cCompiler returns the C compiler for linux/goarch's cgo build, the first of:
//   - $CC_LINUX_<ARCH> (CC_LINUX_ARM64=aarch64-linux-gnu-gcc), a compiler the user supplies;
//   - for the host's own platform, $CC or gcc, as go build would;
//   - for linux/arm64 on a linux/amd64 host, the cross gcc hack/debs.lock pins, unpacked into
//     bin/cross (fetched and unpacked first when fetch is set; else only if already there).
//
// Otherwise, or when the compiler cannot build a program, the error says what is missing in
// one line: a platform is never built without cgo, which would ship a binary that cannot
// load NVML.
func cCompiler(root, goarch string, fetch bool) (compiler, error) {
	variable := "CC_LINUX_" + strings.ToUpper(goarch)
	if cc := os.Getenv(variable); cc != "" {
		c := compiler{Argv: strings.Fields(cc)}
		return c, c.check()
	}
	if runtime.GOOS == "linux" && goarch == runtime.GOARCH {
		cc := os.Getenv("CC")
		if cc == "" {
			cc = "gcc"
		}
		if _, err := exec.LookPath(strings.Fields(cc)[0]); err != nil {
			return compiler{}, fmt.Errorf("linux/%s kai-resource-reservation needs cgo, and there is no C compiler (%s): install gcc or set %s", goarch, cc, variable)
		}
		c := compiler{Argv: strings.Fields(cc)}
		return c, c.check()
	}
	if goarch != "arm64" || runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return compiler{}, fmt.Errorf("linux/%s kai-resource-reservation needs cgo and a C cross compiler for it: set %s", goarch, variable)
	}
	cc, err := debianCross(root, fetch)
	if err != nil {
		return compiler{}, fmt.Errorf("linux/arm64 kai-resource-reservation needs an aarch64 C cross compiler: %w (or set %s)", err, variable)
	}
	return cc, nil
}

// debianCross makes the pinned cross toolchain ready in bin/cross/aarch64-linux-gnu and
// returns its gcc. The directory is complete only with its stamp, a copy of the pins it was
// unpacked from, so a bumped pin or an interrupted unpacking unpacks it anew.
func debianCross(root string, fetch bool) (compiler, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return compiler{}, err
	}
	pkgs, err := debs.Lock(root, crossSet)
	if err != nil {
		return compiler{}, err
	}
	var stamp strings.Builder
	for _, p := range pkgs {
		fmt.Fprintf(&stamp, "%s %s\n", p, p.SHA256)
	}
	dir := filepath.Join(root, "bin", "cross", "aarch64-linux-gnu")
	if have, err := os.ReadFile(filepath.Join(dir, ".debs.lock")); err != nil || string(have) != stamp.String() {
		if !fetch {
			return compiler{}, errors.New("bin/cross holds none (make image fetches Debian 12's)")
		}
		if err := unpackCross(root, dir, pkgs, stamp.String()); err != nil {
			return compiler{}, err
		}
	}
	// gcc finds cc1, as and ld relative to its own path; the sysroot gives it the arm64
	// headers and libraries (usr/aarch64-linux-gnu, as the cross packages lay them); the
	// cross binutils load their own libbfd and libopcodes from the unpacked tree.
	cc := compiler{
		Argv: []string{filepath.Join(dir, "usr", "bin", "aarch64-linux-gnu-gcc-12"), "--sysroot=" + dir},
		Env: []string{"LD_LIBRARY_PATH=" + strings.TrimSuffix(filepath.Join(dir, "usr", "lib", "x86_64-linux-gnu")+
			":"+os.Getenv("LD_LIBRARY_PATH"), ":")},
	}
	return cc, cc.check()
}

// unpackCross fetches the toolchain's packages and unpacks them beside dir, then moves the
// whole into place: a concurrent build sees either none or all of it.
func unpackCross(root, dir string, pkgs []debs.Package, stamp string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".unpacking-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }() // renamed away on success
	for _, p := range pkgs {
		deb, err := debs.Fetch(p, filepath.Join(root, "bin", "debs"))
		if err != nil {
			return err
		}
		if err := debs.Extract(deb, tmp); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, ".debs.lock"), []byte(stamp), 0o644); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}

// check compiles and links a program that loads a library as go-nvml does, so that a
// toolchain missing a piece (a host library the cross gcc needs, say) fails here, in one
// line, rather than deep in go build's output.
func (c compiler) check() error {
	dir, err := os.MkdirTemp("", "kai-cc-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }() // a temporary directory
	src := filepath.Join(dir, "probe.c")
	prog := "#include <dlfcn.h>\nint main(void) { return dlopen(\"libnvidia-ml.so.1\", RTLD_LAZY) == 0; }\n"
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		return err
	}
	args := append(slices.Clone(c.Argv), src, "-o", filepath.Join(dir, "probe"), "-ldl")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), c.Env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		lines := strings.Split(strings.TrimSpace(string(bytes.TrimSpace(out))), "\n")
		return fmt.Errorf("%s cannot build a program: %w: %s", args[0], err, lines[len(lines)-1])
	}
	return nil
}

// CC is the value go build takes in $CC: the words, quoted where one has a space.
func (c compiler) CC() string {
	words := make([]string, len(c.Argv))
	for i, w := range c.Argv {
		if strings.ContainsAny(w, " \t") {
			w = "'" + w + "'"
		}
		words[i] = w
	}
	return strings.Join(words, " ")
}
