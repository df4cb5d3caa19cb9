// Package debs fetches the Debian packages hack/debs.lock pins and reads them without dpkg:
// the .deb is an ar archive whose data.tar.xz holds the files. Each download is checked
// against its pinned SHA-256 and cached, so a warm build fetches nothing.
package debs

import (
	"bufio"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
)

// LockFile is the pins' file, relative to the repository's root.
const LockFile = "hack/debs.lock"

// Package is one pinned .deb.
type Package struct {
	// Sets name what the package is fetched for (a lock line lists them comma-separated).
	Sets []string
	// Name and Version are Debian's; SHA256 is the .deb's, hex.
	Name, Version, SHA256 string
	// Path is the .deb's path on the mirror (apt-cache show's Filename).
	Path string
}

// File is the .deb's file name.
func (p Package) File() string { return path.Base(p.Path) }

// String names the package as apt does.
func (p Package) String() string { return p.Name + "=" + p.Version }

// Lock reads root's lock file and returns the packages of set, in the file's order.
func Lock(root, set string) ([]Package, error) {
	file := root + "/" + LockFile
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only
	var pkgs []Package
	scanner := bufio.NewScanner(f)
	for n := 1; scanner.Scan(); n++ {
		line := strings.TrimSpace(scanner.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 5 || len(fields[3]) != 64 {
			return nil, fmt.Errorf("%s:%d: want: sets package version sha256 path", file, n)
		}
		p := Package{Sets: strings.Split(fields[0], ","), Name: fields[1], Version: fields[2], SHA256: fields[3], Path: fields[4]}
		// The file name repeats name and version (without an epoch): a copy-paste slip
		// between lines would pin one package's hash to another's name.
		if _, version, _ := strings.Cut(p.Version, ":"); !strings.HasPrefix(p.File(), p.Name+"_"+orAll(version, p.Version)+"_") {
			return nil, fmt.Errorf("%s:%d: %s is not %s's file", file, n, p.Path, p)
		}
		if slices.Contains(p.Sets, set) {
			pkgs = append(pkgs, p)
		}
	}
	if err := scanner.Err(); err != nil {
		return nil, err
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("%s pins no package for %s", file, set)
	}
	return pkgs, nil
}

// orAll is s, or all when s is empty (a version without an epoch).
func orAll(s, all string) string {
	if s == "" {
		return all
	}
	return s
}
