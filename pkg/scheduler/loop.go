package scheduler

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/cache"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/metrics"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/status"
)

// Loop runs a cycle every Period against the cluster: snapshot, RunCycle, status.
type Loop struct {
	Builder  *cache.Builder
	Policy   *Policy
	Effects  framework.Effects
	Status   *status.Updater
	Recorder record.EventRecorder
	Clock    clock.Clock
	Period   time.Duration

	// reported remembers problems already reported, so each is told once, not every cycle.
	reported map[string]bool
}

// Start runs cycles until ctx ends. It never returns an error for a bad cycle: a failed
// snapshot is logged and retried next period.
func (l *Loop) Start(ctx context.Context) error {
	for {
		l.RunOnce(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-l.Clock.After(l.Period):
		}
	}
}

// RunOnce runs one cycle.
func (l *Loop) RunOnce(ctx context.Context) {
	log := klog.FromContext(ctx)
	began := l.Clock.Now()
	snapshot, problems, err := l.Builder.Snapshot(ctx)
	if err != nil {
		log.Error(err, "Taking a snapshot failed; skipping this cycle")
		return
	}
	l.report(ctx, problems)
	result := RunCycle(ctx, snapshot, l.Clock, l.Policy, l.Effects)
	l.Status.SetPending(result.PendingReasons)
	l.Status.SetQueues(queueReports(snapshot))
	for _, p := range result.QueueProblems {
		l.once(p.Queue+p.Message, func() {
			log.Info("Queue cannot be scheduled", "queue", p.Queue, "reason", p.Message)
			if l.Recorder != nil {
				queue := &v2.Queue{}
				queue.Name, queue.APIVersion, queue.Kind = p.Queue, v2.SchemeGroupVersion.String(), "Queue"
				l.Recorder.Event(queue, v1.EventTypeWarning, "InvalidQueue", p.Message)
			}
		})
	}
	metrics.PendingJobs.Set(float64(len(result.PendingReasons)))
	metrics.InvalidQueues.Set(float64(len(result.QueueProblems)))
	metrics.CycleDuration.Observe(l.Clock.Since(began).Seconds())
}

func (l *Loop) report(ctx context.Context, problems []cache.Problem) {
	for _, p := range problems {
		key := string(p.Object.GetUID()) + p.Object.GetNamespace() + "/" + p.Object.GetName() + p.Reason + p.Message
		l.once(key, func() {
			klog.FromContext(ctx).Info("Problem in cluster objects", "object", p.Object.GetNamespace()+"/"+p.Object.GetName(),
				"reason", p.Reason, "message", p.Message)
			if l.Recorder != nil {
				l.Recorder.Event(p.Object, v1.EventTypeWarning, p.Reason, p.Message)
			}
		})
	}
}

func (l *Loop) once(key string, report func()) {
	if l.reported == nil {
		l.reported = map[string]bool{}
	}
	if !l.reported[key] {
		l.reported[key] = true
		report()
	}
}
