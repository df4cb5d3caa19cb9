// Command image builds the release's two container images from Go modules only: no Docker
// daemon, and no base image pulled from a registry. The scheduler is built as a static binary
// for each platform and laid on a minimal base of our own (a non-root user 65532, /tmp, the
// license), into one multi-platform index. The reservation pods' program
// (cmd/kai-resource-reservation) needs cgo for NVML: it is built with a C compiler for each
// platform (see cCompiler; Debian 12's aarch64 cross gcc, fetched, for arm64) and laid on the
// same base and Debian 12's glibc, pinned in hack/debs.lock, into a second index:
//
//	go run ./hack/image                 # make image: _output/image/
//	VERSION=0.2.0 go run ./hack/image   # a release's version (default: git describe's, see release.Version)
//
// It writes, under -out:
//   - oci/: an OCI image layout holding the index (crane push _output/image/oci REF);
//   - kai-scheduler-VERSION.oci.tar: the same as one archive (docker load (25+), podman load);
//   - kai-scheduler-VERSION-linux-ARCH.tar: each platform's image as a docker-style archive,
//     which every docker load, podman load, kind load image-archive and crane push FILE take;
//   - kai-resource-reservation-oci/, kai-resource-reservation-VERSION.oci.tar and
//     kai-resource-reservation-VERSION-linux-ARCH.tar: the same of the reservation image.
//
// The Debian packages are cached in bin/debs and the cross toolchain unpacked in bin/cross, so
// a warm build fetches nothing.
//
// The build is reproducible: the files' times and the image's creation time are the
// commit's, so the same commit gives the same digests.
package main

import (
	"flag"
	"fmt"
	"os"
	"path"
	"strings"
)

func main() {
	opts := defaultOptions()
	platforms := flag.String("platforms", strings.Join(opts.Platforms, ","), "comma-separated GOOS/GOARCH to build")
	flag.StringVar(&opts.Out, "out", "_output/image", "directory to write the image into (replaced)")
	flag.StringVar(&opts.Repository, "repository", opts.Repository, "image repository the archives name")
	reservationPlatforms := flag.String("reservation-platforms", "", "comma-separated GOOS/GOARCH of the reservation image (default: -platforms; \"none\": no reservation image)")
	flag.StringVar(&opts.ReservationRepository, "reservation-repository", "", "the reservation image's repository (default: -repository's, named kai-resource-reservation)")
	flag.StringVar(&opts.Version, "version", os.Getenv("VERSION"), "version to build, tag and label (default $VERSION, else git describe's: X.Y.Z only on the commit tagged vX.Y.Z)")
	flag.Parse()
	opts.Platforms = strings.Split(*platforms, ",")
	switch *reservationPlatforms {
	case "":
		opts.ReservationPlatforms = opts.Platforms
	case "none":
		opts.ReservationPlatforms = nil
	default:
		opts.ReservationPlatforms = strings.Split(*reservationPlatforms, ",")
	}
	if opts.ReservationRepository == "" {
		// Beside the scheduler's, as the chart's default names them: a release pushes both.
		opts.ReservationRepository = path.Join(path.Dir(opts.Repository), ReservationName)
	}
	built, err := build(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	for _, img := range []image{built.Scheduler, built.Reservation} {
		if img.Index != nil {
			fmt.Printf("%s:%s (%s, commit %s)\n  index %s\n", img.Reference.Context(), img.Reference.TagStr(), strings.Join(img.Platforms, ", "), built.Commit, img.Digest)
		}
	}
	for _, f := range built.Files {
		fmt.Println(" ", f)
	}
}
