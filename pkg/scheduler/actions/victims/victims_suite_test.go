package victims_test

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

func TestVictims(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "reclaim and preempt scenarios")
}

var ctx = context.Background()

// evictionsOf sums the evictions of every round per job name.
func evictionsOf(rounds []harness.Round) map[string]int {
	total := map[string]int{}
	for _, r := range rounds {
		for job, n := range r.EvictedPods() {
			total[job] += n
		}
	}
	return total
}
