package debs

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// The repository's lock parses, and pins every set hack/image asks for.
func TestTheLockPinsEverySet(t *testing.T) {
	for _, set := range []string{"glibc-amd64", "glibc-arm64", "cross-arm64"} {
		if pkgs, err := Lock("../../..", set); err != nil || len(pkgs) == 0 {
			t.Errorf("%s: %v, %v", set, pkgs, err)
		}
	}
}

// A line whose file is not its package's is refused: a hash pasted onto the wrong name.
func TestLockRefusesAMismatchedLine(t *testing.T) {
	root := t.TempDir()
	line := "s  libc6  2.36-9  " + fmt.Sprintf("%064d", 0) + "  pool/main/g/glibc/libc6-dev_2.36-9_amd64.deb\n"
	if err := os.MkdirAll(filepath.Join(root, "hack"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, LockFile), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(root, "s"); err == nil {
		t.Error("no error")
	}
}

// A .deb is read as dpkg lays it out: the ar members before data.tar (one of odd length,
// padded) skipped, the data's entries walked, absolute links made relative on extraction.
func TestExtract(t *testing.T) {
	var data bytes.Buffer
	gz := gzip.NewWriter(&data)
	tw := tar.NewWriter(gz)
	for _, h := range []*tar.Header{
		{Name: "./lib/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "./lib/x86_64-linux-gnu/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "./lib/x86_64-linux-gnu/libc.so.6", Typeflag: tar.TypeReg, Mode: 0o755, Size: 4},
		{Name: "./lib64/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "./lib64/ld.so", Typeflag: tar.TypeSymlink, Linkname: "/lib/x86_64-linux-gnu/libc.so.6"},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			_, _ = tw.Write([]byte("ELF!"))
		}
	}
	_ = tw.Close()
	_ = gz.Close()
	var deb bytes.Buffer
	deb.WriteString("!<arch>\n")
	member := func(name string, body []byte) {
		fmt.Fprintf(&deb, "%-16s%-12d%-6d%-6d%-8s%-10d`\n", name, 0, 0, 0, "100644", len(body))
		deb.Write(body)
		if len(body)%2 == 1 {
			deb.WriteByte('\n')
		}
	}
	member("debian-binary", []byte("2.0\n"))
	member("control.tar.gz", []byte("odd"))
	member("data.tar.gz", data.Bytes())
	file := filepath.Join(t.TempDir(), "x.deb")
	if err := os.WriteFile(file, deb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := Extract(file, dir); err != nil {
		t.Fatal(err)
	}
	if link, err := os.Readlink(filepath.Join(dir, "lib64", "ld.so")); err != nil || link != "../lib/x86_64-linux-gnu/libc.so.6" {
		t.Errorf("lib64/ld.so -> %q (%v)", link, err)
	}
	f, err := os.Open(filepath.Join(dir, "lib64", "ld.so"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, _ := io.ReadAll(f); string(got) != "ELF!" {
		t.Errorf("read through the link: %q", got)
	}
}

func TestCleanRefusesLeavingTheRoot(t *testing.T) {
	if _, err := Clean("./usr/../../etc/passwd"); err == nil {
		t.Error("no error")
	}
	if got, err := Clean("./usr/bin/"); err != nil || got != "usr/bin" {
		t.Errorf("got %q, %v", got, err)
	}
}
