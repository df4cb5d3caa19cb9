package allocate_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/metrics"
	. "github.com/kai-minruntime/kai-scheduler/pkg/testing/harness"
)

const (
	zoneLabel = "topology.kubernetes.io/zone"
	rackLabel = "example.com/rack"
)

// rackNode is a node of gpus GPUs in a rack of a zone.
func rackNode(name, zone, rack string, gpus int64) *NodeBuilder {
	return Node(name).GPUs(gpus).Label(zoneLabel, zone).Label(rackLabel, rack)
}

// nodesOf maps each bound pod of a round to its node.
func nodesOf(round Round) map[string]string {
	out := map[string]string{}
	for _, b := range round.Binds {
		out[b.Pod] = b.Node
	}
	return out
}

var _ = Describe("Topology-aware placement", func() {
	// Upstream's documented example: zone A has 5 free GPUs in racks of 2, 1, 1 and 1, zone B
	// 6 in three racks of 2.
	upstreamExample := func() *Harness {
		return New(allocateOnly).
			Topology("dc", zoneLabel+"=zone", rackLabel+"=rack").
			Nodes(rackNode("a1", "zone-a", "a1", 2), rackNode("a2", "zone-a", "a2", 1),
				rackNode("a3", "zone-a", "a3", 1), rackNode("a4", "zone-a", "a4", 1),
				rackNode("b1", "zone-b", "b1", 2), rackNode("b2", "zone-b", "b2", 2), rackNode("b3", "zone-b", "b3", 2)).
			Queues(Queue("default"))
	}

	It("puts a 3-pod job with required zone and preferred rack in the fuller zone, filling one rack before the next", func() {
		h := upstreamExample().Jobs(Job("train").Pods(3).MinMember(3).GPUs(1).InTopology("dc", "zone", "rack"))
		Expect(nodesOf(h.RunCycle(ctx))).To(Equal(map[string]string{
			"ns/train-0": "a1", "ns/train-1": "a1", "ns/train-2": "a2"}))
	})

	It("puts a job that fits one rack in the fullest rack that fits", func() {
		h := upstreamExample().Jobs(Job("pair").Pods(2).MinMember(2).GPUs(1).InTopology("dc", "rack", ""))
		Expect(nodesOf(h.RunCycle(ctx))).To(Equal(map[string]string{"ns/pair-0": "a1", "ns/pair-1": "a1"}))
	})

	It("names levels by node label as well as by alias", func() {
		h := upstreamExample().Jobs(Job("train").Pods(3).MinMember(3).GPUs(1).InTopology("dc", zoneLabel, rackLabel))
		Expect(nodesOf(h.RunCycle(ctx))).To(HaveLen(3))
	})

	It("keeps a required-rack gang waiting, with the level and the closest rack named, when no rack can hold it", func() {
		h := upstreamExample().Jobs(Job("wide").Pods(3).MinMember(3).GPUs(1).InTopology("dc", "rack", ""))
		round := h.RunCycle(ctx)
		Expect(round.Binds).To(BeEmpty())
		Expect(round.Reasons("wide")).To(ContainElement(ContainSubstring("does not fit in one rack of topology dc: no rack has room for it")))
		Expect(h.Metrics.Recorded().TopologyWaiting).To(Equal(map[metrics.TopologySeries]int{{Topology: "dc", Level: "rack"}: 1}),
			"the metric of jobs waiting on topology counts it")
	})

	It("spreads a preferred-only gang over the cluster when no domain holds it", func() {
		h := upstreamExample().Jobs(Job("soft").Pods(7).MinMember(7).GPUs(1).InTopology("dc", "", "zone"))
		round := h.RunCycle(ctx)
		Expect(round.BoundPods()).To(Equal(map[string]int{"soft": 7}))
		zones := map[string]int{}
		for _, node := range nodesOf(round) {
			zones[node[:1]]++
		}
		Expect(zones).To(Equal(map[string]int{"b": 6, "a": 1}), "the roomiest zone first, so that it spans as few as possible")
	})

	It("keeps nodes outside the topology out of a constrained gang", func() {
		h := New(allocateOnly).
			Topology("dc", zoneLabel+"=zone", rackLabel+"=rack").
			Nodes(Node("unlabelled").GPUs(8), Node("half").GPUs(8).Label(zoneLabel, "zone-a"), rackNode("r1", "zone-a", "r1", 2)).
			Queues(Queue("default")).
			Jobs(Job("train").Pods(4).MinMember(4).GPUs(1).InTopology("dc", "zone", ""))
		round := h.RunCycle(ctx)
		Expect(round.Binds).To(BeEmpty(), "a node lacking a level's label is in no domain")
		Expect(round.Reasons("train")).To(ContainElement(ContainSubstring("no zone has room for it")))
	})

	It("grows a running elastic gang only inside the rack it runs in", func() {
		h := New(allocateOnly).
			Topology("dc", zoneLabel+"=zone", rackLabel+"=rack").
			Nodes(rackNode("a1", "zone-a", "a1", 2), rackNode("b1", "zone-b", "b1", 8)).
			Queues(Queue("default")).
			Jobs(Job("elastic").Pods(4).MinMember(1).GPUs(1).InTopology("dc", "rack", "").Running("a1"))
		round := h.RunCycle(ctx)
		Expect(nodesOf(round)).To(Equal(map[string]string{"ns/elastic-1": "a1"}), "the rack's last GPU, and nothing in the roomier rack")
	})

	It("tells a job why when its topology or level does not exist", func() {
		h := upstreamExample().Jobs(
			Job("typo").GPUs(1).InTopology("dc-typo", "rack", ""),
			Job("nolevel").GPUs(1).InTopology("dc", "block", ""))
		round := h.RunCycle(ctx)
		Expect(round.Binds).To(BeEmpty())
		Expect(round.Reasons("typo")).To(ContainElement(ContainSubstring(`names topology "dc-typo", which does not exist`)))
		Expect(round.Reasons("nolevel")).To(ContainElement(ContainSubstring(`required level "block", which topology "dc" does not have (levels: zone, rack)`)))
	})

	It("places each constrained sub-group in a domain of its own inside the job's", func() {
		h := New(allocateOnly).
			Topology("dc", zoneLabel+"=zone", rackLabel+"=rack").
			Nodes(rackNode("a1", "zone-a", "a1", 2), rackNode("a2", "zone-a", "a2", 2),
				rackNode("b1", "zone-b", "b1", 4), rackNode("b2", "zone-b", "b2", 4)).
			Queues(Queue("default")).
			Jobs(Job("replicas").GPUs(1).InTopology("dc", "zone", "").
				SubGroup("r0", 2, 2).SubGroupInTopology("dc", "rack", "").
				SubGroup("r1", 2, 2).SubGroupInTopology("dc", "rack", ""))
		placed := nodesOf(h.RunCycle(ctx))
		Expect(placed).To(HaveLen(4))
		racks := map[string]map[string]bool{}
		for pod, node := range placed {
			group := "r0"
			if pod >= "ns/replicas-2" {
				group = "r1"
			}
			if racks[group] == nil {
				racks[group] = map[string]bool{}
			}
			racks[group][node] = true
		}
		Expect(racks["r0"]).To(HaveLen(1), fmt.Sprint(placed))
		Expect(racks["r1"]).To(HaveLen(1), fmt.Sprint(placed))
		for _, node := range placed {
			Expect(node[:1]).To(Equal("a"), "the fuller zone that holds both replicas")
		}
	})
})
