package scheduling

// NodePool is the shard of the cluster one scheduler instance serves: the Nodes, Queues and
// PodGroups whose LabelKey label is Name. The unnamed pool, the one a scheduler serves
// without --partition-label-value, holds the objects without that label (or with an empty
// value), as in KAI-Scheduler: a labelled node is always some named pool's, never two
// schedulers'. An empty LabelKey turns sharding off: the pool holds everything.
type NodePool struct {
	LabelKey string
	Name     string
}

// Includes reports whether an object with these labels belongs to the pool.
func (p NodePool) Includes(labels map[string]string) bool {
	if p.LabelKey == "" {
		return true
	}
	return labels[p.LabelKey] == p.Name
}

// String names the pool for logs and messages: its name, or "default" for the unnamed one.
func (p NodePool) String() string {
	if p.Name == "" {
		return "default"
	}
	return p.Name
}
