package status_test

import (
	"context"
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/metrics"
)

func evictionsOf(t *testing.T, c client.Client) v2alpha2.EvictionCount {
	t.Helper()
	if e := read(t, c).Status.Evictions; e != nil {
		return *e
	}
	return v2alpha2.EvictionCount{}
}

// An eviction is counted once per decision: every pod of the run reports it, writes fail and
// are sent again, and the count still goes up by one; a later decision adds one more.
func TestEvictionsAreCountedOncePerDecision(t *testing.T) {
	failures := 1
	c, updater, _ := setup(t, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if err := c.SubResource(sub).Patch(ctx, obj, patch, opts...); err != nil {
				return err
			}
			if failures > 0 { // written, but the answer is lost: the updater sends it again
				failures--
				return errors.New("injected: connection reset")
			}
			return nil
		},
	})
	recorded := &metrics.Recording{}
	updater.Metrics = recorded
	decided := start.Add(1500*time.Millisecond + 7*time.Nanosecond)
	for range 4 { // one call per evicted pod
		updater.QueueEvictionCount("ns/job", framework.Reclaim, decided)
	}
	for range 3 {
		updater.Flush(context.Background())
	}
	got := evictionsOf(t, c)
	if got.Total != 1 || got.Reclaim != 1 || got.Preempt != 0 || !got.Last.Time.Equal(decided.Truncate(time.Microsecond)) {
		t.Fatalf("after one decision and a write sent twice: %+v, want one reclaim at %s", got, decided)
	}
	if updater.PendingWrites() != 0 {
		t.Errorf("a count the PodGroup shows must leave the queue, %d writes pending", updater.PendingWrites())
	}

	updater.QueueEvictionCount("ns/job", framework.Preempt, decided.Add(time.Hour))
	updater.QueueEvictionCount("ns/job", framework.Reclaim, decided) // the counted decision again: not twice
	updater.Flush(context.Background())
	if got := evictionsOf(t, c); got.Total != 2 || got.Preempt != 1 || got.Reclaim != 1 {
		t.Fatalf("after a second decision: %+v, want one preempt and one reclaim", got)
	}
	if got := recorded.Recorded().RunsEnded; got["reclaim"] != 1 || got["preempt"] != 1 {
		t.Errorf("runs ended metric %v, want one reclaim and one preempt: the metric counts what the status counts", got)
	}
}

// Two decisions queued before the client shows the first counted are both counted, even when
// the client reads a copy that lags behind the write.
func TestEvictionsAreNotLostToALaggingCopy(t *testing.T) {
	var stale *v2alpha2.PodGroup
	c, updater, _ := setup(t, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if stale != nil { // an informer that has not seen the last write
				stale.DeepCopyInto(obj.(*v2alpha2.PodGroup))
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	stale = read(t, c)
	recorded := &metrics.Recording{}
	updater.Metrics = recorded
	updater.QueueEvictionCount("ns/job", framework.Reclaim, start)
	updater.Flush(context.Background())
	updater.QueueEvictionCount("ns/job", framework.Reclaim, start.Add(time.Minute))
	updater.Flush(context.Background())
	stale = nil
	updater.Flush(context.Background())
	if got := evictionsOf(t, c); got.Total != 2 || got.Reclaim != 2 {
		t.Fatalf("two decisions written through a lagging copy: %+v, want two reclaims", got)
	}
	if got := recorded.Recorded().RunsEnded["reclaim"]; got != 2 {
		t.Errorf("runs ended metric %d after two decisions written three times, want 2", got)
	}
	if updater.PendingWrites() != 0 {
		t.Errorf("%d writes pending once the copy shows both", updater.PendingWrites())
	}
}

// A PodGroup deleted between the count's read and its write takes its queued decisions with
// it: they hold back neither the pending writes nor a shutdown.
func TestEvictionsOfAPodGroupDeletedMidWriteAreForgotten(t *testing.T) {
	_, updater, _ := setup(t, interceptor.Funcs{
		SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
			return apierrors.NewNotFound(schema.GroupResource{Resource: "podgroups"}, "job")
		},
	})
	updater.QueueEvictionCount("ns/job", framework.Reclaim, start)
	updater.Flush(context.Background())
	if updater.PendingWrites() != 0 {
		t.Errorf("%d writes pending for a PodGroup that is gone", updater.PendingWrites())
	}
}
