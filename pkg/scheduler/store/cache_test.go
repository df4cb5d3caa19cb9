package store

import (
	"testing"

	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

func TestQueueInfoUnitsAndInheritance(t *testing.T) {
	queue := builders.MakeQueue("team").Parent("dept").Priority(200).Resources(
		v2.QueueResource{Quota: 4, OverQuotaWeight: 2, Limit: -1},
		v2.QueueResource{Quota: 8000, Limit: 16000},
		v2.QueueResource{Quota: 1024, Limit: -1},
	).ReclaimMinRuntime(0).Obj()
	info := QueueInfo(queue)
	if info.Parent != "dept" || info.Priority != 200 {
		t.Fatalf("parent/priority = %q/%d", info.Parent, info.Priority)
	}
	if got := info.Resources[model.GPU]; got != (model.QueueResourceShare{Quota: 4 * model.MilliGPU, OverQuotaWeight: 2, Limit: model.Unlimited}) {
		t.Errorf("gpu = %+v", got)
	}
	if got := info.Resources[model.Memory]; got.Quota != 1024e6 || got.Limit != model.Unlimited {
		t.Errorf("memory in bytes, unlimited kept: %+v", got)
	}
	if info.PreemptMinRuntime != nil {
		t.Error("unset preemptMinRuntime must stay unset, so that it inherits")
	}
	if info.ReclaimMinRuntime == nil || *info.ReclaimMinRuntime != 0 {
		t.Error("an explicit 0s must stay set, so that it stops inheritance")
	}
	if QueueInfo(builders.MakeQueue("plain").Obj()).Priority != model.DefaultQueuePriority {
		t.Error("unset priority is the default")
	}
}
