package input_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/kai/v1alpha1"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
)

// zoneRack is a Topology of zones and racks, with hosts as its narrowest level.
const zoneRack = `apiVersion: kai.scheduler/v1alpha1
kind: Topology
metadata: {name: zone-rack}
spec:
  levels:
  - {nodeLabel: topology.kubernetes.io/zone, alias: zone}
  - {nodeLabel: example.com/rack, alias: rack}
  - {nodeLabel: kubernetes.io/hostname}
---
`

// labelledNode is a node of one GPU in a zone and a rack.
func labelledNode(name, zone, rack string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Node
metadata:
  name: %[1]s
  labels: {topology.kubernetes.io/zone: %[2]s, example.com/rack: %[3]s, kubernetes.io/hostname: %[1]s}
status: {allocatable: {cpu: "8", nvidia.com/gpu: "1"}}
---
`, name, zone, rack)
}

// A Topology is read as written, beside the nodes whose labels it names, which keep them.
func TestTopologiesAreRead(t *testing.T) {
	flat := "apiVersion: kai.scheduler/v1alpha1\nkind: Topology\nmetadata: {name: by-rack}\nspec: {levels: [{nodeLabel: example.com/rack}]}\n---\n"
	sc, err := input.Parse([]byte(flat + zoneRack + labelledNode("a1", "a", "a-1") + labelledNode("b1", "b", "b-1")))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, topology := range sc.Topologies {
		got = append(got, fmt.Sprintf("%s %+v", topology.Name, topology.Spec.Levels))
	}
	want := []string{ // in name order
		"by-rack [{NodeLabel:example.com/rack Alias:}]",
		"zone-rack [{NodeLabel:topology.kubernetes.io/zone Alias:zone} {NodeLabel:example.com/rack Alias:rack} {NodeLabel:kubernetes.io/hostname Alias:}]",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("topologies\n got %q\nwant %q", got, want)
	}
	wantLabels := map[string]string{"topology.kubernetes.io/zone": "b", "example.com/rack": "b-1", v1alpha1.HostnameLabel: "b1"}
	if len(sc.Nodes) != 2 || !reflect.DeepEqual(sc.Nodes[1].Labels, wantLabels) {
		t.Errorf("node b1's labels are %v, want %v", sc.Nodes[1].Labels, wantLabels)
	}
}

// topologyDoc is a Topology named t whose spec follows.
func topologyDoc(spec string) string {
	return "apiVersion: kai.scheduler/v1alpha1\nkind: Topology\nmetadata: {name: t}\n" + spec + "\n---\n"
}

// What the API server refuses of a Topology — its schema and each of its validation rules —
// kai-sim refuses too, naming the document, the level and the rule.
func TestBadTopologiesAreRefused(t *testing.T) {
	levels := func(n int) string {
		var l []string
		for i := range n {
			l = append(l, fmt.Sprintf("{nodeLabel: l%d}", i))
		}
		return "spec: {levels: [" + strings.Join(l, ", ") + "]}"
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"no name", "apiVersion: kai.scheduler/v1alpha1\nkind: Topology\nmetadata: {}\nspec: {levels: [{nodeLabel: rack}]}\n",
			"document 2 (Topology): metadata.name: a Topology needs a name, which a PodGroup's topologyConstraint.topology names"},
		{"no spec", topologyDoc(""),
			"document 2 (Topology t): spec: required: a Topology's spec.levels name its levels' node labels, widest first (1 to 16 levels)"},
		{"no levels written", topologyDoc("spec: {}"),
			"document 2 (Topology t): spec.levels: required: a Topology names its levels' node labels, widest first (1 to 16 levels)"},
		{"no levels", topologyDoc("spec: {levels: []}"),
			"document 2 (Topology t): spec.levels: has no levels; a Topology has 1 to 16"},
		{"17 levels", topologyDoc(levels(17)),
			"document 2 (Topology t): spec.levels: has 17 levels; a Topology has 1 to 16"},
		{"a level without a label", topologyDoc("spec: {levels: [{nodeLabel: zone}, {alias: rack}]}"),
			"document 2 (Topology t): spec.levels[1].nodeLabel: required: the node label whose value names a node's domain at this level"},
		{"a label too long", topologyDoc("spec: {levels: [{nodeLabel: " + strings.Repeat("x", 318) + "}]}"),
			"document 2 (Topology t): spec.levels[0].nodeLabel: has 318 characters, more than 317"},
		{"an empty alias", topologyDoc(`spec: {levels: [{nodeLabel: zone, alias: ""}]}`),
			"document 2 (Topology t): spec.levels[0].alias: is empty: name the level, or leave the alias out"},
		{"an alias too long", topologyDoc("spec: {levels: [{nodeLabel: zone, alias: " + strings.Repeat("z", 64) + "}]}"),
			"document 2 (Topology t): spec.levels[0].alias: has 64 characters, more than 63"},
		{"a label twice", topologyDoc("spec: {levels: [{nodeLabel: zone}, {nodeLabel: rack}, {nodeLabel: zone}]}"),
			`document 2 (Topology t): spec.levels[2].nodeLabel: levels must name distinct node labels: "zone" is also spec.levels[0]'s`},
		{"an alias twice", topologyDoc("spec: {levels: [{nodeLabel: zone, alias: z}, {nodeLabel: rack, alias: z}]}"),
			`document 2 (Topology t): spec.levels[1].alias: levels must have distinct aliases: "z" is also spec.levels[0]'s`},
		{"an alias that is another level's label", topologyDoc("spec: {levels: [{nodeLabel: zone, alias: rack}, {nodeLabel: rack}]}"),
			`document 2 (Topology t): spec.levels[0].alias: an alias must not be another level's node label: "rack" is spec.levels[1]'s nodeLabel`},
		{"an alias that is its own label", topologyDoc("spec: {levels: [{nodeLabel: zone, alias: zone}]}"),
			`document 2 (Topology t): spec.levels[0].alias: an alias must not be another level's node label: "zone" is this level's own nodeLabel`},
		{"hosts above racks", topologyDoc("spec: {levels: [{nodeLabel: kubernetes.io/hostname}, {nodeLabel: rack}]}"),
			"document 2 (Topology t): spec.levels[0].nodeLabel: kubernetes.io/hostname may only be the last level, here spec.levels[1] (a host is the narrowest domain)"},
		{"a misspelt field", topologyDoc("spec: {levels: [{nodeLable: zone}]}"),
			`document 2 (Topology t): unknown field "nodeLable"`},
		{"a simulation annotation", strings.Replace(topologyDoc("spec: {levels: [{nodeLabel: zone}]}"), "{name: t}", "{name: t, annotations: {sim.kai.scheduler/duration: 1h}}", 1),
			"document 2 (Topology t): line 10: metadata.annotations.sim.kai.scheduler/duration: kai-sim reads it on a PodGroup, not on a Topology"},
		{"the same name twice", topologyDoc("spec: {levels: [{nodeLabel: zone}]}") + topologyDoc("spec: {levels: [{nodeLabel: rack}]}"),
			"document 3 (Topology t): the same Topology as document 2; names must be unique"},
		{"another version", "apiVersion: kai.scheduler/v1\nkind: Topology\nmetadata: {name: t}\n",
			`document 2: unsupported kind "Topology" of apiVersion "kai.scheduler/v1" (want v1 Node or Pod, scheduling.run.ai/v2 Queue, ` +
				"scheduling.run.ai/v2alpha2 PodGroup, scheduling.k8s.io/v1 PriorityClass, kai.scheduler/v1alpha1 Topology, or a workload"},
		// Not a workload of another group: the group is the scheduler's own.
		{"a misspelt kind", "apiVersion: kai.scheduler/v1alpha1\nkind: Topolgy\nmetadata: {name: t}\n",
			`document 2: unsupported kind "Topolgy" of apiVersion "kai.scheduler/v1alpha1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := input.Parse([]byte(labelledNode("a1", "a", "a-1") + tc.doc))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error\n got %v\nwant %s", err, tc.want)
			}
		})
	}
}

// Sixteen levels, the most there may be, and hosts as the last are allowed.
func TestTopologyLimitsAreAllowed(t *testing.T) {
	var l []string
	for i := range 15 {
		l = append(l, fmt.Sprintf("{nodeLabel: l%d, alias: a%d}", i, i))
	}
	l = append(l, "{nodeLabel: kubernetes.io/hostname, alias: host}")
	sc, err := input.Parse([]byte(labelledNode("a1", "a", "a-1") + topologyDoc("spec: {levels: ["+strings.Join(l, ", ")+"]}")))
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Topologies) != 1 || len(sc.Topologies[0].Spec.Levels) != 16 {
		t.Fatalf("topologies %+v, want one of 16 levels", sc.Topologies)
	}
}
