package actions

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// GangTopology is a job's topology constraints — its own and its sub-groups' — resolved
// against the snapshot: where each part of its gang may go. It is the one home of what a
// constraint means; allocate places by it, reclaim and preempt free one of its domains.
type GangTopology struct {
	snap *model.Snapshot
	// root is the job's own constraint (unconstrained when the job sets none but a
	// sub-group does); groups maps each sub-group to the nearest constrained group above or at it.
	root   *TopologyGroup
	groups map[string]*TopologyGroup
}

// TopologyGroup is the job, or one of its sub-groups, with a constraint: its pods and those of
// its sub-groups without one of their own run inside its domain.
type TopologyGroup struct {
	// Name is the sub-group's name; "" for the job.
	Name string
	// Topology is nil for a job that sets no constraint of its own.
	Topology *model.Topology
	// Required and Preferred are level indexes in Topology; -1 for none.
	Required, Preferred int
	// Fixed is, for a required level, the domain the group's placed pods already run in: a
	// running gang grows only there.
	Fixed *model.Domain
	// parent is the group it is nested in (nil for the job's), children those nested in it.
	parent   *TopologyGroup
	children []*TopologyGroup
}

// Region is a set of nodes a group may be placed in: a domain, or every node.
type Region struct {
	// Name says which domain ("rack zone-a/rack-1"); "" for the whole cluster.
	Name string
	// Nodes are positions in the snapshot's nodes, ascending; nil for every node.
	Nodes []int
	// Domain is the region's domain (nil for the whole cluster).
	Domain *model.Domain
}

// ResolveTopology reads the job's constraints against the snapshot's topologies. It returns
// nil for a job that asks nothing of the topology, and an error naming what is wrong when a
// constraint cannot be met by any placement: no such topology or level, or a running gang
// already spread over several domains of its required level.
func ResolveTopology(snap *model.Snapshot, job *model.JobInfo) (*GangTopology, error) {
	constrained := job.Topology != nil
	for _, sg := range job.SubGroups {
		constrained = constrained || sg.Topology != nil
	}
	if !constrained {
		return nil, nil
	}
	g := &GangTopology{snap: snap, groups: map[string]*TopologyGroup{}}
	var err error
	if g.root, err = resolveGroup(snap, "", job.Topology); err != nil {
		return nil, err
	}
	// Each sub-group joins the nearest constrained group above or at it; sub-groups come
	// sorted by name and form a tree (model.UntangleSubGroups), so walking up ends.
	byName := make(map[string]*model.SubGroupInfo, len(job.SubGroups))
	for i := range job.SubGroups {
		byName[job.SubGroups[i].Name] = &job.SubGroups[i]
	}
	var groupOf func(name string) (*TopologyGroup, error)
	groupOf = func(name string) (*TopologyGroup, error) {
		sg := byName[name]
		if sg == nil {
			return g.root, nil
		}
		if tg, ok := g.groups[name]; ok {
			return tg, nil
		}
		parent, err := groupOf(sg.Parent)
		if err != nil {
			return nil, err
		}
		tg := parent
		if sg.Topology != nil {
			if tg, err = resolveGroup(snap, sg.Name, sg.Topology); err != nil {
				return nil, err
			}
			tg.parent, parent.children = parent, append(parent.children, tg)
		}
		g.groups[name] = tg
		return tg, nil
	}
	for _, sg := range job.SubGroups {
		if _, err := groupOf(sg.Name); err != nil {
			return nil, err
		}
	}
	if err := g.fix(job); err != nil {
		return nil, err
	}
	return g, nil
}

// resolveGroup reads one constraint; nil constraint gives an unconstrained group.
func resolveGroup(snap *model.Snapshot, name string, c *model.TopologyConstraint) (*TopologyGroup, error) {
	tg := &TopologyGroup{Name: name, Required: -1, Preferred: -1}
	if c == nil {
		return tg, nil
	}
	whose := "its topologyConstraint"
	if name != "" {
		whose = "sub-group " + name + "'s topologyConstraint"
	}
	if c.Topology == "" {
		return nil, fmt.Errorf("%s names levels but no topology", whose)
	}
	if tg.Topology = snap.Topology(c.Topology); tg.Topology == nil {
		return nil, fmt.Errorf("%s names topology %q, which does not exist", whose, c.Topology)
	}
	level := func(field, name string) (int, error) {
		if name == "" {
			return -1, nil
		}
		if l := tg.Topology.Level(name); l >= 0 {
			return l, nil
		}
		return -1, fmt.Errorf("%s asks for %s level %q, which topology %q does not have (levels: %s)",
			whose, field, name, tg.Topology.Name, levelNames(tg.Topology))
	}
	var err error
	if tg.Required, err = level("required", c.Required); err != nil {
		return nil, err
	}
	if tg.Preferred, err = level("preferred", c.Preferred); err != nil {
		return nil, err
	}
	if tg.Preferred >= 0 && tg.Preferred <= tg.Required {
		tg.Preferred = -1 // no wider than what is required: the requirement says more
	}
	return tg, nil
}

