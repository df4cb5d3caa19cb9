package builders

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
)

// QueueWrapper builds a v2.Queue.
type QueueWrapper struct {
	v2.Queue
	meta[*QueueWrapper]
}

// MakeQueue is a top-level queue that sets nothing: no resources (a limit of zero, as in
// KAI-Scheduler), the default priority, min-runtimes inherited from the scheduler's defaults.
func MakeQueue(name string) *QueueWrapper {
	q := &QueueWrapper{Queue: v2.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}}}
	q.meta = meta[*QueueWrapper]{q, &q.ObjectMeta}
	return q
}

// Obj is the queue built.
func (q *QueueWrapper) Obj() *v2.Queue { return &q.Queue }

// GPUQuota gives the queue a quota of GPUs, an over-quota weight of 1 and no limit, and
// unlimited CPU and memory: the queue of a test about GPUs. A quota of -1 is unlimited.
func (q *QueueWrapper) GPUQuota(gpus float64) *QueueWrapper {
	unlimited := v2.QueueResource{Quota: -1, OverQuotaWeight: 1, Limit: -1}
	return q.Resources(v2.QueueResource{Quota: gpus, OverQuotaWeight: 1, Limit: -1}, unlimited, unlimited)
}

// Resources sets the queue's quota, over-quota weight and limit of GPUs, CPU (millicores)
// and memory (megabytes).
func (q *QueueWrapper) Resources(gpu, cpu, memory v2.QueueResource) *QueueWrapper {
	q.Spec.Resources = &v2.QueueResources{GPU: gpu, CPU: cpu, Memory: memory}
	return q
}

// Parent makes the queue a child of another.
func (q *QueueWrapper) Parent(name string) *QueueWrapper {
	q.Spec.ParentQueue = name
	return q
}

// Priority sets the queue's priority.
func (q *QueueWrapper) Priority(p int) *QueueWrapper {
	q.Spec.Priority = &p
	return q
}

// PreemptMinRuntime sets the queue's preempt min-runtime (0 stops inheritance).
func (q *QueueWrapper) PreemptMinRuntime(d time.Duration) *QueueWrapper {
	q.Spec.PreemptMinRuntime = &metav1.Duration{Duration: d}
	return q
}

// ReclaimMinRuntime sets the queue's reclaim min-runtime (0 stops inheritance).
func (q *QueueWrapper) ReclaimMinRuntime(d time.Duration) *QueueWrapper {
	q.Spec.ReclaimMinRuntime = &metav1.Duration{Duration: d}
	return q
}
