package debs

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// ErrSuperseded is why a pinned package is gone from the mirror: Debian replaced it with a
// newer version (the mirror keeps only the current ones), and its pin must be bumped.
var ErrSuperseded = errors.New("superseded by Debian")

// Mirror is where packages are fetched from: Debian's CDN, which serves every current
// package of the archive by its pool path.
const Mirror = "https://deb.debian.org/debian/"

// Fetch returns the path of p's .deb under cache, downloading it only when the cache does not
// hold it already, and checking its SHA-256 either way (a truncated or altered file is
// fetched again, never used).
func Fetch(p Package, cache string) (string, error) {
	file := filepath.Join(cache, p.File())
	if sum, err := sha256File(file); err == nil && sum == p.SHA256 {
		return file, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	client := &http.Client{Timeout: 10 * time.Minute}
	resp, err := client.Get(Mirror + p.Path)
	if err != nil {
		return "", fmt.Errorf("fetching %s: %w", p, err)
	}
	defer func() { _ = resp.Body.Close() }() // read to the end below
	if resp.StatusCode == http.StatusNotFound {
		return "", fmt.Errorf("%s%s: not found: %w %s; pin the current version in %s (apt-cache show %s)",
			Mirror, p.Path, ErrSuperseded, p, LockFile, p.Name)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("fetching %s%s: %s", Mirror, p.Path, resp.Status)
	}
	// A temporary file renamed into place: a concurrent build never reads half a file.
	tmp, err := os.CreateTemp(cache, p.File()+".*")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // gone after the rename; else a leftover
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(tmp, h), resp.Body)
	if closeErr := tmp.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return "", fmt.Errorf("fetching %s: %w", p, err)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != p.SHA256 {
		return "", fmt.Errorf("%s%s has SHA-256 %s, but %s pins %s", Mirror, p.Path, sum, LockFile, p.SHA256)
	}
	return file, os.Rename(tmp.Name(), file)
}

func sha256File(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }() // read only
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
