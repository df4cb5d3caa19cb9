// Package metrics owns the scheduler's Prometheus metrics and the Recorder through which the
// scheduler writes them. Nothing writes a metric directly: the loop, the session's plugins,
// the effects, the dispatcher and the status updater are handed a Recorder, as
// kube-scheduler's framework handle carries its metrics recorder. The scheduler binary hands
// them a Prometheus recorder; kai-sim and kubectl kai explain, which run the same code
// offline, hand them Discard, so that a tool's run moves no metric; tests hand them a
// Recording and read it.
package metrics
