package reclaim_test

import (
	"context"
	"fmt"
	"testing"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions/reclaim"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework/frameworktest"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

// largeJobReclaim is the shape of KAI-Scheduler's published reclaim benchmark: n nodes of 8
// GPUs full of n*8 single-GPU jobs (job i on node i mod n) in a queue that deserves nothing,
// and one pending gang of n/10 pods of 8 GPUs in a queue that deserves everything.
func largeJobReclaim(n int) *Harness {
	h := New("").Queues(Queue("owner").GPUQuota(float64(8*n)), Queue("borrower").GPUQuota(0))
	for i := range n {
		h.Nodes(Node(fmt.Sprintf("node-%04d", i)).GPUs(8))
	}
	for i := range 8 * n {
		h.Jobs(Job(fmt.Sprintf("small-%05d", i)).Queue("borrower").GPUs(1).Running(fmt.Sprintf("node-%04d", i%n)))
	}
	gang := int32(max(n/10, 1))
	return h.Jobs(Job("large").Queue("owner").MinMember(gang).Pods(int(gang)).GPUs(8))
}

// BenchmarkLargeJobReclaim times opening a session (fair shares included) and the reclaim
// action; building the snapshot is setup and not timed.
func BenchmarkLargeJobReclaim(b *testing.B) {
	policy, _, err := scheduler.LoadPolicy(nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{10, 100, 200, 1000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			h := largeJobReclaim(n)
			action := reclaim.New()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				snapshot := h.Snapshot()
				b.StartTimer()
				ssn := framework.OpenSession(context.Background(), framework.SessionOptions{
					Snapshot: snapshot, Clock: clocktesting.NewFakePassiveClock(Epoch), Plugins: policy.Plugins, Effects: frameworktest.Discard{},
				})
				action.Execute(context.Background(), ssn)
				ssn.Close()
				if got := len(snapshot.Job("ns/large").Pods); got > 0 && snapshot.Job("ns/large").Pods[0].Status.String() != "Pipelined" {
					b.Fatalf("the large job was not placed: %v", snapshot.Job("ns/large").Pods[0].Status)
				}
			}
		})
	}
}
