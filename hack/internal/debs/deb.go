package debs

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/ulikunitz/xz"
)

// Walk calls fn with each entry of the .deb's data archive (the files it installs), named as
// in the archive ("./usr/bin/x", directories ending in "/"). r reads a regular file's content.
func Walk(deb string, fn func(h *tar.Header, r io.Reader) error) error {
	f, err := os.Open(deb)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }() // read only
	data, member, err := dataMember(bufio.NewReader(f))
	if err != nil {
		return fmt.Errorf("%s: %w", deb, err)
	}
	var r io.Reader
	switch {
	case strings.HasSuffix(member, ".xz"): // what Debian 12 builds every package with
		if r, err = xz.NewReader(data); err != nil {
			return fmt.Errorf("%s: %s: %w", deb, member, err)
		}
	case strings.HasSuffix(member, ".gz"):
		gz, err := gzip.NewReader(data)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", deb, member, err)
		}
		r = gz
	case member == "data.tar":
		r = data
	default:
		return fmt.Errorf("%s: %s: compression not supported (Debian 12 uses xz)", deb, member)
	}
	t := tar.NewReader(r)
	for {
		h, err := t.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %s: %w", deb, member, err)
		}
		if err := fn(h, t); err != nil {
			return err
		}
	}
}

// dataMember finds the data.tar.* member of the ar archive a .deb is (deb(5)): an 8-byte
// magic, then members, each a 60-byte header (name 16, mtime 12, uid 6, gid 6, mode 8,
// size 10, "`\n") and its data, padded to an even length.
func dataMember(r *bufio.Reader) (io.Reader, string, error) {
	magic := make([]byte, 8)
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != "!<arch>\n" {
		return nil, "", errors.New("not a .deb (no ar archive)")
	}
	header := make([]byte, 60)
	for {
		if _, err := io.ReadFull(r, header); err != nil {
			return nil, "", errors.New("no data.tar member")
		}
		if !bytes.Equal(header[58:60], []byte("`\n")) {
			return nil, "", errors.New("corrupt ar member header")
		}
		name := strings.TrimSuffix(strings.TrimSpace(string(header[:16])), "/")
		size, err := strconv.ParseInt(strings.TrimSpace(string(header[48:58])), 10, 64)
		if err != nil || size < 0 {
			return nil, "", fmt.Errorf("member %s: bad size", name)
		}
		if strings.HasPrefix(name, "data.tar") {
			return io.LimitReader(r, size), name, nil
		}
		if _, err := r.Discard(int(size + size%2)); err != nil {
			return nil, "", fmt.Errorf("member %s: %w", name, err)
		}
	}
}
