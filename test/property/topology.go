package property

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// Topology-aware gangs in the scenarios (docs/topology.md): a Topology of zones and racks, or
// of racks alone, nodes labelled into its domains (a few left outside it), and jobs whose
// PodGroup asks to run inside one domain of a level (required) or packed into few (preferred).
// What a domain is, which nodes are outside, which level a constraint names: all read here
// from the scenario's own nodes and PodGroups, by the rule upstream documents, never by the
// scheduler's code.

// The properties of topology-aware gangs.
const (
	// T1: a job with a required level never has bound pods in two domains of that level at
	// once, nor on a node outside the topology.
	PropOneDomain = "T1 a gang in one domain"
	// T2: the evictions made for a job with a required level free one domain of that level —
	// a victim left with pods bound loses pods only there, a victim evicted whole has a pod
	// there (the rest of its gang goes wherever it ran) — the same for every decision until
	// the job binds, the domain of its pods already bound, and it binds there; victims a
	// queue limit on its path asks for (coverLimits) may be anywhere.
	PropDomainEvictions = "T2 evictions in the preemptor's domain"
)

// Topology is the scenario's kai.scheduler/v1alpha1 Topology: its levels widest first.
type Topology struct {
	Name   string
	Levels []TopologyLevel
}

// TopologyLevel is one level: the node label whose value names a node's domain there, and an
// alias a constraint may name it by instead ("" for none).
type TopologyLevel struct {
	NodeLabel string `json:"nodeLabel"`
	Alias     string `json:"alias,omitempty"`
}

// TopologyConstraint is a PodGroup's spec.topologyConstraint as written: its levels named by
// alias or node label; "" for none.
type TopologyConstraint struct {
	Topology  string `json:"topology"`
	Required  string `json:"requiredTopologyLevel,omitempty"`
	Preferred string `json:"preferredTopologyLevel,omitempty"`
}

// The topology's node labels, and the aliases some scenarios give its levels. The alias
// "zone" is also the label placement's zones use (zoneLabel), a different label: a scheduler
// that read an alias as a node label would find domains where there are none.
const (
	topologyZoneLabel = "topology.kubernetes.io/zone"
	topologyRackLabel = "example.com/rack"
	topologyName      = "dc"
)

// topologyStream sets the stream of topologies apart; of the keys from "top" (0x746f70) on,
// the first that draws none for a held seed, so that those still build the scenarios that
// found their defects.
const topologyStream = 0x746f80

// topologyShare is the share of scenarios, in quarters, given a topology.
const topologyShare = 1

// maxTopologyNodes bounds the cluster a topology grows: racks of one to four nodes need
// more than Generate's one to four nodes to make several domains, and a scenario stays small.
const maxTopologyNodes = 8

// level finds the level a constraint names, by node label or alias; -1 when the topology has
// none of that name.
func (t *Topology) level(name string) int {
	if t == nil || name == "" {
		return -1
	}
	return slices.IndexFunc(t.Levels, func(l TopologyLevel) bool { return l.NodeLabel == name || (l.Alias != "" && l.Alias == name) })
}

// levelName is how failures name a level: its alias, else its label.
func (t *Topology) levelName(level int) string {
	if l := t.Levels[level]; l.Alias != "" {
		return l.Alias
	}
	return t.Levels[level].NodeLabel
}

// domainOf is the domain of the level that node is in, named by its labels' values from the
// widest level down to it ("z0/r1"); ok is false when the node lacks the label of any level
// of the topology, even a narrower one: it is outside the topology.
func (t *Topology) domainOf(node *v1.Node, level int) (domain string, ok bool) {
	values := make([]string, len(t.Levels))
	for l, lv := range t.Levels {
		v, found := node.Labels[lv.NodeLabel]
		if !found {
			return "", false
		}
		values[l] = v
	}
	return strings.Join(values[:level+1], "/"), true
}

// missing names the labels of the topology's levels the node lacks.
func (t *Topology) missing(node *v1.Node) string {
	var labels []string
	for _, lv := range t.Levels {
		if _, found := node.Labels[lv.NodeLabel]; !found {
			labels = append(labels, lv.NodeLabel)
		}
	}
	return strings.Join(labels, ", ")
}

