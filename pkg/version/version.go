package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version and Commit are set at build time by release builds (make image, the release
// workflow):
//
//	go build -ldflags "-X github.com/kai-minruntime/kai-scheduler/pkg/version.Version=0.1.0 \
//	    -X github.com/kai-minruntime/kai-scheduler/pkg/version.Commit=$(git rev-parse HEAD)"
//
// Left empty, they are read from the binary's build information: `go install ...@v0.1.0`
// records the module's version, a build in a Git checkout the revision.
var (
	Version string
	Commit  string
)

// Info is what a binary says it is.
type Info struct {
	// Version is the release ("0.1.0"), or "devel" for a build from a working tree.
	Version string
	// Commit is the Git revision built from, with "-dirty" when the tree had changes; empty
	// when unknown.
	Commit string
	// GoVersion is the Go that built the binary.
	GoVersion string
	// Platform is the binary's GOOS/GOARCH.
	Platform string
}

// Get returns this binary's version information.
func Get() Info {
	info := Info{Version: Version, Commit: Commit, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	build, ok := debug.ReadBuildInfo()
	if !ok {
		return withDefaults(info)
	}
	if info.Version == "" && build.Main.Version != "" && build.Main.Version != "(devel)" {
		info.Version = build.Main.Version
	}
	if info.Commit == "" {
		info.Commit = commitOf(build.Settings)
	}
	return withDefaults(info)
}

// commitOf reads the VCS revision Go stamped into the build, marking a modified tree.
func commitOf(settings []debug.BuildSetting) string {
	var revision string
	var modified bool
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if revision != "" && modified {
		revision += "-dirty"
	}
	return revision
}

func withDefaults(info Info) Info {
	if info.Version == "" {
		info.Version = "devel"
	}
	return info
}

// String is the line --version prints: "kai-scheduler 0.1.0 (commit 1a2b3c4, go1.26.8 linux/amd64)".
func (i Info) String() string {
	commit := i.Commit
	if commit == "" {
		commit = "unknown"
	}
	return fmt.Sprintf("%s (commit %s, %s %s)", i.Version, commit, i.GoVersion, i.Platform)
}

// Line is what the named command prints for --version.
func Line(command string) string {
	return command + " " + Get().String()
}
