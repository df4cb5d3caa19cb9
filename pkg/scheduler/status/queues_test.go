package status_test

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/status"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// A queue's status shows its deserved quota and fair share, which are fractional (GPUs to the
// thousandth), beside upstream's fields; float noise below what is shown writes nothing, and
// a queue no longer divided to (no proportion plugin, say) loses both.
func TestQueueStatusShowsDeservedAndFairShare(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := install.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	queue := builders.MakeQueue("production").GPUQuota(16).Obj()
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(queue).WithStatusSubresource(queue).Build()
	clk := clocktesting.NewFakeClock(start)
	updater := status.NewUpdater(c, nil, clk)
	read := func() v2.QueueStatus {
		q := &v2.Queue{}
		if err := c.Get(context.Background(), client.ObjectKey{Name: "production"}, q); err != nil {
			t.Fatal(err)
		}
		return q.Status
	}
	share := model.QueueShare{}
	share.Deserved[model.GPU], share.FairShare[model.GPU] = 15000, 15058.8235
	share.Deserved[model.CPU], share.FairShare[model.CPU] = 4000, 6000.4
	share.Deserved[model.Memory], share.FairShare[model.Memory] = 1<<30, 1<<30+0.3
	updater.SetQueues(map[string]status.QueueReport{"production": {Share: &share}})
	updater.Flush(context.Background())
	got := read()
	for name, want := range map[v1.ResourceName][2]string{
		model.GPUResourceName: {"15", "15059m"},
		v1.ResourceCPU:        {"4", "6"},
		v1.ResourceMemory:     {"1Gi", "1Gi"},
	} {
		deserved, fair := got.Deserved[name], got.FairShare[name]
		if deserved.String() != want[0] || fair.String() != want[1] {
			t.Errorf("%s: deserved %s and fair share %s, want %s and %s", name, deserved.String(), fair.String(), want[0], want[1])
		}
	}

	clk.Step(time.Hour) // past any throttling of rewrites
	noise := share
	noise.FairShare[model.GPU] += 1e-7
	updater.SetQueues(map[string]status.QueueReport{"production": {Share: &noise}})
	if n := updater.PendingWrites(); n != 0 {
		t.Errorf("a fair share that moved below a thousandth of a GPU queued %d writes", n)
	}
	updater.SetQueues(map[string]status.QueueReport{"production": {}})
	updater.Flush(context.Background())
	if got := read(); got.Deserved != nil || got.FairShare != nil {
		t.Errorf("a queue no longer divided to still shows deserved %v and fair share %v", got.Deserved, got.FairShare)
	}
}