// RequiredLevel is the level of the scenario's topology the job must run inside one domain
// of; -1 when it requires none (no constraint, a preference only, or another topology).
func (s *Scenario) RequiredLevel(j *Job) int {
	if j.Topology == nil || s.Topology == nil || j.Topology.Topology != s.Topology.Name {
		return -1
	}
	return s.Topology.level(j.Topology.Required)
}

// domains lists the domains of a level and the scenario's nodes in each (by position), in
// name order; nodes outside the topology are in none.
func (s *Scenario) domains(level int) (names []string, nodes map[string][]int) {
	nodes = map[string][]int{}
	for i := range s.Nodes {
		if d, ok := s.Topology.domainOf(s.Nodes[i].Object(), level); ok {
			nodes[d] = append(nodes[d], i)
		}
	}
	return slices.Sorted(maps.Keys(nodes)), nodes
}

// growForTopology adds nodes, drawn as Generate draws its nodes, until the cluster has four
// to maxTopologyNodes, so that racks and zones of several nodes occur.
func (s *Scenario) growForTopology(t *rand.Rand) {
	for want := 4 + t.IntN(maxTopologyNodes-3); len(s.Nodes) < want; {
		s.Nodes = append(s.Nodes, Node{Name: fmt.Sprintf("node-%d", len(s.Nodes)), GPUs: 2 + t.IntN(7)})
	}
}

// labelDomains gives the scenario its Topology — zones and racks, or in one case in four
// racks alone; its levels aliased in half of the scenarios — and labels the nodes, in an
// order drawn, into zones of one to three racks of one to maxRack nodes each. When outside is
// set, half of the scenarios leave a node (of six or more, now and then two) outside the
// topology: without its labels, or with a zone but no rack. Rack names start again in each zone in half of the
// zoned scenarios, so that only the zone tells two racks apart.
func (s *Scenario) labelDomains(t *rand.Rand, outside bool, maxRack int) {
	zoned := t.IntN(4) != 0
	aliased := t.IntN(2) == 0
	topo := &Topology{Name: topologyName}
	if zoned {
		topo.Levels = append(topo.Levels, TopologyLevel{NodeLabel: topologyZoneLabel})
	}
	topo.Levels = append(topo.Levels, TopologyLevel{NodeLabel: topologyRackLabel})
	if aliased {
		if zoned {
			topo.Levels[0].Alias = "zone"
		}
		topo.Levels[len(topo.Levels)-1].Alias = "rack"
	}
	s.Topology = topo
	order := t.Perm(len(s.Nodes))
	out := 0
	if outside && len(s.Nodes) > 1 && t.IntN(2) == 0 {
		out = 1
		if len(s.Nodes) >= 6 && t.IntN(3) == 0 {
			out = 2
		}
	}
	perZone := zoned && t.IntN(2) == 0
	for _, i := range order[:out] {
		if zoned && t.IntN(2) == 0 {
			s.Nodes[i].TopologyLabels = map[string]string{topologyZoneLabel: "z0"} // a zone but no rack: outside all the same
		}
	}
	k, racks := out, 0
	for zone := 0; k < len(order); zone++ {
		for rack := range 1 + t.IntN(3) {
			name := fmt.Sprintf("r%d", racks)
			if perZone {
				name = fmt.Sprintf("r%d", rack)
			}
			racks++
			for range 1 + t.IntN(maxRack) {
				if k == len(order) {
					break
				}
				labels := map[string]string{topologyRackLabel: name}
				if zoned {
					labels[topologyZoneLabel] = fmt.Sprintf("z%d", zone)
				}
				s.Nodes[order[k]].TopologyLabels = labels
				k++
			}
		}
	}
}