func levelNames(t *model.Topology) string {
	names := make([]string, len(t.Levels))
	for i := range t.Levels {
		names[i] = t.LevelName(i)
	}
	return strings.Join(names, ", ")
}

// GroupOf returns the constrained group a pod is placed with.
func (g *GangTopology) GroupOf(pod *model.PodInfo) *TopologyGroup {
	if tg, ok := g.groups[pod.SubGroup]; ok {
		return tg
	}
	return g.root
}

// HasRequired reports whether the job or one of its sub-groups requires a level: whether
// reclaim and preempt must confine its pods.
func (g *GangTopology) HasRequired() bool {
	var requires func(tg *TopologyGroup) bool
	requires = func(tg *TopologyGroup) bool {
		return tg.Required >= 0 || slices.ContainsFunc(tg.children, requires)
	}
	return requires(g.root)
}

// Under reports whether the pod is placed with tg or with a group nested in it.
func (g *GangTopology) Under(pod *model.PodInfo, tg *TopologyGroup) bool {
	for at := g.GroupOf(pod); at != nil; at = at.parent {
		if at == tg {
			return true
		}
	}
	return false
}

// Children are the constrained sub-groups placed inside the group's domain.
func (g *GangTopology) Children(tg *TopologyGroup) []*TopologyGroup { return tg.children }

// Root is the job's own group.
func (g *GangTopology) Root() *TopologyGroup { return g.root }

// holds reports whether a pod's status keeps it on its node for the gang: placed, promised
// or running.
func holds(p *model.PodInfo) bool {
	return p.Status.IsActive() || p.Status == model.Pipelined
}

// fix finds, for each group with a required level, the domain its placed pods are in.
func (g *GangTopology) fix(job *model.JobInfo) error {
	doms := map[*TopologyGroup]map[*model.Domain]bool{}
	var outside []string
	for _, p := range job.Pods {
		if !holds(p) {
			continue
		}
		node := g.snap.Node(p.NodeName)
		for tg := g.GroupOf(p); tg != nil; tg = tg.parent {
			if tg.Required < 0 {
				continue
			}
			d := g.snap.NodeDomain(tg.Topology, tg.Required, node.Position())
			if d == nil {
				outside = append(outside, p.Name)
				continue
			}
			if doms[tg] == nil {
				doms[tg] = map[*model.Domain]bool{}
			}
			doms[tg][d] = true
		}
	}
	if len(outside) > 0 {
		return fmt.Errorf("pods %s run outside the topology its required level needs; it cannot grow there", strings.Join(outside, ", "))
	}
	for tg, ds := range doms {
		if len(ds) > 1 {
			paths := make([]string, 0, len(ds))
			for d := range ds {
				paths = append(paths, d.Path)
			}
			slices.Sort(paths)
			return fmt.Errorf("its placed pods already span %s %s; it cannot grow in one", tg.Topology.LevelName(tg.Required), strings.Join(paths, ", "))
		}
		for d := range ds {
			tg.Fixed = d
		}
	}
	return nil
}

// FixedNodes are the nodes a pod of the job may be placed on when its gang is already placed
// in a domain: those of the fixed domain of its group or the nearest group above with one;
// nil when nothing is fixed (or g is nil: the job asks nothing of the topology).
func (g *GangTopology) FixedNodes(pod *model.PodInfo) []int {
	if g == nil {
		return nil
	}
	for tg := g.GroupOf(pod); tg != nil; tg = tg.parent {
		if tg.Fixed != nil {
			return tg.Fixed.Nodes
		}
	}
	return nil
}

// DomainOrder is how the domains of one level are tried. FullestFirst is the scheduler's
// (upstream's too); the others exist to measure it against (domainorder_test.go).
type DomainOrder int

const (
	// FullestFirst tries the domain with the least free of what the gang asks most first.
	FullestFirst DomainOrder = iota
	// EmptiestFirst tries the roomiest domain first.
	EmptiestFirst
	// ByName tries domains in the order of their label values.
	ByName
)

