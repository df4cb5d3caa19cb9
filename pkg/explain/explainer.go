package explain

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions/consolidation"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions/stalegang"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/plugins/minruntime"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

// Explainer answers why, from what an explanation reads: the cluster as the scheduler would
// see it in a cycle at Now (through scheduler.NewView), and the scheduler's policy.
type Explainer struct {
	Reader   client.Reader
	Snapshot *model.Snapshot
	Policy   *scheduler.Policy
	// MinRuntime is the policy's minruntime plugin; nil when the configuration has none.
	MinRuntime *minruntime.Plugin
	// StaleGang is the policy's stalegangeviction action; nil when the configuration runs none.
	StaleGang *stalegang.Action
	// Consolidation is the policy's consolidation action; nil when the configuration runs none.
	Consolidation *consolidation.Action
	// Warnings are what loading the configuration reported as accepted but without effect.
	Warnings []string
	Now      time.Time
}

// Load reads the cluster through reader, as the scheduler named schedulerName would, and
// builds the policy of config (the built-in default when config is nil).
func Load(ctx context.Context, reader client.Reader, schedulerName string, config []byte, clk clock.PassiveClock) (*Explainer, error) {
	policy, warnings, err := scheduler.LoadPolicy(config)
	if err != nil {
		return nil, fmt.Errorf("the scheduler configuration is invalid (the scheduler would not start with it): %w", err)
	}
	view, err := scheduler.NewView(scheduler.ViewOptions{Name: schedulerName, Clock: clk, Lister: reader})
	if err != nil {
		return nil, err
	}
	snapshot, _, err := view.Builder.Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the cluster: %w", err)
	}
	c := &Explainer{Reader: reader, Snapshot: snapshot, Policy: policy, Warnings: warnings, Now: clk.Now()}
	for _, p := range policy.Plugins {
		if m, ok := p.(*minruntime.Plugin); ok {
			c.MinRuntime = m
		}
	}
	for _, a := range policy.Actions {
		if s, ok := a.(*stalegang.Action); ok {
			c.StaleGang = s
		}
		if m, ok := a.(*consolidation.Action); ok {
			c.Consolidation = m
		}
	}
	return c, nil
}

// session opens a scheduling session on the snapshot, as a cycle at Now would, so that the
// plugins answer with the code they answer the scheduler with. Nothing it decides is sent
// anywhere: it runs no action, has no effects and records no metric (no recorder: what the
// plugins measure is discarded, and the process's metrics stay as they were).
func (c *Explainer) session(ctx context.Context) *framework.Session {
	return framework.OpenSession(ctx, framework.SessionOptions{
		// An explanation is about one moment: a clock that stays at Now.
		Snapshot: c.Snapshot, Clock: clocktesting.NewFakePassiveClock(c.Now), Plugins: c.Policy.Plugins,
	})
}
