package model

import (
	"fmt"
	"sort"
)

// Snapshot is the cluster as one scheduling cycle sees it. Sessions change it in place
// through SetPodStatus, the one mutation that keeps node accounting consistent.
type Snapshot struct {
	// Nodes sorted by name.
	Nodes []*NodeInfo
	// Jobs sorted by ID.
	Jobs []*JobInfo
	// Queues is the queue tree.
	Queues *QueueTree

	nodeByName map[string]*NodeInfo
	jobByID    map[JobID]*JobInfo
	// moved lists, in order, the index in Nodes of every node whose version moved since the
	// snapshot was built: a search that keeps an answer per node reads what moved since it
	// last looked, instead of checking every node for every pod. A node is listed again
	// only once a reader may have read past its latest entry (read is the highest mark
	// handed out), so that evicting a large job, which moves its nodes once per pod, does
	// not list each node once per pod.
	moved []int
	read  int
	// topologies are the cluster's Topology objects by name, and domains each one's domains,
	// computed when first asked (see Domains).
	topologies map[string]*Topology
	domains    map[string]*topologyDomains
}

// NewSnapshot indexes nodes, jobs and queues and accounts every pod on its node. Pods must
// already be attached to their jobs. It fails on duplicate names or a pod on an unknown node,
// which would make the accounting wrong.
func NewSnapshot(nodes []*NodeInfo, jobs []*JobInfo, queues []*QueueInfo) (*Snapshot, error) {
	s := &Snapshot{
		Nodes:      append([]*NodeInfo(nil), nodes...),
		Jobs:       append([]*JobInfo(nil), jobs...),
		Queues:     NewQueueTree(queues),
		nodeByName: make(map[string]*NodeInfo, len(nodes)),
		jobByID:    make(map[JobID]*JobInfo, len(jobs)),
	}
	sort.Slice(s.Nodes, func(i, j int) bool { return s.Nodes[i].Name < s.Nodes[j].Name })
	sort.Slice(s.Jobs, func(i, j int) bool { return s.Jobs[i].ID < s.Jobs[j].ID })
	for i, n := range s.Nodes {
		if _, dup := s.nodeByName[n.Name]; dup {
			return nil, fmt.Errorf("duplicate node %q", n.Name)
		}
		s.nodeByName[n.Name] = n
		n.position, n.listed = i, 0
	}
	for _, j := range s.Jobs {
		if _, dup := s.jobByID[j.ID]; dup {
			return nil, fmt.Errorf("duplicate job %q", j.ID)
		}
		s.jobByID[j.ID] = j
		for _, p := range j.Pods {
			if p.Job != j.ID {
				return nil, fmt.Errorf("pod %s is listed in job %s but belongs to %s", p.Key(), j.ID, p.Job)
			}
			if p.NodeName == "" {
				continue
			}
			node := s.nodeByName[p.NodeName]
			if node == nil {
				return nil, fmt.Errorf("pod %s is on unknown node %q", p.Key(), p.NodeName)
			}
			node.addPod(p)
			insertPod(&node.Pods, p)
		}
	}
	return s, nil
}

// Node returns a node by name, or nil.
func (s *Snapshot) Node(name string) *NodeInfo {
	return s.nodeByName[name]
}

// Job returns a job by ID, or nil.
func (s *Snapshot) Job(id JobID) *JobInfo {
	return s.jobByID[id]
}

// NodesMovedSince returns the indices in Nodes of the nodes whose version moved since mark
// (0: since the snapshot was built), in the order they moved, possibly with repeats, and
// the mark to ask from next time.
func (s *Snapshot) NodesMovedSince(mark int) (moved []int, next int) {
	s.read = len(s.moved)
	return s.moved[mark:], len(s.moved)
}

// bump moves a node's version; see NodeInfo.Version.
func (s *Snapshot) bump(n *NodeInfo) {
	n.version++
	if n.listed > s.read { // its latest entry is still ahead of every reader
		return
	}
	s.moved = append(s.moved, n.position)
	n.listed = len(s.moved)
}

// SetPodStatus moves a pod to a status and node (empty for none), updating the accounting of
// the nodes it leaves and joins.
func (s *Snapshot) SetPodStatus(p *PodInfo, status PodStatus, nodeName string) error {
	var target *NodeInfo
	if nodeName != "" {
		if target = s.nodeByName[nodeName]; target == nil {
			return fmt.Errorf("pod %s: unknown node %q", p.Key(), nodeName)
		}
	}
	if old := s.nodeByName[p.NodeName]; old != nil {
		old.removePod(p)
		s.bump(old)
		if old != target {
			removePod(&old.Pods, p)
		}
	}
	if target != nil && target.Name != p.NodeName {
		insertPod(&target.Pods, p)
	}
	p.Status, p.NodeName = status, nodeName
	if target != nil {
		target.addPod(p)
		s.bump(target)
	}
	if job := s.jobByID[p.Job]; job != nil {
		for _, q := range job.Pods {
			if q == p || (q.Status != Running && q.Status != Bound) {
				// Only running or bound pods can be victims, whose eligibility the job's state
				// decides; skipping the rest keeps placing a large gang linear.
				continue
			}
			if n := s.nodeByName[q.NodeName]; n != nil {
				s.bump(n)
			}
		}
	}
	return nil
}

func insertPod(pods *[]*PodInfo, p *PodInfo) {
	key := p.Key()
	list := *pods
	i := sort.Search(len(list), func(i int) bool { return list[i].Key() >= key })
	list = append(list, nil)
	copy(list[i+1:], list[i:])
	list[i] = p
	*pods = list
}

func removePod(pods *[]*PodInfo, p *PodInfo) {
	list := *pods
	for i, q := range list {
		if q == p {
			list = append(list[:i], list[i+1:]...)
			if len(list) == 0 {
				list = nil // an emptied node looks exactly like one that never had pods
			}
			*pods = list
			return
		}
	}
}
