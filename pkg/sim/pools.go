package sim

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/plural"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/metrics"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/plugins/minruntime"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/status"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// instance is one scheduler of the simulated cluster: what one kai-scheduler Deployment runs
// for one node pool, with that pool's configuration, store, overlay and status updater. A
// cluster without pools has one, serving everything.
type instance struct {
	pool   scheduling.NodePool
	loop   *scheduler.Loop
	status *status.Updater
	// answersChangeAt is when this scheduler's latest answers change by time alone (a
	// protection that refused a victim ends): a quiet pool can start to move again then.
	answersChangeAt time.Time
	report          *report.PoolReport
	// minRuntime is the pool's minruntime plugin, nil when its configuration has none.
	minRuntime *minruntime.Plugin
}

// poolConfig is the configuration one pool's scheduler runs, and what loading it warned of.
type poolConfig struct {
	policy   *scheduler.Policy
	warnings []string
	own      bool // the pool's own configuration, not Options.Config
}

// poolsOf lists the node pools of a scenario, sorted: every value of the label on its Nodes,
// Queues and PodGroups, and the unnamed pool ("") when some of them have no value (or when
// nothing is labelled at all). A pool only named by its jobs still gets a scheduler, which
// tells them why it cannot place them, as a real one would.
func poolsOf(sc *input.Scenario, labelKey string) []string {
	seen := map[string]bool{}
	note := func(labels map[string]string) { seen[poolOf(labelKey, labels)] = true }
	for _, n := range sc.Nodes {
		note(n.Labels)
	}
	for _, q := range sc.Queues {
		note(q.Labels)
	}
	for _, j := range sc.Jobs {
		note(j.Group.Labels)
	}
	if len(seen) == 0 {
		seen[""] = true
	}
	pools := make([]string, 0, len(seen))
	for name := range seen {
		pools = append(pools, name)
	}
	sort.Strings(pools)
	return pools
}

// loadPoolConfigs loads the configuration of every pool: its own from opts.PoolConfigs, or
// opts.Config, as a chart's pool inherits the top-level values. Each pool gets its own
// policy, as each Deployment loads its own. A configuration for a pool the scenario does not
// have is a mistake (a misspelt pool would otherwise silently run the default); all of them
// are named at once, and a mistake in opts.Config once, however many pools run it. shared
// are the warnings of opts.Config, when some pool runs it.
func loadPoolConfigs(pools []string, opts Options) (configs map[string]poolConfig, shared []string, err error) {
	if len(opts.PoolConfigs) > 0 && opts.NodePoolLabelKey == "" {
		return nil, nil, fmt.Errorf("pool configurations need a node-pool label key to tell the pools apart")
	}
	var mistakes []error
	known := map[string]bool{}
	for _, name := range pools {
		known[name] = true
	}
	var unknown []string
	for name := range opts.PoolConfigs {
		if !known[name] {
			unknown = append(unknown, name)
		}
	}
	sort.Strings(unknown)
	for _, name := range unknown {
		mistakes = append(mistakes, fmt.Errorf("pool %q has a configuration, but no Node, Queue or PodGroup of the scenario carries %s=%s",
			name, opts.NodePoolLabelKey, name))
	}
	configs = map[string]poolConfig{}
	var sharedErr error // of opts.Config, told once
	for _, name := range pools {
		data, own := opts.PoolConfigs[name]
		if !own {
			if sharedErr != nil {
				continue
			}
			data = opts.Config
		}
		policy, warnings, err := scheduler.LoadPolicy(data)
		switch {
		case err != nil && own:
			mistakes = append(mistakes, fmt.Errorf("configuration of pool %q: %w", name, err))
		case err != nil:
			sharedErr = fmt.Errorf("scheduler configuration: %w", err)
			mistakes = append(mistakes, sharedErr)
		default:
			if opts.MaxConsolidationPreemptees != nil {
				policy.SetMaxConsolidationPreemptees(*opts.MaxConsolidationPreemptees)
			}
			configs[name] = poolConfig{policy: policy, warnings: warnings, own: own}
			if !own {
				shared = warnings
			}
		}
	}
	if len(mistakes) > 0 {
		return nil, nil, errors.Join(mistakes...)
	}
	return configs, shared, nil
}

