package scale

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// Topology-aware gangs at scale: the nodes labelled as racks of 16 in blocks of 4 racks,
// Topology dc over them (levels block and rack), and upstream's fill and a reclaim for a
// rack-sized gang, every job asking for one rack. At make scale's size each runs beside its
// twin: the same labelled cluster, Topology and jobs, without the constraint, so that the
// pair's ratio is what the constraint costs.
//
// Racks do not follow node names, as on a cloud whose node names are addresses: nodes next
// to each other by name are in different racks, so a gang kept in one rack is the scheduler's
// doing, not the node order's. The fill's jobs are gangs of 16 one-GPU pods (two nodes'
// worth) where upstream's are one pod each: a one-pod job, or one that fits a node, is inside
// one rack wherever it goes, and the check that no gang spans two racks would hold whatever
// the scheduler did. Its pods and GPUs are the fill's (every GPU, a pod each, created while
// the scheduler is off) when the last, short rack has an even number of nodes.

const (
	blockLabel    = "example.com/block"
	rackLabel     = "example.com/rack"
	nodesPerRack  = 16
	racksPerBlock = 4
	// topologyName is the Topology of the racks; constraints name its levels by alias.
	topologyName = "dc"
	// fillGang is how many one-GPU pods each job of the fill has.
	fillGang = 2 * gpusPerNode
)

// position is node i's place in rack order: racks are runs of nodesPerRack positions (the
// last one short when the nodes do not divide), blocks runs of racksPerBlock racks. Nodes
// next to each other by name are a stride apart, more than a rack, and the stride is prime to
// the node count, so that every node has a position of its own.
func position(i int) int {
	stride := nodesPerRack + 1
	for gcd(stride, settings.nodes) != 1 {
		stride++
	}
	return i * stride % settings.nodes
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// rackOf is node i's block and rack, as labelled.
func rackOf(i int) (block, rack string) {
	p := position(i)
	return fmt.Sprintf("block-%02d", p/(nodesPerRack*racksPerBlock)), fmt.Sprintf("rack-%03d", p/nodesPerRack)
}

// fillJobs is how many gangs of the fill the racks hold: every GPU's worth, but for a short
// last rack's odd node.
func fillJobs() int {
	perRack := nodesPerRack * gpusPerNode / fillGang
	return settings.nodes/nodesPerRack*perRack + settings.nodes%nodesPerRack*gpusPerNode/fillGang
}

// inRack asks a job to run inside one rack of Topology dc; nil, no constraint, for a twin.
func inRack(constrained bool) *v2alpha2.TopologyConstraint {
	if !constrained {
		return nil
	}
	return &v2alpha2.TopologyConstraint{Topology: topologyName, RequiredTopologyLevel: "rack"}
}

// twin names a scenario's unconstrained twin, and skips it below make scale's size, where
// there is no figure to compare.
func twin(name string, constrained bool) string {
	if constrained {
		return name
	}
	if settings.nodes < 500 {
		Skip("the unconstrained twin is a comparison for make scale (SCALE_NODES >= 500)")
	}
	return name + "-unconstrained"
}

// inRacks labels every node with its block and rack and creates Topology dc over them; the
// spec's end removes both. Called before the scheduler starts, which then sees the racks in
// its first snapshot.
func inRacks() {
	label := func(i int, block, rack any) error {
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{blockLabel: block, rackLabel: rack}}})
		if err != nil {
			return err
		}
		_, err = cluster.clientset.CoreV1().Nodes().Patch(cluster.ctx, nodeName(i), types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	}
	Expect(inParallel(settings.nodes, func(i int) error {
		block, rack := rackOf(i)
		return label(i, block, rack)
	})).To(Succeed())
	topology := builders.MakeTopology(topologyName, blockLabel+"=block", rackLabel+"=rack")
	Expect(cluster.client.Create(cluster.ctx, topology)).To(Succeed())
	DeferCleanup(func() {
		Expect(client.IgnoreNotFound(cluster.client.Delete(cluster.ctx, topology))).To(Succeed())
		Expect(inParallel(settings.nodes, func(i int) error { return label(i, nil, nil) })).To(Succeed()) // null removes a label
	})
}

// placement is where a scenario's jobs run, read from the API server: each bound pod's
// node and that node's rack labels.
type placement struct {
	// racks are the racks ("block-00/rack-000") of each job's bound pods; nodes its pods' nodes.
	racks map[string][]string
	nodes map[string][]string
	// rackOfNode is each node's rack; "" for a node outside the topology.
	rackOfNode map[string]string
}

