package sim

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
)

// topologyScenario is a Topology of zones and racks over two nodes, each in a node pool of
// its own, with a job of one GPU in pool a.
const topologyScenario = `apiVersion: kai.scheduler/v1alpha1
kind: Topology
metadata: {name: zone-rack}
spec: {levels: [{nodeLabel: topology.kubernetes.io/zone, alias: zone}, {nodeLabel: example.com/rack, alias: rack}]}
---
apiVersion: v1
kind: Node
metadata: {name: a1, labels: {kai.scheduler/node-pool: a, topology.kubernetes.io/zone: a, example.com/rack: a-1}}
status: {allocatable: {cpu: "8", nvidia.com/gpu: "1"}}
---
apiVersion: v1
kind: Node
metadata: {name: b1, labels: {kai.scheduler/node-pool: b, topology.kubernetes.io/zone: b, example.com/rack: b-1}}
status: {allocatable: {cpu: "8", nvidia.com/gpu: "1"}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: q, labels: {kai.scheduler/node-pool: a}}
spec: {resources: {gpu: {quota: 1, limit: -1, overQuotaWeight: 1}}}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: job, labels: {kai.scheduler/node-pool: a}, annotations: {sim.kai.scheduler/duration: 1m}}
spec: {minMember: 1, queue: q}
---
apiVersion: v1
kind: Pod
metadata: {name: job-0, annotations: {pod-group-name: job}}
spec: {containers: [{name: main, resources: {requests: {nvidia.com/gpu: "1"}}}]}
`

// The scenario's Topologies reach every pool's scheduler, as its Topology informer would
// bring them, with the node labels they name: the snapshot each cycle starts from holds them,
// the same from the store as from lists of the simulated cluster.
func TestTopologiesReachEveryPoolsSnapshot(t *testing.T) {
	sc, err := input.Parse([]byte(topologyScenario))
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Period: time.Second, NodePoolLabelKey: "kai.scheduler/node-pool"}
	ctx := context.Background()
	e := testEngine(t, sc, opts)
	if len(e.instances) != 2 {
		t.Fatalf("%d schedulers, want one per pool (a, b)", len(e.instances))
	}
	want := model.Topology{Name: "zone-rack", Levels: []model.TopologyLevel{
		{NodeLabel: "topology.kubernetes.io/zone", Alias: "zone"}, {NodeLabel: "example.com/rack", Alias: "rack"}}}
	for _, in := range e.instances {
		snapshot, _, err := in.loop.Builder.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := snapshot.Topology("zone-rack")
		if got == nil {
			t.Errorf("pool %s: the snapshot has no topology zone-rack", in.pool)
			continue
		}
		if fmt.Sprint(*got) != fmt.Sprint(want) {
			t.Errorf("pool %s: topology zone-rack is %+v, want %+v", in.pool, *got, want)
		}
		if len(snapshot.Nodes) != 1 {
			t.Fatalf("pool %s: %d nodes, want its one", in.pool, len(snapshot.Nodes))
		}
		node := snapshot.Nodes[0]
		pool := node.Labels["kai.scheduler/node-pool"]
		wantLabels := map[string]string{"kai.scheduler/node-pool": pool, "topology.kubernetes.io/zone": pool, "example.com/rack": pool + "-1"}
		if !maps.Equal(node.Labels, wantLabels) {
			t.Errorf("pool %s: node %s has labels %v, want %v", in.pool, node.Name, node.Labels, wantLabels)
		}
		if domains := snapshot.Domains(got, 1); len(domains) != 1 || domains[0].Path != pool+"/"+pool+"-1" {
			t.Errorf("pool %s: racks %+v, want the one of its node", in.pool, domains)
		}
	}
	if err := e.verifySnapshot(ctx); err != nil {
		t.Fatalf("store and lists disagree: %v", err)
	}
	// A whole run checking the store against the lists before every cycle.
	opts.VerifySnapshots = true
	r, err := Run(ctx, sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	if r.Totals.Completed != 1 {
		t.Errorf("%d jobs completed, want 1", r.Totals.Completed)
	}
}
