package store

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// QueueInfo converts a v2 Queue into a queue-tree entry. Quotas and limits keep their -1
// (unlimited) marker; CPU stays in millicores, GPUs in devices, memory goes from MB to bytes.
// An unset priority is DefaultQueuePriority. Escalation annotations that cannot be read are
// left unset (see queueInfo for the problems they make).
func QueueInfo(queue *v2.Queue) *model.QueueInfo {
	info, _ := queueInfo(queue)
	return info
}

// queueInfo is QueueInfo with the problems of the queue's escalation annotations: a value
// that is not a number of at least 1 (factor) or a non-negative Go duration (ceiling) is
// ignored, the queue inheriting the setting, and told as an event on the Queue.
func queueInfo(queue *v2.Queue) (*model.QueueInfo, []Problem) {
	info := queueSpecInfo(queue)
	var problems []Problem
	if value, ok := queue.Annotations[scheduling.EscalationFactorAnnotation]; ok {
		if f, err := scheduling.ParseEscalationFactor("annotation "+scheduling.EscalationFactorAnnotation, value); err != nil {
			problems = append(problems, Problem{Object: queue, Reason: model.ReasonInvalidEscalationAnnotation, Message: err.Error() + "; ignored: the setting is inherited"})
		} else {
			info.EscalationFactor = &f
		}
	}
	if value, ok := queue.Annotations[scheduling.EscalationCeilingAnnotation]; ok {
		if d, err := scheduling.ParseDurationAnnotation(scheduling.EscalationCeilingAnnotation, value); err != nil {
			problems = append(problems, Problem{Object: queue, Reason: model.ReasonInvalidEscalationAnnotation, Message: err.Error() + "; ignored: the setting is inherited"})
		} else {
			info.EscalationCeiling = &d
		}
	}
	return info, problems
}

func queueSpecInfo(queue *v2.Queue) *model.QueueInfo {
	info := &model.QueueInfo{
		Name:     queue.Name,
		Parent:   queue.Spec.ParentQueue,
		Priority: model.DefaultQueuePriority,
	}
	if queue.Spec.Priority != nil {
		info.Priority = *queue.Spec.Priority
	}
	if r := queue.Spec.Resources; r != nil {
		info.Resources[model.GPU] = share(r.GPU, model.QueueSpecUnit(model.GPU))
		info.Resources[model.CPU] = share(r.CPU, model.QueueSpecUnit(model.CPU))
		info.Resources[model.Memory] = share(r.Memory, model.QueueSpecUnit(model.Memory))
	}
	info.PreemptMinRuntime = duration(queue.Spec.PreemptMinRuntime)
	info.ReclaimMinRuntime = duration(queue.Spec.ReclaimMinRuntime)
	return info
}

func share(r v2.QueueResource, unit float64) model.QueueResourceShare {
	return model.QueueResourceShare{Quota: scale(r.Quota, unit), OverQuotaWeight: r.OverQuotaWeight, Limit: scale(r.Limit, unit)}
}

// scale converts an amount to scheduler units. Any negative amount means unlimited (the API
// allows values between -1 and 0), so it becomes exactly the Unlimited marker everywhere.
func scale(v, unit float64) float64 {
	if v < 0 {
		return model.Unlimited
	}
	return v * unit
}

// duration keeps unset (nil: inherit) apart from an explicit 0s (stop inheriting).
func duration(d *metav1.Duration) *time.Duration {
	if d == nil {
		return nil
	}
	v := d.Duration
	return &v
}
