// Command image builds kai-scheduler's container image from Go modules only: no Docker
// daemon, and no base image pulled from a registry. The scheduler is built as a static binary
// for each platform and laid on a minimal base of our own (a non-root user 65532, /tmp, the
// license), into one multi-platform index:
//
//	go run ./hack/image                 # make image: _output/image/
//	VERSION=0.2.0 go run ./hack/image   # a release's version (default: git describe's, see release.Version)
//
// It writes, under -out:
//   - oci/: an OCI image layout holding the index (crane push _output/image/oci REF);
//   - kai-scheduler-VERSION.oci.tar: the same as one archive (docker load (25+), podman load);
//   - kai-scheduler-VERSION-linux-ARCH.tar: each platform's image as a docker-style archive,
//     which every docker load, podman load, kind load image-archive and crane push FILE take.
//
// The build is reproducible: the files' times and the image's creation time are the
// commit's, so the same commit gives the same digests.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	opts := defaultOptions()
	platforms := flag.String("platforms", strings.Join(opts.Platforms, ","), "comma-separated GOOS/GOARCH to build")
	flag.StringVar(&opts.Out, "out", "_output/image", "directory to write the image into (replaced)")
	flag.StringVar(&opts.Repository, "repository", opts.Repository, "image repository the archives name")
	flag.StringVar(&opts.Version, "version", os.Getenv("VERSION"), "version to build, tag and label (default $VERSION, else git describe's: X.Y.Z only on the commit tagged vX.Y.Z)")
	flag.Parse()
	opts.Platforms = strings.Split(*platforms, ",")
	built, err := build(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	fmt.Printf("%s:%s (%s, commit %s)\n  index %s\n", built.Reference.Context(), built.Reference.TagStr(), strings.Join(opts.Platforms, ", "), built.Commit, built.Digest)
	for _, f := range built.Files {
		fmt.Println(" ", f)
	}
}
