package scheduler_test

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/status"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/store"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// A scheduler whose informers have not handed over their initial lists has seen only part
// of the cluster: it must not schedule. A loop stopped while it waits runs no cycle; one whose
// informers are synced runs its cycle (which lists, here, so that cycles can be counted).
func TestLoopRunsNoCycleBeforeItsInformersSynced(t *testing.T) {
	scheme, policy := schemeAndPolicy(t)
	for _, synced := range []bool{false, true} {
		lists := 0
		c := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
			List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				lists++
				return c.List(ctx, list, opts...)
			},
		}).Build()
		clk := clocktesting.NewFakeClock(time.Now())
		loop := &scheduler.Loop{
			Builder: &store.Builder{Reader: c, SchedulerName: "kai-scheduler"}, Policy: policy,
			Status: status.NewUpdater(c, nil, clk), Clock: clk, Period: time.Second,
			Synced: []toolscache.InformerSynced{func() bool { return synced }},
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // stopped: a synced loop still runs the cycle it starts with, then returns
		if err := loop.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if ran := lists > 0; ran != synced {
			t.Errorf("informers synced %v: a cycle ran = %v", synced, ran)
		}
	}
}

// A change that may let a waiting job move (a pod freed its GPUs, a job arrived) starts a
// cycle within a tenth of a period, not a period later: at 1 s periods, a reclaimer would
// otherwise wait up to a second for each victim's departure to be seen.
func TestLoopCyclesSoonAfterAChange(t *testing.T) {
	scheme, policy := schemeAndPolicy(t)
	cycles := make(chan struct{}, 10)
	c := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, nodes := list.(*v1.NodeList); nodes {
				cycles <- struct{}{} // each cycle lists the nodes once
			}
			return c.List(ctx, list, opts...)
		},
	}).Build()
	clk := clocktesting.NewFakeClock(time.Now())
	changes := make(chan struct{}, 1)
	const period = time.Second
	loop := &scheduler.Loop{
		Builder: &store.Builder{Reader: c, SchedulerName: "kai-scheduler"}, Policy: policy,
		Status: status.NewUpdater(c, nil, clk), Clock: clk, Period: period, Changes: changes,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- loop.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	<-cycles // the first cycle runs at once

	changes <- struct{}{}
	const step = 10 * time.Millisecond
	for waited := time.Duration(0); ; waited += step {
		if waited >= period-step {
			t.Fatalf("no cycle %s after a change, with a period of %s", waited, period)
		}
		select {
		case <-cycles:
			if waited < period/10 {
				t.Fatalf("a cycle %s after the last: changes must not make the loop spin", waited)
			}
			return
		case <-time.After(20 * time.Millisecond): // lets the loop reach its wait; time is the fake clock's
			clk.Step(step)
		}
	}
}

// schemeAndPolicy are the scheme and the default policy a loop of these tests runs with.
func schemeAndPolicy(t *testing.T) (*runtime.Scheme, *scheduler.Policy) {
	t.Helper()
	scheme, _ := install.Scheme() // registering fixed types cannot fail
	policy, _, err := scheduler.LoadPolicy(nil)
	if err != nil {
		t.Fatal(err)
	}
	return scheme, policy
}

// A job's own min-runtime annotation above its queue's is not honoured, and the scheduler
// says so in a Warning event on the PodGroup, once, not at every cycle.
func TestLoopTellsADeclinedOwnMinRuntime(t *testing.T) {
	scheme, policy := schemeAndPolicy(t)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	started := now.Add(-time.Minute)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		builders.MakePodGroup("ns", "train").Queue("team").StartedAt(started).
			Annotation(scheduling.ReclaimMinRuntimeAnnotation, "1h").Obj(),
		builders.MakePod("ns", "train-0").PodGroup("train").GPUs(1).Node("n1").StartedAt(started).Obj(),
		builders.MakeNode("n1").Allocatable(v1.ResourceCPU, "8").Allocatable(v1.ResourceMemory, "32Gi").MaxPods(110).GPUs(2).Obj(),
		builders.MakeQueue("team").ReclaimMinRuntime(10*time.Minute).Obj(), builders.MakeQueue("other").Obj(),
	).WithStatusSubresource(builders.MakePodGroup("ns", "train").Obj()).Build()
	clk := clocktesting.NewFakeClock(now)
	recorder := record.NewFakeRecorder(10)
	loop := &scheduler.Loop{
		Builder: &store.Builder{Reader: c, SchedulerName: "kai-scheduler"}, Policy: policy,
		Status: status.NewUpdater(c, nil, clk), Clock: clk, Period: time.Second, Events: recorder,
	}
	for range 3 {
		loop.RunOnce(context.Background())
		clk.Step(time.Second)
	}
	close(recorder.Events)
	var told []string
	for e := range recorder.Events {
		if strings.Contains(e, model.ReasonMinRuntimeNotShortened) {
			told = append(told, e)
		}
	}
	if len(told) != 1 || !strings.Contains(told[0], "=1h0m0s is not below the 10m0s") {
		t.Errorf("events %q, want one Warning naming the declined 1h against team's 10m", told)
	}
}
