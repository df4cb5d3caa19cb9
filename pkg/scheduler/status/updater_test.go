package status_test

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/cache"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/status"
)

var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func setup(t *testing.T, funcs interceptor.Funcs) (client.Client, *status.Updater, *clocktesting.FakeClock) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := install.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	group := &v2alpha2.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(group).WithStatusSubresource(group).
		WithInterceptorFuncs(funcs).Build()
	clk := clocktesting.NewFakeClock(start)
	return c, status.NewUpdater(c, nil, clk), clk
}

func read(t *testing.T, c client.Client) *v2alpha2.PodGroup {
	t.Helper()
	group := &v2alpha2.PodGroup{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "job"}, group); err != nil {
		t.Fatal(err)
	}
	return group
}

func TestStartStampIsRetriedUntilItLands(t *testing.T) {
	failures := 3
	c, updater, _ := setup(t, interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if failures > 0 {
				failures--
				return errors.New("injected: API server unavailable")
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	})
	stamp := start.Add(1500 * time.Millisecond)
	updater.QueueStartStamp("ns/job", stamp)
	for range 3 {
		updater.Flush(context.Background())
		if updater.PendingWrites() != 1 {
			t.Fatal("a failed write must stay queued")
		}
	}
	updater.Flush(context.Background())
	if updater.PendingWrites() != 0 {
		t.Fatal("the write landed and must leave the queue")
	}
	got, err := cache.ParseStartTime(read(t, c).Annotations)
	if err != nil || got == nil || !got.Equal(stamp) {
		t.Fatalf("annotation %v (%v), want %v with its sub-second part", read(t, c).Annotations[scheduling.LastStartTimestampAnnotation], err, stamp)
	}
}

func TestConditionRewritesAreThrottledButClearedAtOnce(t *testing.T) {
	c, updater, clk := setup(t, interceptor.Funcs{})
	message := func() string {
		if conditions := read(t, c).Status.SchedulingConditions; len(conditions) > 0 {
			return conditions[0].Message
		}
		return ""
	}
	updater.SetPending(map[api.JobID][]string{"ns/job": {"0/3 nodes are available: 3 Insufficient nvidia.com/gpu."}}, nil)
	updater.Flush(context.Background())
	if message() != "0/3 nodes are available: 3 Insufficient nvidia.com/gpu." {
		t.Fatalf("first reason written at once, got %q", message())
	}
	clk.Step(time.Second)
	updater.SetPending(map[api.JobID][]string{"ns/job": {"0/3 nodes are available: 2 Insufficient nvidia.com/gpu, 1 node(s) were unschedulable."}}, nil)
	updater.Flush(context.Background())
	if message() != "0/3 nodes are available: 3 Insufficient nvidia.com/gpu." {
		t.Fatal("a changed reason within 10s must wait, or busy clusters flood the API server")
	}
	clk.Step(10 * time.Second)
	updater.Flush(context.Background())
	if message() != "0/3 nodes are available: 2 Insufficient nvidia.com/gpu, 1 node(s) were unschedulable." {
		t.Fatalf("after the refresh interval the latest reason is written, got %q", message())
	}
	clk.Step(time.Second)
	updater.SetPending(map[api.JobID][]string{}, nil)
	updater.Flush(context.Background())
	if message() != "" {
		t.Fatal("a job that is no longer pending has its condition cleared at once")
	}
}
