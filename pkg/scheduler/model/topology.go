package model

import (
	"slices"
	"strings"
)

// Topology is a cluster's network levels as a Topology object names them, widest first.
type Topology struct {
	Name   string
	Levels []TopologyLevel
}

// TopologyLevel is one level: the node label whose value names a node's domain, and the
// alias a constraint may use instead.
type TopologyLevel struct {
	NodeLabel, Alias string
}

// Level returns the index of the level a constraint names, by node label or alias; -1 when
// the topology has no such level.
func (t *Topology) Level(name string) int {
	return slices.IndexFunc(t.Levels, func(l TopologyLevel) bool {
		return l.NodeLabel == name || (l.Alias != "" && l.Alias == name)
	})
}

// LevelName is how messages name a level: its alias, else its node label.
func (t *Topology) LevelName(level int) string {
	if l := t.Levels[level]; l.Alias != "" {
		return l.Alias
	}
	return t.Levels[level].NodeLabel
}

// TopologyConstraint is what a job, or one of its sub-groups, asks of the topology: to run
// inside one domain of the required level, and packed into as few domains of the preferred
// level as fit. Levels are named by node label or alias; either may be empty.
type TopologyConstraint struct {
	Topology  string
	Required  string
	Preferred string
}

// HasTopology reports whether the job, or one of its sub-groups, asks to be placed by topology.
func (j *JobInfo) HasTopology() bool {
	return j.Topology != nil || slices.ContainsFunc(j.SubGroups, func(sg SubGroupInfo) bool { return sg.Topology != nil })
}

// Domain is a set of nodes with the same values of a level's label and of every wider
// level's: a rack of one block of one zone.
type Domain struct {
	// Level is the index of its level in the topology.
	Level int
	// Path is the label values from the widest level down to Level, joined by "/":
	// "zone-a/block-2/rack-7". It names the domain in messages and orders domains.
	Path string
	// Nodes are the positions in Snapshot.Nodes of its nodes, ascending.
	Nodes []int
	// Parent is the domain one level up (nil at the widest level).
	Parent *Domain
}

// topologyDomains are one topology's domains in a snapshot, computed when first asked.
type topologyDomains struct {
	// levels holds each level's domains in path order.
	levels [][]*Domain
	// byNode holds, per level, the domain of each node (nil outside the topology).
	byNode [][]*Domain
}

// SetTopologies gives the snapshot the cluster's topologies.
func (s *Snapshot) SetTopologies(topologies []*Topology) {
	s.topologies = make(map[string]*Topology, len(topologies))
	for _, t := range topologies {
		s.topologies[t.Name] = t
	}
	s.domains = nil
}

// Topology returns a topology by name, or nil.
func (s *Snapshot) Topology(name string) *Topology { return s.topologies[name] }

// Topologies returns the snapshot's topologies in name order.
func (s *Snapshot) Topologies() []*Topology {
	names := make([]string, 0, len(s.topologies))
	for name := range s.topologies {
		names = append(names, name)
	}
	slices.Sort(names)
	out := make([]*Topology, len(names))
	for i, name := range names {
		out[i] = s.topologies[name]
	}
	return out
}

// Domains returns the domains of a level of the topology in path order. Nodes lacking the
// label of any of the topology's levels are in none: they are outside the topology. Node
// labels do not change within a snapshot, so the domains are computed once per topology.
func (s *Snapshot) Domains(t *Topology, level int) []*Domain {
	return s.topologyDomains(t).levels[level]
}

// NodeDomain returns the domain of a level a node (by position) is in; nil outside the topology.
func (s *Snapshot) NodeDomain(t *Topology, level, node int) *Domain {
	return s.topologyDomains(t).byNode[level][node]
}

func (s *Snapshot) topologyDomains(t *Topology) *topologyDomains {
	if d, ok := s.domains[t.Name]; ok {
		return d
	}
	if s.domains == nil {
		s.domains = map[string]*topologyDomains{}
	}
	d := &topologyDomains{levels: make([][]*Domain, len(t.Levels)), byNode: make([][]*Domain, len(t.Levels))}
	paths := make([]map[string]*Domain, len(t.Levels))
	for l := range t.Levels {
		paths[l] = map[string]*Domain{}
		d.byNode[l] = make([]*Domain, len(s.Nodes))
	}
	values := make([]string, len(t.Levels))
	for i, n := range s.Nodes {
		inside := true
		for l, level := range t.Levels {
			v, ok := n.Labels[level.NodeLabel]
			if !ok {
				inside = false
				break
			}
			values[l] = v
		}
		if !inside {
			continue
		}
		var parent *Domain
		for l := range t.Levels {
			path := strings.Join(values[:l+1], "/")
			dom := paths[l][path]
			if dom == nil {
				dom = &Domain{Level: l, Path: path, Parent: parent}
				paths[l][path] = dom
				d.levels[l] = append(d.levels[l], dom)
			}
			dom.Nodes = append(dom.Nodes, i) // nodes come in position order
			d.byNode[l][i] = dom
			parent = dom
		}
	}
	for l := range d.levels {
		slices.SortFunc(d.levels[l], func(a, b *Domain) int { return strings.Compare(a.Path, b.Path) })
	}
	s.domains[t.Name] = d
	return d
}

// Contains reports whether the domain holds the node at position i.
func (d *Domain) Contains(i int) bool {
	_, found := slices.BinarySearch(d.Nodes, i)
	return found
}