// readPlacement lists the namespace's pods and every node.
func readPlacement(namespace string) placement {
	nodes := &v1.NodeList{}
	Expect(cluster.client.List(cluster.ctx, nodes)).To(Succeed())
	p := placement{racks: map[string][]string{}, nodes: map[string][]string{}, rackOfNode: map[string]string{}}
	for _, n := range nodes.Items {
		block, hasBlock := n.Labels[blockLabel]
		rack, hasRack := n.Labels[rackLabel]
		if hasBlock && hasRack {
			p.rackOfNode[n.Name] = block + "/" + rack
		}
	}
	pods := &v1.PodList{}
	Expect(cluster.client.List(cluster.ctx, pods, client.InNamespace(namespace))).To(Succeed())
	for _, pod := range pods.Items {
		if pod.Spec.NodeName == "" || pod.DeletionTimestamp != nil {
			continue
		}
		job := pod.Annotations[scheduling.PodGroupNameAnnotation]
		p.nodes[job] = append(p.nodes[job], pod.Spec.NodeName)
		rack := p.rackOfNode[pod.Spec.NodeName]
		if rack == "" {
			rack = "(outside the topology: " + pod.Spec.NodeName + ")"
		}
		if !slices.Contains(p.racks[job], rack) {
			p.racks[job] = append(p.racks[job], rack)
		}
	}
	return p
}

// spanning lists the jobs named with prefix whose pods run in more than one rack (or outside
// the racks), each with its racks.
func (p placement) spanning(prefix string) []string {
	var out []string
	for job, racks := range p.racks {
		if strings.HasPrefix(job, prefix) && (len(racks) > 1 || strings.HasPrefix(racks[0], "(")) {
			slices.Sort(racks)
			out = append(out, job+" in "+strings.Join(racks, ", "))
		}
	}
	slices.Sort(out)
	return out
}

// evictedOn counts, per node, the namespace's pods the scheduler evicted there, as the
// observer saw them (they are gone from the API server).
func (o *observer) evictedOn(namespace string) map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	nodes := map[string]int{}
	for _, p := range o.pods {
		if p.namespace == namespace && isEvicted(p) {
			nodes[p.node]++
		}
	}
	return nodes
}

// report says a count the result's figures (seconds) have no place for, in the run's output.
func report(r *run, what string, n int) {
	line := fmt.Sprintf("%s: %s: %d", r.name, what, n)
	fmt.Fprintln(GinkgoWriter, line)
	AddReportEntry(r.name, line, ReportEntryVisibilityAlways)
}

var _ = Describe("Topology at scale", func() {
	for _, constrained := range []bool{true, false} {
		what := "each asking for one rack of the topology"
		if !constrained {
			what = "the same gangs with no topology constraint, on the same racks"
		}

		It("fills the racks with gangs of one-GPU pods created while the scheduler was off, "+what, func() {
			r := newRun(twin("fill-topology", constrained))
			inRacks()
			r.createQueue("team", float64(gpus()), 0)
			count := fillJobs()
			r.submit(jobs{queue: "team", prefix: "job", count: count, pods: fillGang, gpus: 1, topology: inRack(constrained)})
			began := time.Now()
			r.startScheduler()
			bound := r.waitBound("team", count*fillGang)
			running := r.waitRunning("team", count*fillGang)
			r.result.Headline = "all running"
			r.result.Figures["all running"] = since(began, running)
			r.result.Figures["all bound"] = since(began, bound)

			placed := readPlacement(r.namespace)
			Expect(placed.racks).To(HaveLen(count), "every job runs")
			spanning := placed.spanning("job")
			report(r, "gangs in more than one rack", len(spanning))
			if constrained {
				Expect(spanning).To(BeEmpty(), "no gang asking for one rack runs in two")
			}
			r.finish()
		})

		It("reclaims one rack for a gang of 16 8-GPU pods from a full cluster, "+what, func() {
			r := newRun(twin("reclaim-topology", constrained))
			inRacks()
			r.fillWithBorrowers(0)
			began, _ := r.submit(jobs{queue: "owner", prefix: "gang", count: 1, pods: nodesPerRack, gpus: gpusPerNode, topology: inRack(constrained)})
			bound := r.waitBound("owner", nodesPerRack)
			running := r.waitRunning("owner", nodesPerRack)
			r.result.Headline = "all running"
			r.result.Figures["all running"] = since(began, running)
			r.result.Figures["all bound"] = since(began, bound)

			placed := readPlacement(r.namespace)
			gang := placed.nodes["gang-00000"]
			Expect(gang).To(HaveLen(nodesPerRack))
			evicted := cluster.observer.evictedOn(r.namespace)
			total := 0
			for node, n := range evicted {
				total += n
				Expect(gang).To(ContainElement(node), "%d borrowers evicted from %s, which the gang does not use", n, node)
			}
			Expect(total).To(Equal(nodesPerRack*gpusPerNode), "the borrowers on the gang's nodes evicted, and no other")
			report(r, "racks the gang runs in", len(placed.racks["gang-00000"]))
			if constrained {
				Expect(placed.spanning("gang")).To(BeEmpty(), "the gang runs inside one rack")
				rack := placed.racks["gang-00000"][0]
				for node := range evicted {
					Expect(placed.rackOfNode[node]).To(Equal(rack), "every eviction is on the gang's rack")
				}
			}
			r.finish()
		})
	}
})