// constrainTopology gives about a third of the jobs a topologyConstraint on the scenario's
// topology: a required rack, a required zone, a required zone with a preferred rack, or a
// preference alone (a rack, now and then a zone), each level named by its alias or its label.
// A required level is kept only where the job can still run on its own: its gang fits inside
// one domain of that level of the empty cluster (fitsOneDomain); otherwise the job keeps the
// preferred level alone, or nothing.
func (s *Scenario) constrainTopology(t *rand.Rand) {
	levels := s.Topology.Levels
	rack, zone := len(levels)-1, 0
	name := func(level int) string {
		if l := levels[level]; l.Alias != "" && t.IntN(2) == 0 {
			return l.Alias
		}
		return levels[level].NodeLabel
	}
	for _, j := range s.Jobs {
		if t.IntN(3) != 0 {
			continue
		}
		required, preferred := -1, -1
		switch t.IntN(4) {
		case 0:
			required = rack
		case 1:
			required = zone
		case 2:
			required, preferred = zone, rack
		default:
			preferred = rack
			if t.IntN(4) == 0 {
				preferred = zone
			}
		}
		if preferred == required {
			preferred = -1 // racks alone: a required zone is a required rack
		}
		c := &TopologyConstraint{Topology: s.Topology.Name}
		if required >= 0 {
			c.Required = name(required)
		}
		if preferred >= 0 {
			c.Preferred = name(preferred)
		}
		if required >= 0 && !s.fitsOneDomain(j, required) {
			c.Required = ""
		}
		if c.Required != "" || c.Preferred != "" {
			j.Topology = c
		}
	}
}

// fitsOneDomain reports whether the job's gang fits on the empty nodes of one domain of the
// level: as many of its pods as the nodes of the domain its pods may use hold (slotsOn).
func (s *Scenario) fitsOneDomain(j *Job, level int) bool {
	_, nodes := s.domains(level)
	for _, in := range nodes {
		if s.slotsOn(j, in) >= j.GangPods() {
			return true
		}
	}
	return false
}

// topologyYAML is the Topology document; "" without one.
func (s *Scenario) topologyYAML() string {
	if s.Topology == nil {
		return ""
	}
	return fmt.Sprintf("---\napiVersion: kai.scheduler/v1alpha1\nkind: Topology\nmetadata: {name: %s}\nspec:\n  levels: %s\n",
		s.Topology.Name, flow(s.Topology.Levels))
}

// Judging. The judge keeps, per node, its domain at each level of the scenario's topology
// (read from the node objects the scenario renders), and per preemptor with a required
// level the domain its evictions were made in until it binds.

// domainPromise is what the evictions for a preemptor freed: the domains they may have
// been made for (one, but for victims that fit several), when, and the domains as named in
// failures.
type domainPromise struct {
	domains map[string]bool
	time    float64
	where   string
}

// domains lists the domains of a level and the scenario's nodes in each, in name order, read
// from the judge's node objects.
func (j *judge) domains(level int) (names []string, nodes map[string][]*Node) {
	nodes = map[string][]*Node{}
	for i := range j.s.Nodes {
		if d, ok := j.nodeDomain(j.s.Nodes[i].Name, level); ok {
			nodes[d] = append(nodes[d], &j.s.Nodes[i])
		}
	}
	return slices.Sorted(maps.Keys(nodes)), nodes
}

// nodeDomain is the domain of the level that the named node is in; ok false outside the
// topology (or for a node the scenario does not have, which K1 reports).
func (j *judge) nodeDomain(node string, level int) (string, bool) {
	n := j.nodes[node]
	if n == nil || j.s.Topology == nil {
		return "", false
	}
	return j.s.Topology.domainOf(n, level)
}

// describeLevel says what a job with a required level asks: "one rack of topology dc".
func (j *judge) describeLevel(level int) string {
	return fmt.Sprintf("one %s of topology %s", j.s.Topology.levelName(level), j.s.Topology.Name)
}

// checkOneDomain is T1 for the bind e: the job's bound pods, this one included, are all on
// nodes inside the topology, in one domain of its required level. Pods join a job only by
// binds, so checking at every bind checks every moment; the bind that breaks it is reported.
func (j *judge) checkOneDomain(e report.Event) {
	job := j.jobs[e.PodGroup]
	level := j.s.RequiredLevel(job)
	if level < 0 {
		return
	}
	j.figures.TopologyBinds++
	domain, inside := j.nodeDomain(e.Node, level)
	if n := j.nodes[e.Node]; !inside && n != nil {
		j.fail(PropOneDomain, e, "must run in %s, but is bound outside the topology: %s lacks %s",
			j.describeLevel(level), e.Node, j.s.Topology.missing(n))
		return
	}
	byDomain := map[string][]string{}
	for _, pod := range slices.Sorted(maps.Keys(j.active[e.PodGroup])) {
		if d, ok := j.nodeDomain(j.podNode[pod], level); ok {
			byDomain[d] = append(byDomain[d], j.podNode[pod]+": "+pod)
		}
	}
	if len(byDomain) > 1 {
		j.fail(PropOneDomain, e, "must run in %s, but its bind to %s (%s %s) leaves it with pods bound in %d of them at once: %s",
			j.describeLevel(level), e.Node, j.s.Topology.levelName(level), domain, len(byDomain), describeDomains(j.s.Topology.levelName(level), byDomain))
	}
}

