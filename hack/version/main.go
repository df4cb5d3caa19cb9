// Command version prints the linker flags that stamp a build of this checkout with its
// version (release.Version: a release's number only on the commit its tag names; $VERSION
// names another) and commit, for make build to stamp the binaries as make image and make
// dist do. -version prints the version alone.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/kai-minruntime/kai-scheduler/hack/internal/release"
)

func main() {
	versionOnly := flag.Bool("version", false, "print the version alone")
	flag.Parse()
	version := os.Getenv("VERSION")
	if version == "" {
		v, err := release.Version(".")
		if err != nil {
			fmt.Fprintln(os.Stderr, "version:", err)
			os.Exit(1)
		}
		version = v
	}
	if *versionOnly {
		fmt.Println(version)
		return
	}
	commit, _ := release.Commit(".")
	fmt.Println(release.Stamp(version, commit))
}