// domainOrder is FullestFirst but in the measurement that compares the orders.
var domainOrder = FullestFirst

// Candidates lists, level by level, the regions inside within where the group may be
// placed, in the order to try them: a fixed domain alone; else the preferred level's
// domains, then each wider level's up to the required one (the whole of within last when
// nothing is required). Within a level, the domains with the least free of what the pods
// ask most come first: the fullest domain that can hold the gang, which keeps the emptier
// ones whole for the large jobs that need them. Domains that cannot hold request, counted
// over their nodes' free resources (free), are left out.
func (tg *TopologyGroup) Candidates(snap *model.Snapshot, within Region, request model.Resources, free func(node int) model.Resources) [][]Region {
	if tg.Topology == nil {
		return [][]Region{{within}}
	}
	if tg.Fixed != nil {
		r, ok := regionIn(tg, tg.Fixed, within)
		if !ok {
			return nil
		}
		return [][]Region{{r}}
	}
	deepest := tg.Preferred
	if deepest < 0 {
		deepest = tg.Required
	}
	widest := max(tg.Required, 0)
	key := model.GPU
	if request.Get(model.GPU) == 0 {
		key = model.CPU
	}
	var levels [][]Region
	for l := deepest; l >= widest && l >= 0; l-- {
		var regions []Region
		var room []int64
		for _, d := range snap.Domains(tg.Topology, l) {
			r, ok := regionIn(tg, d, within)
			if !ok {
				continue
			}
			var total model.Resources
			for _, i := range r.Nodes {
				total = total.Add(free(i).AtLeastZero())
			}
			if !request.FitsIn(total) {
				continue
			}
			regions, room = append(regions, r), append(room, total.Get(key))
		}
		order := make([]int, len(regions))
		for i := range order {
			order[i] = i
		}
		switch domainOrder {
		case FullestFirst:
			slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(room[a], room[b]) })
		case EmptiestFirst:
			slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(room[b], room[a]) })
		}
		sorted := make([]Region, len(regions))
		for i, k := range order {
			sorted[i] = regions[k]
		}
		levels = append(levels, sorted)
	}
	if tg.Required < 0 {
		levels = append(levels, []Region{within})
	}
	return levels
}

// regionIn is domain d as a region inside within (its nodes that are within's); false when
// they have none in common.
func regionIn(tg *TopologyGroup, d *model.Domain, within Region) (Region, bool) {
	r := Region{Name: tg.Topology.LevelName(d.Level) + " " + d.Path, Nodes: d.Nodes, Domain: d}
	if within.Nodes == nil {
		return r, true
	}
	var both []int
	for _, i := range d.Nodes {
		if _, found := slices.BinarySearch(within.Nodes, i); found {
			both = append(both, i)
		}
	}
	r.Nodes = both
	return r, len(both) > 0
}

// PreferredRank ranks the region's nodes for the group's pods: those of the preferred
// level's domain with the most free room first, so that the gang spans as few of them as
// it fits in. Nil when the group prefers no level deeper than the region's.
func (tg *TopologyGroup) PreferredRank(snap *model.Snapshot, r Region, free func(node int) model.Resources, key model.ResourceName) func(node int) int {
	if tg.Topology == nil || tg.Preferred < 0 || (r.Domain != nil && r.Domain.Level >= tg.Preferred) {
		return nil
	}
	room := map[*model.Domain]int64{}
	var doms []*model.Domain
	for _, i := range r.Nodes {
		d := snap.NodeDomain(tg.Topology, tg.Preferred, i)
		if d == nil {
			continue
		}
		if _, seen := room[d]; !seen {
			doms = append(doms, d)
		}
		room[d] += max(free(i).Get(key), 0)
	}
	slices.SortStableFunc(doms, func(a, b *model.Domain) int { return cmp.Compare(room[b], room[a]) })
	rank := make(map[*model.Domain]int, len(doms))
	for k, d := range doms {
		rank[d] = k
	}
	return func(node int) int {
		if d := snap.NodeDomain(tg.Topology, tg.Preferred, node); d != nil {
			return rank[d]
		}
		return len(doms) // outside the topology: last
	}
}

// Describe names what the group asks, for reasons: "one rack of topology gb200".
func (tg *TopologyGroup) Describe() string {
	if tg.Topology == nil {
		return "the cluster"
	}
	level := tg.Required
	if level < 0 {
		level = tg.Preferred
	}
	return "one " + tg.Topology.LevelName(level) + " of topology " + tg.Topology.Name
}
