package debs

import (
	"archive/tar"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Clean is an entry's path relative to the package's root ("usr/bin/x"), "" for the root
// itself; an error for a path that would leave it.
func Clean(name string) (string, error) {
	if slices.Contains(strings.Split(name, "/"), "..") {
		return "", fmt.Errorf("entry %q leaves the package's root", name)
	}
	return strings.TrimPrefix(path.Clean("/"+name), "/"), nil
}

// RelativeLink rewrites a symlink's absolute target (as Debian ships some: /lib64/ld-linux-
// x86-64.so.2 -> /lib/x86_64-linux-gnu/...) relative to the link, so that it stays inside
// a tree unpacked anywhere rather than reaching into the host's /. name is the link's clean
// path; a relative target is kept.
func RelativeLink(name, target string) string {
	if !path.IsAbs(target) {
		return target
	}
	rel, err := filepath.Rel(path.Dir("/"+name), path.Clean(target))
	if err != nil {
		return target
	}
	return filepath.ToSlash(rel)
}

// Extract unpacks the .deb's files into dir, as dpkg would under a root of dir: directories,
// regular files with their modes, symlinks (absolute ones made relative, see RelativeLink)
// and hard links.
func Extract(deb, dir string) error {
	return Walk(deb, func(h *tar.Header, r io.Reader) error {
		name, err := Clean(h.Name)
		if err != nil || name == "" {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			return os.MkdirAll(target, 0o755)
		case tar.TypeReg:
			f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode).Perm()|0o200)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, r)
			if closeErr := f.Close(); err == nil {
				err = closeErr
			}
			return err
		case tar.TypeSymlink:
			_ = os.Remove(target) // packages may overlap (a directory's link in two packages)
			return os.Symlink(RelativeLink(name, h.Linkname), target)
		case tar.TypeLink:
			old, err := Clean(h.Linkname)
			if err != nil {
				return err
			}
			_ = os.Remove(target)
			return os.Link(filepath.Join(dir, filepath.FromSlash(old)), target)
		default:
			return fmt.Errorf("%s: %s: unsupported entry type %q", deb, h.Name, h.Typeflag)
		}
	})
}
