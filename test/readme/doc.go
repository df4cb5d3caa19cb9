// Package readme guards the README's promise that every command in it works on a fresh clone
// as written: its test reads the shell blocks and checks that each make target, go run and
// go install path, bin/ tool and repository file they name exists, and that whatever needs a
// published release (a registry chart, a go install @version) says so beside it.
package readme
