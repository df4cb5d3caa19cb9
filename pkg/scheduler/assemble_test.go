package scheduler_test

import (
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/apiwriter"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/metrics"
)

// A scheduler assembled without a part it needs is refused, naming every missing part: one
// that fell back to the wall clock, or to no metrics, in a simulation would be wrong silently.
func TestAssemblyRefusesMissingParts(t *testing.T) {
	_, err := scheduler.New(scheduler.Options{Period: time.Second})
	if err == nil {
		t.Fatal("assembled with no policy, clock, client or metrics")
	}
	for _, part := range []string{"a policy", "a clock", "a client", "a metrics recorder"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("the error does not name %s: %v", part, err)
		}
	}
	if _, err := scheduler.NewView(scheduler.ViewOptions{}); err == nil || !strings.Contains(err.Error(), "a clock") {
		t.Errorf("a view without a clock: %v", err)
	}
}

// The parts New assembles are joined: the loop snapshots the store its cluster side feeds,
// writes through the status updater it returns, and sends decisions within the cycle unless
// dispatch workers are asked for.
func TestAssemblyJoinsItsParts(t *testing.T) {
	policy, _, err := scheduler.LoadPolicy(nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := scheduler.Options{Name: "kai-scheduler", Policy: policy, Clock: clocktesting.NewFakeClock(time.Unix(0, 0)),
		Period: time.Second, Client: fake.NewClientBuilder().Build(), Metrics: metrics.Discard{}}
	s, err := scheduler.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if s.Loop.Builder.Store != s.Store || s.Loop.Status != s.Status || s.Loop.Policy != policy || s.Dispatcher != nil {
		t.Errorf("the loop is not joined to the store, status updater and policy it was assembled with: %+v", s.Loop)
	}
	// What the loop decides must be what its next snapshot sees (the overlay its builder
	// reads) and what the status updater reports.
	effects, ok := s.Loop.Effects.(*apiwriter.Effects)
	if !ok || effects.Overlay != s.Loop.Builder.Overlay || effects.Status != s.Status {
		t.Errorf("the loop's effects %+v do not write the overlay its snapshots read, or report to its status updater", s.Loop.Effects)
	}
	opts.DispatchWorkers = 4
	if s, err = scheduler.New(opts); err != nil || s.Dispatcher == nil || s.Loop.Effects != s.Dispatcher {
		t.Fatalf("with dispatch workers the loop's decisions do not go through the dispatcher: %v", err)
	}
	if s.Dispatcher.Overlay != s.Loop.Builder.Overlay || s.Dispatcher.Status != s.Status {
		t.Error("the dispatcher does not write the overlay the loop's snapshots read, or report to its status updater")
	}
}
