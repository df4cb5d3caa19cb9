package allocate

import (
	"fmt"
	"strings"

	"github.com/kai-minruntime/kai-scheduler/pkg/plural"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// topologyPlacer places a gang as its job's topology constraints ask: each constrained
// group (the job, a sub-group) inside one domain, its sub-groups' domains inside its own,
// trying the candidate domains in the order actions.TopologyGroup.Candidates gives and
// taking the first where every pod fits.
type topologyPlacer struct {
	ssn      *framework.Session
	st       *framework.Statement
	search   *actions.NodeSearch
	topo     *actions.GangTopology
	capacity actions.Capacity
	// pods are the gang's pods per group, in gang order; total counts them all.
	pods  map[*actions.TopologyGroup][]*model.PodInfo
	total int
	// every lists every node's position: the region of an unconstrained group.
	every []int
}

// placeByTopology places pods (a gang, or one pod a running gang grows by) in capacity as
// the job's topology asks, or returns why it could not; on failure the statement may hold
// part of the gang, which the caller discards.
func placeByTopology(ssn *framework.Session, st *framework.Statement, search *actions.NodeSearch,
	topo *actions.GangTopology, pods []*model.PodInfo, capacity actions.Capacity) string {
	p := &topologyPlacer{ssn: ssn, st: st, search: search, topo: topo, capacity: capacity,
		pods: map[*actions.TopologyGroup][]*model.PodInfo{}, total: len(pods)}
	for _, pod := range pods {
		g := topo.GroupOf(pod)
		p.pods[g] = append(p.pods[g], pod)
	}
	if _, reason := p.group(topo.Root(), actions.Region{}); reason != "" {
		return fmt.Sprintf("gang of %s does not fit %s", plural.Count(len(pods), "pod", "pods"), reason)
	}
	return ""
}

// group places the group's pods and its sub-groups' in one of its candidate regions inside
// within. It returns how many pods it placed and, when it failed, why.
func (p *topologyPlacer) group(tg *actions.TopologyGroup, within actions.Region) (int, string) {
	if p.count(tg) == 0 {
		return 0, "" // none of its pods is in this gang
	}
	request := p.request(tg)
	snap := p.ssn.Snapshot()
	levels := tg.Candidates(snap, within, request, freeIn(snap, p.capacity))
	type closest struct {
		placed       int
		region, why  string
		triedDomains []string
	}
	var best closest
	for _, regions := range levels {
		for _, r := range regions {
			if r.Domain != nil {
				best.triedDomains = append(best.triedDomains, r.Name)
			}
			cp := p.st.Checkpoint()
			placed, why := p.inRegion(tg, r)
			if why == "" {
				return placed, ""
			}
			p.st.Rollback(cp)
			if best.region == "" && best.why == "" || placed > best.placed {
				best.placed, best.region, best.why = placed, r.Name, why
			}
		}
	}
	if tg.Topology == nil {
		return best.placed, best.why // the cluster: the pod's own reason says it all
	}
	where := "in " + tg.Describe()
	if len(best.triedDomains) == 0 {
		return 0, fmt.Sprintf("%s: no %s has room for it", where, tg.Topology.LevelName(deepestLevel(tg)))
	}
	return best.placed, fmt.Sprintf("%s: %s tried; closest, %s: %s", where,
		plural.Count(len(best.triedDomains), "domain", "domains"), best.region, best.why)
}

// deepestLevel is the narrowest level the group's candidates come from.
func deepestLevel(tg *actions.TopologyGroup) int {
	if tg.Preferred >= 0 {
		return tg.Preferred
	}
	return tg.Required
}

// inRegion places the group's sub-groups, each in its own domain inside r, then its own
// pods in r, those of its preferred level's roomiest domains first.
func (p *topologyPlacer) inRegion(tg *actions.TopologyGroup, r actions.Region) (int, string) {
	placed := 0
	for _, child := range p.topo.Children(tg) {
		n, why := p.group(child, r)
		placed += n
		if why != "" {
			return placed, "sub-group " + child.Name + "'s " + strings.TrimPrefix(why, "in ")
		}
	}
	snap := p.ssn.Snapshot()
	if r.Nodes == nil {
		r.Nodes = p.everyNode()
	}
	nodes := r.Nodes
	own := p.pods[tg]
	var rank func(int) int
	if len(own) > 0 {
		key := model.GPU
		if p.request(tg).Get(model.GPU) == 0 {
			key = model.CPU
		}
		rank = tg.PreferredRank(snap, r, freeIn(snap, p.capacity), key)
	}
	for _, pod := range own {
		node := p.search.BestNodeIn(pod, p.capacity, nodes, rank)
		if node == nil {
			return placed, fmt.Sprintf("pod %d of %d fits on no node (%s)", placed+1, p.total, p.search.Explain())
		}
		var err error
		if p.capacity == actions.IdleNow {
			err = p.st.Allocate(pod, node.Name)
		} else {
			err = p.st.Pipeline(pod, node.Name)
		}
		if err != nil {
			return placed, err.Error()
		}
		placed++
	}
	return placed, ""
}

// request sums what the group's pods and its sub-groups' ask.
func (p *topologyPlacer) request(tg *actions.TopologyGroup) model.Resources {
	total := model.Request(p.pods[tg])
	for _, child := range p.topo.Children(tg) {
		total = total.Add(p.request(child))
	}
	return total
}

// freeIn is what each node (by position) has free in capacity. (A function of its own: a
// closure over the placer would carry the caller's statement to the heap.)
func freeIn(snap *model.Snapshot, capacity actions.Capacity) func(int) model.Resources {
	return func(i int) model.Resources { return capacity.Free(snap.Nodes[i]) }
}

// count is how many of the gang's pods the group and its sub-groups hold.
func (p *topologyPlacer) count(tg *actions.TopologyGroup) int {
	n := len(p.pods[tg])
	for _, child := range p.topo.Children(tg) {
		n += p.count(child)
	}
	return n
}

func (p *topologyPlacer) everyNode() []int {
	if p.every == nil {
		p.every = make([]int, len(p.ssn.Snapshot().Nodes))
		for i := range p.every {
			p.every[i] = i
		}
	}
	return p.every
}