// describeDomains names domains and what is in each: "rack z0/r1 (node-2: j03-0), rack z1/r0 (node-5: j03-1)".
func describeDomains(level string, byDomain map[string][]string) string {
	var parts []string
	for _, d := range slices.Sorted(maps.Keys(byDomain)) {
		parts = append(parts, fmt.Sprintf("%s %s (%s)", level, d, strings.Join(byDomain[d], ", ")))
	}
	return strings.Join(parts, ", ")
}

// checkDomainDecision is T2 for the decision (one cycle's evictions by one action for one
// preemptor) that starts at events[i], judged on the cluster as the events before it left it.
// The victim search takes units on the nodes of one domain of the preemptor's required level:
// a surplus pod of an elastic job, on its node, or a job's whole gang, listed on each node it
// runs on — so a gang that also runs elsewhere, even outside the topology, loses its pods
// there too (a gang cannot run below its minimum). So there must be a domain, the decision's,
// that holds every pod evicted from a job that keeps pods bound, and at least one pod of each
// job evicted whole (a job with no pod left bound after it). It must also be the domain of the
// preemptor's pods already bound, if any, and of the evictions made for it before, which it
// has not bound since (checkPromisedDomain then holds it to binding there). Victims that only
// a queue limit may have asked for are not judged: while the preemptor's gang would take a
// limited queue of its path over its limit (limitsInWay), the victim search also takes units
// from under that queue wherever they run, to bring it under (coverLimits), and the oracle
// cannot tell those from the units that make room in the domain.
func (j *judge) checkDomainDecision(events []report.Event, i int) {
	first := events[i]
	preemptor := j.jobs[first.Preemptor]
	if preemptor == nil {
		return // S0 reports it
	}
	level := j.s.RequiredLevel(preemptor)
	if level < 0 {
		return
	}
	var limits []*Queue
	if first.Action != consolidationAction { // a move is never planned past a limit
		limits = j.limitsInWay(first.Preemptor, preemptor, first.Time)
	}
	evicted := map[string][]report.Event{} // victim job -> its evictions in the decision
	for _, e := range events[i:] {
		if !sameDecision(first, e) {
			break
		}
		victim := j.jobs[e.PodGroup]
		if victim == nil {
			continue // S0 reports it
		}
		if slices.ContainsFunc(limits, func(q *Queue) bool { return j.under(victim.Queue, q.Name) }) {
			j.figures.TopologyLimitExempt++
			continue
		}
		j.figures.TopologyEvictions++
		evicted[e.PodGroup] = append(evicted[e.PodGroup], e)
	}
	if len(evicted) == 0 {
		return // only victims a limit may have asked for
	}
	levelName := j.s.Topology.levelName(level)
	// The domains the decision may have freed: those that every victim allows.
	var candidates map[string]bool
	keep := func(allowed map[string]bool) {
		if candidates == nil {
			candidates = allowed
			return
		}
		for d := range candidates {
			if !allowed[d] {
				delete(candidates, d)
			}
		}
	}
	var victims []string // each victim, its evicted pods by domain, for the failure
	for _, key := range slices.Sorted(maps.Keys(evicted)) {
		pods := map[string]bool{}
		byDomain := map[string][]string{}
		var outside []string
		for _, e := range evicted[key] {
			pods[e.Pod] = true
			if d, ok := j.nodeDomain(e.Node, level); ok {
				byDomain[d] = append(byDomain[d], e.Node+": "+e.Pod)
			} else {
				outside = append(outside, e.Node+": "+e.Pod+" outside the topology")
			}
		}
		whole := true
		for pod := range j.active[key] {
			whole = whole && pods[pod]
		}
		allowed := map[string]bool{}
		for d := range byDomain {
			allowed[d] = true
		}
		how := "evicted whole"
		if !whole {
			how = "keeping pods bound"
			if len(byDomain) > 1 || len(outside) > 0 {
				allowed = map[string]bool{} // what it loses must all be in the decision's domain
			}
		}
		keep(allowed)
		what := describeDomains(levelName, byDomain)
		if len(outside) > 0 {
			what = strings.Join(append([]string{what}, outside...), ", ")
		}
		victims = append(victims, fmt.Sprintf("%s, %s: %s", key, how, strings.TrimPrefix(what, ", ")))
	}
	what := fmt.Sprintf("evicted by %s for %s, which must run in %s:", first.Action, first.Preemptor, j.describeLevel(level))
	if len(candidates) == 0 {
		j.fail(PropDomainEvictions, first, "%s no %s holds every pod taken from a job that keeps pods bound and a pod of each job evicted whole; %s",
			what, levelName, strings.Join(victims, "; "))
		return
	}
	where := levelName + " " + strings.Join(slices.Sorted(maps.Keys(candidates)), " or ")
	for _, pod := range slices.Sorted(maps.Keys(j.active[first.Preemptor])) {
		if d, ok := j.nodeDomain(j.podNode[pod], level); ok && !candidates[d] {
			j.fail(PropDomainEvictions, first, "%s freed %s, but its pod %s runs in %s %s on %s, where alone it may grow; %s",
				what, where, pod, levelName, d, j.podNode[pod], strings.Join(victims, "; "))
			break
		}
	}
	if p, ok := j.domainPromises[first.Preemptor]; ok {
		keep(p.domains)
		if len(candidates) == 0 {
			j.fail(PropDomainEvictions, first, "%s freed %s, but the evictions for it at %s, which it has not bound since, freed %s; %s",
				what, where, clock(p.time), p.where, strings.Join(victims, "; "))
			return
		}
	}
	j.domainPromises[first.Preemptor] = domainPromise{domains: candidates, time: first.Time,
		where: levelName + " " + strings.Join(slices.Sorted(maps.Keys(candidates)), " or ")}
}

