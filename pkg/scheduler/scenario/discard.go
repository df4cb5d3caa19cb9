package scenario

import (
	"context"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
)

// Discard is a framework.Effects that accepts everything and keeps nothing, for benchmarks
// that measure decisions and not their recording.
type Discard struct{}

var _ framework.Effects = Discard{}

func (Discard) Bind(context.Context, *api.PodInfo, string) error { return nil }
func (Discard) Evict(context.Context, *api.PodInfo, framework.EvictionReason) error {
	return nil
}
func (Discard) Pipeline(context.Context, *api.PodInfo, string) error          { return nil }
func (Discard) Nominate(context.Context, *api.PodInfo, string) error          { return nil }
func (Discard) CancelPipeline(context.Context, *api.PodInfo) error            { return nil }
func (Discard) RecordJobStart(context.Context, *api.JobInfo, time.Time) error { return nil }
