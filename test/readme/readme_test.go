package readme

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const root = "../.."

// releaseOnly marks a shell block, as its first line, whose commands work only once a
// release is published; prose that names such a command says the same words.
const releaseOnly = "needs a published release"

// published matches what exists only after a release: a version of a Go module or a chart
// in a registry.
var published = regexp.MustCompile(`@v[0-9]|oci://`)

// Every command of the README's shell blocks names things a clone has: make targets of the
// Makefile, commands under ./, tools that make tools or make build leave in bin/, files of
// the repository. "make build" that left no binaries, or a README line installing a version
// nobody published, fails here.
func TestEveryReadmeCommandWorksFromAClone(t *testing.T) {
	readme := read(t, "README.md")
	makefile := read(t, "Makefile")
	tools := read(t, "hack/install-tools.sh")
	blocks := shellBlocks(readme)
	if len(blocks) < 5 {
		t.Fatalf("found %d shell blocks in README.md; the parser no longer sees them", len(blocks))
	}
	for _, block := range blocks {
		if strings.Contains(block[0], releaseOnly) {
			continue
		}
		for _, line := range block {
			command := strings.TrimSpace(strings.SplitN(line, " #", 2)[0])
			if strings.HasPrefix(command, "#") || command == "" {
				continue
			}
			if published.MatchString(command) {
				t.Errorf("README: %q needs a published release; put it in a block whose first line is %q", command, "# "+releaseOnly)
			}
			checkCommand(t, command, makefile, tools)
		}
	}
	for _, paragraph := range strings.Split(readme, "\n\n") {
		if strings.HasPrefix(paragraph, "```") || strings.Contains(paragraph, "\n```") {
			continue
		}
		if published.MatchString(paragraph) && !strings.Contains(strings.Join(strings.Fields(paragraph), " "), releaseOnly) {
			t.Errorf("README: a paragraph names a published release without saying it %s:\n%s", releaseOnly, paragraph)
		}
	}
}

// checkCommand checks what one command line names.
func checkCommand(t *testing.T, command, makefile, tools string) {
	t.Helper()
	words := strings.Fields(command)
	for i, word := range words {
		word = strings.Trim(word, `"'`)
		switch {
		case word == "make" && (i == 0 || strings.Contains(words[i-1], "=")):
			for _, target := range words[i+1:] {
				if strings.Contains(target, "=") || strings.HasPrefix(target, "-") {
					continue
				}
				if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(target) + `:`).MatchString(makefile) {
					t.Errorf("README: %q: the Makefile has no target %q", command, target)
				}
			}
			return
		case (word == "run" || word == "install") && i > 0 && words[i-1] == "go":
			for _, arg := range words[i+1:] {
				if strings.HasPrefix(arg, "./") {
					if !hasMain(filepath.Join(root, arg)) {
						t.Errorf("README: %q: %s is not a command of this repository", command, arg)
					}
					break
				}
			}
		case strings.HasPrefix(word, "bin/"):
			name := strings.TrimPrefix(word, "bin/")
			built := strings.Contains(tools, "install_tool "+name+" ") || strings.Contains(tools, `bin/`+name+`"`) ||
				(hasMain(filepath.Join(root, "cmd", name)) && strings.Contains(makefile, "-o $(BIN)/ ./cmd/..."))
			if !built {
				t.Errorf("README: %q: neither make tools nor make build leaves %s", command, word)
			}
		case regexp.MustCompile(`^(docs|deployments|hack|test|pkg|cmd)/`).MatchString(word):
			if _, err := os.Stat(filepath.Join(root, strings.TrimSuffix(word, "/"))); err != nil {
				t.Errorf("README: %q names %s, which the repository does not have", command, word)
			}
		}
	}
}

// shellBlocks returns the lines of each ```sh block, continuation lines joined.
func shellBlocks(markdown string) [][]string {
	var blocks [][]string
	var current []string
	inside := false
	scanner := bufio.NewScanner(strings.NewReader(markdown))
	pending := ""
	for scanner.Scan() {
		line := scanner.Text()
		switch {
		case !inside && strings.HasPrefix(line, "```sh"):
			inside, current = true, nil
		case inside && strings.HasPrefix(line, "```"):
			inside = false
			blocks = append(blocks, current)
		case inside && strings.HasSuffix(line, `\`):
			pending += strings.TrimSuffix(line, `\`) + " "
		case inside:
			current = append(current, pending+line)
			pending = ""
		}
	}
	return blocks
}

// hasMain reports whether dir holds a main package.
func hasMain(dir string) bool {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err == nil && regexp.MustCompile(`(?m)^package main$`).Match(data) {
			return true
		}
	}
	return false
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// make test shows that it is working: gotestsum prints a line as each test ends, where go test
// alone prints a package's lines only when the whole package is done (minutes of silence).
func TestMakeTestPrintsEachTest(t *testing.T) {
	makefile := read(t, "Makefile")
	recipe := regexp.MustCompile(`(?ms)^test:[^\n]*\n((?:\t[^\n]*\n)+)`).FindStringSubmatch(makefile)
	if recipe == nil {
		t.Fatal("the Makefile has no test target")
	}
	if !strings.Contains(recipe[1], "$(BIN)/gotestsum --format testname") {
		t.Errorf("make test does not run the tests through gotestsum's testname format:\n%s", recipe[1])
	}
	if !strings.Contains(read(t, "hack/install-tools.sh"), "gotest.tools/gotestsum@") {
		t.Error("make tools does not build gotestsum")
	}
}
