package status

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/cache"
)

// QueueValidCondition is the Queue condition that says whether the scheduler can schedule
// the queue's jobs (False for an orphan, a parent cycle, or a broken ancestor).
const QueueValidCondition = "Valid"

// QueueReport is what the scheduler tells about one queue.
type QueueReport struct {
	Children                                      []string
	Allocated, AllocatedNonPreemptible, Requested api.Resources
	// Problem is why the queue cannot be scheduled; empty for a valid queue.
	Problem string
}

// key renders the report for change detection.
func (r QueueReport) key() string {
	return fmt.Sprintf("%v|%v|%v|%v|%s", r.Children, r.Allocated, r.AllocatedNonPreemptible, r.Requested, r.Problem)
}

// queueState is the updater's memory of one queue.
type queueState struct {
	report        QueueReport
	written       string
	writtenAt     time.Time
	problem       string
	problemSince  time.Time
	everWritten   bool
	writtenReport QueueReport
}

// SetQueues records, at the end of a cycle, what to report about every queue.
func (u *Updater) SetQueues(reports map[string]QueueReport) {
	u.mu.Lock()
	if u.queues == nil {
		u.queues = map[string]*queueState{}
	}
	for name := range u.queues {
		if _, ok := reports[name]; !ok {
			delete(u.queues, name)
		}
	}
	for name, r := range reports {
		q := u.queues[name]
		if q == nil {
			q = &queueState{}
			u.queues[name] = q
		}
		if r.Problem != q.problem || q.problemSince.IsZero() {
			q.problem, q.problemSince = r.Problem, u.Clock.Now()
		}
		q.report = r
	}
	u.mu.Unlock()
	u.wake()
}

// flushQueues writes queue statuses that changed: at once when validity or children change,
// otherwise (allocation moves every cycle) at most every conditionRefresh.
func (u *Updater) flushQueues(ctx context.Context) {
	type pending struct {
		name   string
		report QueueReport
		since  time.Time
	}
	var todo []pending
	u.mu.Lock()
	for name, q := range u.queues {
		if q.report.key() == q.written {
			continue
		}
		structural := !q.everWritten || q.report.Problem != q.writtenReport.Problem ||
			strings.Join(q.report.Children, ",") != strings.Join(q.writtenReport.Children, ",")
		if !structural && u.Clock.Since(q.writtenAt) < conditionRefresh {
			continue
		}
		todo = append(todo, pending{name: name, report: q.report, since: q.problemSince})
	}
	u.mu.Unlock()
	for _, p := range todo {
		err := u.writeQueue(ctx, p.name, p.report, p.since)
		if err != nil && !apierrors.IsNotFound(err) {
			klog.FromContext(ctx).Error(err, "Writing queue status failed; will retry", "queue", p.name)
			continue
		}
		u.mu.Lock()
		if q := u.queues[p.name]; q != nil {
			q.written, q.writtenAt, q.everWritten, q.writtenReport = p.report.key(), u.Clock.Now(), true, p.report
		}
		u.mu.Unlock()
	}
}

func (u *Updater) writeQueue(ctx context.Context, name string, r QueueReport, since time.Time) error {
	condition := metav1.Condition{Type: QueueValidCondition, Status: metav1.ConditionTrue, Reason: "Valid",
		Message: "the queue and its ancestors are sound", LastTransitionTime: metav1.NewTime(since)}
	if r.Problem != "" {
		condition.Status, condition.Reason, condition.Message = metav1.ConditionFalse, "InvalidQueueTree", r.Problem
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{
		"childQueues":             r.Children,
		"allocated":               resourceList(r.Allocated),
		"allocatedNonPreemptible": resourceList(r.AllocatedNonPreemptible),
		"requested":               resourceList(r.Requested),
		"conditions":              []metav1.Condition{condition},
	}})
	if err != nil {
		return err
	}
	return u.Client.Status().Patch(ctx, cache.QueueRef(name), client.RawPatch(types.MergePatchType, patch))
}

// resourceList renders scheduler amounts as Kubernetes quantities.
func resourceList(r api.Resources) v1.ResourceList {
	return v1.ResourceList{
		v1.ResourceCPU:      *resource.NewMilliQuantity(r.Get(api.CPU), resource.DecimalSI),
		v1.ResourceMemory:   *resource.NewQuantity(r.Get(api.Memory), resource.BinarySI),
		api.GPUResourceName: *resource.NewQuantity(r.Get(api.GPU), resource.DecimalSI),
	}
}
