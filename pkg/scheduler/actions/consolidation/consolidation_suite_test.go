package consolidation_test

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

func TestConsolidation(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "consolidation scenarios")
}

var ctx = context.Background()

// config runs consolidation between allocate and the actions that take from others, as
// upstream KAI-Scheduler's default actions do.
var config = harness.DefaultConfigWith("allocate, consolidation, reclaim, preempt")

// evictions lists every eviction of the rounds.
func evictions(rounds []harness.Round) []harness.Eviction {
	var all []harness.Eviction
	for _, r := range rounds {
		all = append(all, r.Evictions...)
	}
	return all
}
