package framework

import (
	"context"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
)

// Effects carries committed decisions out of the session: to the API server in production,
// to the in-memory cluster in the simulator, to a mock in tests.
type Effects interface {
	// Bind places an allocated pod on its node.
	Bind(ctx context.Context, pod *api.PodInfo, nodeName string) error
	// Evict starts the eviction of a pod, for the reason given.
	Evict(ctx context.Context, pod *api.PodInfo, reason EvictionReason) error
	// Pipeline tells that a pod was promised resources still being released on a node; the
	// pod is not bound.
	Pipeline(ctx context.Context, pod *api.PodInfo, nodeName string) error
	// RecordJobStart persists that a job went from no active pods to a running gang at
	// startedAt, the session's now.
	RecordJobStart(ctx context.Context, job *api.JobInfo, startedAt time.Time) error
}

// EvictionReason says why a pod is evicted and for whom.
type EvictionReason struct {
	Action    ActionType
	Preemptor api.JobID
	Message   string
}
