// Package release owns what every release artifact is built from: the version (`git
// describe`'s, so that only a tagged commit carries a release's number, unless a release
// names another), the commit and its time (which stands for every file's and the image's
// creation time, so that a commit always builds the same bytes), and the static,
// reproducible go build that stamps them into a binary.
package release
