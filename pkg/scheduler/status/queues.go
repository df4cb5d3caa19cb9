package status

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// QueueValidCondition is the Queue condition that says whether the scheduler can schedule
// the queue's jobs (False for an orphan, a parent cycle, or a broken ancestor).
const QueueValidCondition = "Valid"

// QueueReport is what the scheduler tells about one queue.
type QueueReport struct {
	Children                                      []string
	Allocated, AllocatedNonPreemptible, Requested model.Resources
	// Problem is why the queue cannot be scheduled; empty for a valid queue.
	Problem string
	// Share is where the cycle's fair-share division put the queue (its deserved quota and
	// fair share are shown); nil when none divided (an invalid queue, or no proportion).
	Share *model.QueueShare
}

// shows reports whether the report shows what o shows in a Queue's status: the shares as
// they are written, so that float noise below what the status shows writes nothing. Called
// for every queue every cycle, so it compares values rather than rendering text.
func (r QueueReport) shows(o QueueReport) bool {
	if r.Problem != o.Problem || !slices.Equal(r.Children, o.Children) || !r.Allocated.Equal(o.Allocated) ||
		!r.AllocatedNonPreemptible.Equal(o.AllocatedNonPreemptible) || !r.Requested.Equal(o.Requested) || (r.Share == nil) != (o.Share == nil) {
		return false
	}
	return r.Share == nil || (shownShare(r.Share.Deserved) == shownShare(o.Share.Deserved) && shownShare(r.Share.FairShare) == shownShare(o.Share.FairShare))
}

// queueState is the updater's memory of one queue.
type queueState struct {
	report       QueueReport
	writtenAt    time.Time
	problem      string
	problemSince time.Time
	// everWritten is set once a report was written; writtenReport is the latest written.
	everWritten   bool
	writtenReport QueueReport
}

// shown reports whether the queue's status shows its report.
func (q *queueState) shown() bool { return q.everWritten && q.report.shows(q.writtenReport) }

// SetQueues records, at the end of a cycle, what to report about every queue, and queues a
// write for each whose status no longer shows it.
func (u *Updater) SetQueues(reports map[string]QueueReport) {
	u.mu.Lock()
	defer u.mu.Unlock()
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
		if !q.shown() {
			u.mark(target{queueStatusTarget, name})
		}
	}
}

// writeQueueStatus writes a queue's status if it changed: at once when validity or children
// change, otherwise (allocation moves every cycle) at most every conditionRefresh, returning
// the time until it is due.
func (u *Updater) writeQueueStatus(ctx context.Context, name string) (time.Duration, error) {
	u.mu.Lock()
	q := u.queues[name]
	if q == nil || q.shown() {
		u.mu.Unlock()
		return 0, nil // gone, or shown already
	}
	report, since := q.report, q.problemSince
	structural := !q.everWritten || report.Problem != q.writtenReport.Problem || !slices.Equal(report.Children, q.writtenReport.Children)
	if elapsed := u.Clock.Since(q.writtenAt); !structural && elapsed < conditionRefresh {
		u.mu.Unlock()
		return conditionRefresh - elapsed, nil
	}
	u.mu.Unlock()
	if err := u.writeQueue(ctx, name, report, since); err != nil {
		return 0, err
	}
	u.mu.Lock()
	if q := u.queues[name]; q != nil {
		q.writtenAt, q.everWritten, q.writtenReport = u.Clock.Now(), true, report
	}
	u.mu.Unlock()
	return 0, nil
}

func (u *Updater) writeQueue(ctx context.Context, name string, r QueueReport, since time.Time) error {
	condition := metav1.Condition{Type: QueueValidCondition, Status: metav1.ConditionTrue, Reason: "Valid",
		Message: "the queue and its ancestors are sound", LastTransitionTime: metav1.NewTime(since)}
	if r.Problem != "" {
		condition.Status, condition.Reason, condition.Message = metav1.ConditionFalse, "InvalidQueueTree", r.Problem
	}
	status := map[string]any{
		"childQueues":             r.Children,
		"allocated":               resourceList(r.Allocated),
		"allocatedNonPreemptible": resourceList(r.AllocatedNonPreemptible),
		"requested":               resourceList(r.Requested),
		"conditions":              []metav1.Condition{condition},
		// null removes what an earlier cycle wrote, when the queue is no longer divided to.
		"deserved":  nil,
		"fairShare": nil,
	}
	if r.Share != nil {
		status["deserved"], status["fairShare"] = shareList(r.Share.Deserved), shareList(r.Share.FairShare)
	}
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return err
	}
	return u.patch(ctx, queueStatusTarget, model.QueueRef(name), true, patch)
}

// shareList renders amounts of a fair-share division, which are fractional, as Kubernetes
// quantities: GPUs to the thousandth (1.5 is 1500m), CPU to the millicore, memory to the
// byte.
func shareList(v [model.NumQuotaResources]float64) v1.ResourceList {
	shown := shownShare(v)
	return v1.ResourceList{
		v1.ResourceCPU:        *resource.NewMilliQuantity(shown[model.CPU], resource.DecimalSI),
		v1.ResourceMemory:     *resource.NewQuantity(shown[model.Memory], resource.BinarySI),
		model.GPUResourceName: *resource.NewMilliQuantity(shown[model.GPU], resource.DecimalSI),
	}
}

// shownShare is what shareList writes of each amount, as integers: CPU millicores, memory
// bytes, GPU thousandths.
func shownShare(v [model.NumQuotaResources]float64) [model.NumQuotaResources]int64 {
	var shown [model.NumQuotaResources]int64
	shown[model.CPU], shown[model.Memory], shown[model.GPU] = int64(math.Round(v[model.CPU])), int64(math.Round(v[model.Memory])), int64(math.Round(v[model.GPU]))
	return shown
}

// resourceList renders scheduler amounts as Kubernetes quantities.
func resourceList(r model.Resources) v1.ResourceList {
	return v1.ResourceList{
		v1.ResourceCPU:        *resource.NewMilliQuantity(r.Get(model.CPU), resource.DecimalSI),
		v1.ResourceMemory:     *resource.NewQuantity(r.Get(model.Memory), resource.BinarySI),
		model.GPUResourceName: *resource.NewMilliQuantity(r.Get(model.GPU), resource.DecimalSI),
	}
}
