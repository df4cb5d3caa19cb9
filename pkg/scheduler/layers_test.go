package scheduler_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The scheduler's layers point down: the framework (sessions and the plugin API), the store
// that converts the cluster's objects (store) and the status updater each build on the model
// (model), the API's wire formats and metrics, never on one another, so that each can be read,
// tested and changed alone. The assembly (scheduler.New) is the one place that joins them.
func TestLayersPointDown(t *testing.T) {
	const module = "github.com/kai-minruntime/kai-scheduler/pkg/scheduler/"
	layers := []string{"store", "status", "framework"}
	for _, layer := range layers {
		files, err := filepath.Glob(filepath.Join(layer, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no files (%v)", layer, err)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			parsed, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, spec := range parsed.Imports {
				path, _ := strconv.Unquote(spec.Path.Value)
				for _, other := range layers {
					if other != layer && path == module+other {
						t.Errorf("%s imports %s: the layers store, status and framework must not import one another", file, other)
					}
				}
			}
		}
	}
}
