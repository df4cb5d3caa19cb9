// Package version owns what a binary says it is: its release version, the commit it was
// built from and the Go that built it, as every command prints them for --version. Release
// builds set Version (and, without a Git checkout, Commit) with -ldflags -X; otherwise both
// come from the build information Go records in the binary.
package version