// newInstance assembles the scheduler of one pool over the simulated cluster, as the binary
// assembles its own (scheduler.New): only the cluster, the virtual clock and decisions sent
// within the cycle (no dispatcher's workers racing virtual time) are kai-sim's.
func (e *engine) newInstance(pool scheduling.NodePool, config poolConfig) (*instance, error) {
	s, err := scheduler.New(scheduler.Options{
		Name: input.SchedulerName, Pool: pool, Policy: config.policy, Clock: e.clock, Period: e.opts.Period,
		Client: e.cluster, Events: eventRecorder{e}, Metrics: e.recorderOf(pool.Name),
	})
	if err != nil {
		return nil, fmt.Errorf("pool %s: %w", pool, err)
	}
	e.cluster.AddStore(s.Store)
	poolReport := &report.PoolReport{Pool: pool.Name, Settings: config.policy.PluginSettings(), ConfigWarnings: []string{}}
	var minRuntime *minruntime.Plugin
	for _, p := range config.policy.Plugins {
		if m, ok := p.(*minruntime.Plugin); ok {
			minRuntime = m
			if !m.Escalation().Off() {
				poolReport.Escalation = m.Escalation().Describe()
			}
		}
	}
	if config.own {
		poolReport.ConfigWarnings = append(poolReport.ConfigWarnings, config.warnings...)
	}
	return &instance{pool: pool, loop: s.Loop, status: s.Status, report: poolReport, minRuntime: minRuntime}, nil
}

// recorderOf is the recorder of pool's scheduler: Options.Metrics's, or none.
func (e *engine) recorderOf(pool string) metrics.Recorder {
	if e.opts.Metrics == nil {
		return metrics.Discard{}
	}
	return e.opts.Metrics(pool)
}

// poolOf is the pool an object with these labels belongs to by the label key: the name of
// the scheduling.NodePool that Includes it ("" when the key is empty: no pools).
func poolOf(labelKey string, labels map[string]string) string {
	if labelKey == "" {
		return ""
	}
	return labels[labelKey]
}

// reportPools sums each pool's nodes and jobs into its report.
func (e *engine) reportPools() []report.PoolReport {
	byName := map[string]*report.PoolReport{}
	for _, in := range e.instances {
		byName[in.pool.Name] = in.report
	}
	for _, n := range e.sc.Nodes {
		if r := byName[poolOf(e.opts.NodePoolLabelKey, n.Labels)]; r != nil {
			r.Nodes++
			gpus := n.Status.Allocatable[model.GPUResourceName]
			r.GPUs += gpus.Value()
		}
	}
	for _, js := range e.jobs {
		r := byName[js.pool]
		r.Jobs++
		r.Evictions += js.evictions
		r.WastedGPUSeconds += js.wastedGPUSeconds
		if js.completed != nil {
			r.Completed++
		}
	}
	reports := make([]report.PoolReport, 0, len(e.instances))
	for _, in := range e.instances {
		reports = append(reports, *in.report)
	}
	return reports
}

// poolsWithoutNodes warns about every pool that has jobs but no node: its scheduler cannot
// place them, which on a scenario usually means the pool label is on the nodes but not on the
// jobs' PodGroups (or the other way round).
func (e *engine) poolsWithoutNodes(pools []report.PoolReport) []string {
	var warnings []string
	for _, p := range pools {
		if p.Jobs > 0 && p.Nodes == 0 && len(pools) > 1 {
			warnings = append(warnings, fmt.Sprintf("pool %s has %s and no node, so its scheduler cannot place any: "+
				"label the PodGroups of its jobs with the pool of the nodes they should use (%s), or run one scheduler for everything (--nodepool-label-key \"\")",
				scheduling.NodePool{Name: p.Pool}, plural.Count(p.Jobs, "job", "jobs"), e.opts.NodePoolLabelKey))
		}
	}
	return warnings
}

// resolveMinRuntimes records, for every pool whose scheduler runs the minruntime plugin, what
// the min-runtimes of its jobs' queues resolve to on the queue tree its scheduler sees at the
// end: the resolved values, not the configurations' text, tell a comparison whether a
// compared default reaches any job.
func (e *engine) resolveMinRuntimes(ctx context.Context) error {
	for _, in := range e.instances {
		if in.minRuntime == nil {
			continue
		}
		snapshot, _, err := in.loop.Builder.Snapshot(ctx)
		if err != nil {
			return fmt.Errorf("pool %s: %w", in.pool, err)
		}
		defaults := in.minRuntime.Defaults()
		resolved := &report.PoolMinRuntime{DefaultPreempt: defaults.Preempt, DefaultReclaim: defaults.Reclaim}
		queues := map[string]bool{}
		for _, js := range e.jobs {
			if js.pool == in.pool.Name {
				queues[js.queue] = true
			}
		}
		for _, queue := range slices.Sorted(maps.Keys(queues)) {
			preempt := minruntime.PreemptMinRuntime(snapshot.Queues, queue, defaults)
			q := report.QueueMinRuntime{Queue: queue, Preempt: report.ResolvedMinRuntime{Duration: preempt.Duration, SetBy: preempt.SetBy}}
			for _, level := range minruntime.ReclaimLevels(snapshot.Queues, in.minRuntime.Method(), queue, defaults) {
				q.Reclaim = append(q.Reclaim, report.ResolvedMinRuntime{Duration: level.Duration, SetBy: level.SetBy})
			}
			resolved.Queues = append(resolved.Queues, q)
		}
		in.report.MinRuntime = resolved
	}
	return nil
}
