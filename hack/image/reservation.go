package main

import (
	"fmt"
	"os"
	"os/exec"

	"github.com/kai-minruntime/kai-scheduler/hack/internal/release"
)

// What the reservation image holds: the program the scheduler's reservation pods run (they
// give the container no command, only POD_NAME and POD_NAMESPACE), on glibc.
const (
	ReservationName       = "kai-resource-reservation"
	ReservationEntrypoint = "/usr/local/bin/" + ReservationName
	// ReservationLicenses adds glibc's (the image's C library) to the project's.
	ReservationLicenses = License + " AND LGPL-2.1-or-later"
)

// buildCgo compiles ./cmd/NAME of root for linux/goarch with cgo and cc, as release.Build
// does the static binaries otherwise: no local paths or build ID, so that the same commit
// and toolchain give the same bytes, and the version stamped. go-nvml needs cgo: it loads
// libnvidia-ml.so.1 with dlopen, so the binary is linked to glibc.
func buildCgo(root, command, goarch, version, commit, out string, cc compiler) error {
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -buildid= "+release.Stamp(version, commit),
		"-o", out, "./cmd/"+command)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1", "GOOS=linux", "GOARCH="+goarch, "CC="+cc.CC())
	cmd.Env = append(cmd.Env, cc.Env...)
	// go-nvml's thousands of cgo wrappers warn (deprecated NVML calls): the output only
	// matters when the build fails.
	if output, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s for linux/%s with cgo (CC=%s): %w\n%s", command, goarch, cc.CC(), err, output)
	}
	return nil
}
