package minruntime_test

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

func TestMinRuntimeScenarios(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "min-runtime scenarios in virtual time")
}

var ctx = context.Background()

// withMinRuntime is the default configuration with the minruntime plugin and its arguments.
func withMinRuntime(arguments string) string {
	return fmt.Sprintf(`
actions: "allocate, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: proportion
  - name: minruntime
    arguments: {%s}
  - name: predicates
  - name: nodeplacement
`, arguments)
}

// firstEviction returns the index of the first round that evicted anything, or -1.
func firstEviction(rounds []harness.Round) int {
	for i, r := range rounds {
		if len(r.Evictions) > 0 {
			return i
		}
	}
	return -1
}
