package model_test

import (
	"reflect"
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// queueWithGPUQuota is a queue with a GPU quota and CPU and memory unlimited, as most queues
// leave them.
func queueWithGPUQuota(name, parent string, gpus float64) *model.QueueInfo {
	q := &model.QueueInfo{Name: name, Parent: parent, Priority: model.DefaultQueuePriority}
	for _, r := range model.QuotaResources {
		q.Resources[r] = model.QueueResourceShare{Quota: model.Unlimited, OverQuotaWeight: 1, Limit: model.Unlimited}
	}
	q.Resources[model.GPU].Quota = gpus
	if gpus > 0 {
		q.Resources[model.GPU].Quota = gpus * model.QueueSpecUnit(model.GPU)
	}
	return q
}

// A quota of -1 is told only where it over-subscribes quotas above zero beside it (its
// siblings'): not beside quotas of 0, not for CPU and memory left unlimited everywhere, not
// across levels, and not for invalid queues.
func TestUnlimitedQuotasBesideQuotasAreTold(t *testing.T) {
	tree := model.NewQueueTree([]*model.QueueInfo{
		queueWithGPUQuota("production", "", 16),
		queueWithGPUQuota("research", "", 0),
		queueWithGPUQuota("default-parent-queue", "", model.Unlimited),
		queueWithGPUQuota("default-queue", "default-parent-queue", model.Unlimited),
		queueWithGPUQuota("lab", "", 0),
		queueWithGPUQuota("lab-a", "lab", model.Unlimited),
		queueWithGPUQuota("lab-b", "lab", 0),
		queueWithGPUQuota("orphan", "gone", model.Unlimited),
	})
	want := []model.UnlimitedQuota{{Queue: "default-parent-queue", Resource: model.GPU, Beside: []string{"production"}, Quotas: []float64{16 * model.MilliGPU}}}
	if got := tree.UnlimitedQuotas(); !reflect.DeepEqual(got, want) {
		t.Fatalf("told %+v, want %+v", got, want)
	}
	if got, want := want[0].Message(), "gpu quota -1: this queue is owed all its jobs ask for, up to all its parent has, as the queues beside it are owed their quotas (production 16 GPUs): "+
		"their quotas are over-subscribed, and what it holds within what it asks for is never reclaimed for theirs. "+
		"Give it a finite quota (0 for work that should get only what no queue is owed) unless that is meant"; got != want {
		t.Errorf("message:\n%s\nwant:\n%s", got, want)
	}
	usual := model.NewQueueTree([]*model.QueueInfo{queueWithGPUQuota("a", "", 4), queueWithGPUQuota("b", "", 0), queueWithGPUQuota("b-1", "b", 2)})
	if got := usual.UnlimitedQuotas(); got != nil {
		t.Errorf("CPU and memory unlimited everywhere, GPU quotas finite: told %+v", got)
	}
}