// checkPromisedDomain is T2 for the bind e: a job bound after evictions were made for it binds
// in the domain they freed. Its first bind ends the promise: T1 keeps the pods bound with it,
// and any later, in the domain of the first.
func (j *judge) checkPromisedDomain(e report.Event) {
	p, ok := j.domainPromises[e.PodGroup]
	if !ok {
		return
	}
	delete(j.domainPromises, e.PodGroup)
	level := j.s.RequiredLevel(j.jobs[e.PodGroup])
	j.figures.TopologyPromisesJudged++
	d, inside := j.nodeDomain(e.Node, level)
	if !inside {
		return // T1 reports it
	}
	if !p.domains[d] {
		j.fail(PropDomainEvictions, e, "bound to %s in %s %s, but the evictions made for it at %s freed %s",
			e.Node, j.s.Topology.levelName(level), d, clock(p.time), p.where)
	}
}

// limitsInWay lists the queues of the preemptor's path whose GPU limit its gang may exceed as
// things stand: what their subtrees hold, an upper bound (queueHeld, the pods still
// terminating there too, each charged the most it may be), with every pod of the preemptor
// added. Only then may the victim search take victims from under them to bring them under.
func (j *judge) limitsInWay(key string, preemptor *Job, t float64) []*Queue {
	var limits []*Queue
	_, high := j.s.chargeRange(preemptor)
	for _, q := range j.s.Ancestry(preemptor.Queue) {
		if q.Limit < 0 {
			continue
		}
		held := j.queueHeld(q.Name) + j.terminatingUnder(q.Name, t) + gpusOf(high*int64(len(preemptor.Pods)-len(j.active[key])))
		if held > q.Limit+1e-9 {
			limits = append(limits, q)
		}
	}
	return limits
}

// terminatingUnder is what the pods of the queue's subtree still terminating at t ask for,
// each charged the most it may be.
func (j *judge) terminatingUnder(queue string, t float64) float64 {
	var sum int64
	for _, list := range j.holders {
		for _, h := range list {
			job := j.jobs[h.job]
			if job == nil || math.IsInf(h.gone, 1) || h.goneBy(t) || !j.under(job.Queue, queue) {
				continue
			}
			_, high := j.s.chargeRange(job)
			sum += high
		}
	}
	return gpusOf(sum)
}
