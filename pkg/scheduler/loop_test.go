package scheduler_test

import (
	"context"
	"testing"
	"time"

	toolscache "k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/cache"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/status"
)

// A scheduler whose informers have not handed over their initial lists has seen only part
// of the cluster: it must not schedule. A loop stopped while it waits runs no cycle; one whose
// informers are synced runs its cycle (which lists, here, so that cycles can be counted).
func TestLoopRunsNoCycleBeforeItsInformersSynced(t *testing.T) {
	scheme, _ := install.Scheme() // registering fixed types cannot fail
	policy, _, err := scheduler.LoadPolicy(nil)
	if err != nil {
		t.Fatal(err)
	}
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
			Builder: &cache.Builder{Reader: c, SchedulerName: "kai-scheduler"}, Policy: policy,
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
