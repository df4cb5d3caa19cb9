package model

import (
	"cmp"
	"fmt"
	"slices"
)

// This file is the one home of the rule for how many pods, and which, a job needs to run and
// to keep: the gang check of allocation (IsGangSatisfied, GangPods), the surplus the victim
// search may cut and the minimum min-runtime protects (MinimumGuard) all ask it.
//
// A job's minimum is a tree. Its sub-groups hang from the job (Parent empty) or from another
// sub-group. A level is ready when
//   - it sets MinSubGroup: at least that many of its direct children are ready (0: always);
//   - otherwise: it has MinMember pods of its own (the job: of all its pods; a sub-group: the
//     pods labelled with its name) and every direct child is ready.
//
// A job without any MinSubGroup is the flat rule it always was: MinMember pods overall and each
// sub-group's own minimum; it takes the paths written for it, unchanged. MinSubGroup (upstream
// KAI's hierarchical elastic gangs) lets a job run with, say, 3 of its 4 replicas.

// CountsSubGroups reports whether some level of the job's minimum counts ready sub-groups
// (MinSubGroup) rather than pods alone.
func (j *JobInfo) CountsSubGroups() bool {
	if j.MinSubGroup != nil {
		return true
	}
	for i := range j.SubGroups {
		if j.SubGroups[i].MinSubGroup != nil {
			return true
		}
	}
	return false
}

// GangSize is the fewest pods with which the job can be ready: MinMember, or for a job
// counting sub-groups, what its cheapest ready tree takes.
func (j *JobInfo) GangSize() int32 {
	if !j.CountsSubGroups() {
		return j.MinMember
	}
	t := j.newGangTree(nil)
	return t.minPods(-1)
}

func (j *JobInfo) subGroupIndex(name string) int {
	if name == "" {
		return -1
	}
	for i, sg := range j.SubGroups {
		if sg.Name == name {
			return i
		}
	}
	return -1
}

// MinimumGuard answers, pod by pod, whether taking pods from a job would take its minimum
// (the tree above) below what it needs. It is the one rule for what a job may lose and still
// keep working: the victim search uses it to cut surplus pods, the min-runtime filter to keep
// a protected job at its minimum. A group already below its minimum (a sub-group still waiting
// for pods) is not made worse only if the pods taken are not from it: the guard asks what
// this eviction does, not whether the job was complete before it. Under MinSubGroup a child
// that is not ready, or that stays ready, shields nothing above it: a replica that is not
// counted may lose every pod, and a counted one may go as long as enough others stay ready.
type MinimumGuard struct {
	job  *JobInfo
	left int32
	// perSubGroup counts active pods per sub-group, indexed like job.SubGroups.
	perSubGroup []int32
	// tree is the readiness of every level, for a job counting sub-groups; nil otherwise.
	tree *gangTree
}

// Shortfall is what an eviction would break: the level, what it would have left and what it
// needs, in pods or in ready sub-groups.
type Shortfall struct {
	// Group is "gang" or "sub-group NAME"; empty when nothing breaks.
	Group          string
	Left, Minimum  int32
	CountSubGroups bool
}

// Breaks reports whether the eviction would break a minimum.
func (s Shortfall) Breaks() bool { return s.Group != "" }

// String says it for people: "2 pods where its sub-group w needs 3".
func (s Shortfall) String() string {
	unit := "pods"
	if s.CountSubGroups {
		unit = "ready sub-groups"
	}
	return fmt.Sprintf("%d %s where its %s needs %d", s.Left, unit, s.Group, s.Minimum)
}

// NewMinimumGuard counts the job's active pods.
func (j *JobInfo) NewMinimumGuard() *MinimumGuard {
	g := &MinimumGuard{job: j}
	if j.CountsSubGroups() {
		g.tree = j.newGangTree(activeStatus)
		g.left = g.tree.total
		return g
	}
	g.perSubGroup = make([]int32, len(j.SubGroups))
	for _, p := range j.Pods {
		if p.Status.IsActive() {
			g.left++
			if i := j.subGroupIndex(p.SubGroup); i >= 0 {
				g.perSubGroup[i]++
			}
		}
	}
	return g
}

// Shortfall names the level that losing pod would leave below its minimum; the zero Shortfall
// when losing pod keeps every minimum it touches.
func (g *MinimumGuard) Shortfall(pod *PodInfo) Shortfall {
	if g.job.MinSubGroup == nil && g.left-1 < g.job.MinMember {
		return Shortfall{Group: "gang", Left: g.left - 1, Minimum: g.job.MinMember}
	}
	if g.tree != nil {
		return g.tree.shortfall(g.job.subGroupIndex(pod.SubGroup))
	}
	if i := g.job.subGroupIndex(pod.SubGroup); i >= 0 && g.perSubGroup[i]-1 < g.job.SubGroups[i].MinMember {
		return Shortfall{Group: "sub-group " + pod.SubGroup, Left: g.perSubGroup[i] - 1, Minimum: g.job.SubGroups[i].MinMember}
	}
	return Shortfall{}
}

// Lose takes an active pod away from the counts.
func (g *MinimumGuard) Lose(pod *PodInfo) {
	g.left--
	i := g.job.subGroupIndex(pod.SubGroup)
	if g.tree != nil {
		g.tree.lose(i)
		return
	}
	if i >= 0 {
		g.perSubGroup[i]--
	}
}

// gangTree is the readiness of every level of a job counting sub-groups. Index -1 is the job.
type gangTree struct {
	job *JobInfo
	// parent of each sub-group (-1: the job); children of each sub-group, and of the job last.
	parent   []int
	children [][]int
	// own counts the pods of each sub-group that the tree was asked to count; total all of
	// the job's.
	own   []int32
	total int32
	// ready says whether each sub-group is ready; readyChildren and notReady count its
	// direct children by readiness (the job's at index len(SubGroups)).
	ready                   []bool
	readyChildren, notReady []int32
}

var (
	placedStatus = func(s PodStatus) bool { return s.IsActive() || s == Pipelined }
	activeStatus = PodStatus.IsActive
)

// newGangTree counts the job's pods whose status counts (none when counts is nil) and
// evaluates every level.
func (j *JobInfo) newGangTree(counts func(PodStatus) bool) *gangTree {
	n := len(j.SubGroups)
	t := &gangTree{job: j, parent: make([]int, n), children: make([][]int, n+1), own: make([]int32, n),
		ready: make([]bool, n), readyChildren: make([]int32, n+1), notReady: make([]int32, n+1)}
	for i, sg := range j.SubGroups {
		t.parent[i] = j.subGroupIndex(sg.Parent)
		t.children[t.slot(t.parent[i])] = append(t.children[t.slot(t.parent[i])], i)
	}
	if counts != nil {
		for _, p := range j.Pods {
			if counts(p.Status) {
				t.total++
				if i := j.subGroupIndex(p.SubGroup); i >= 0 {
					t.own[i]++
				}
			}
		}
	}
	t.evaluate(-1)
	return t
}

// slot is where level i's child counts are kept: the job's after its sub-groups'.
func (t *gangTree) slot(i int) int {
	if i < 0 {
		return len(t.own)
	}
	return i
}

// evaluate computes the readiness of level i's subtree, children first, and returns i's.
func (t *gangTree) evaluate(i int) bool {
	s := t.slot(i)
	for _, c := range t.children[s] {
		if t.evaluate(c) {
			t.readyChildren[s]++
		} else {
			t.notReady[s]++
		}
	}
	ready := t.readyWith(i, t.ownOf(i), t.readyChildren[s], t.notReady[s])
	if i >= 0 {
		t.ready[i] = ready
	}
	return ready
}

func (t *gangTree) ownOf(i int) int32 {
	if i < 0 {
		return t.total
	}
	return t.own[i]
}

// minimumOf is level i's MinSubGroup (nil when it counts pods) and MinMember.
func (t *gangTree) minimumOf(i int) (*int32, int32) {
	if i < 0 {
		return t.job.MinSubGroup, t.job.MinMember
	}
	return t.job.SubGroups[i].MinSubGroup, t.job.SubGroups[i].MinMember
}

// readyWith is the readiness rule of one level, given its counts.
func (t *gangTree) readyWith(i int, own, readyChildren, notReady int32) bool {
	minSub, minMember := t.minimumOf(i)
	if minSub != nil {
		return readyChildren >= *minSub
	}
	return own >= minMember && notReady == 0
}

func (t *gangTree) rootReady() bool {
	s := t.slot(-1)
	return t.readyWith(-1, t.total, t.readyChildren[s], t.notReady[s])
}

// shortfall walks from the pod's sub-group i up to the job, as far as the loss of one of its
// pods changes something, and names the level it would break. A level not ready afterwards
// breaks the job when every level from it up is needed by its parent (a parent counting pods
// needs all its children); under a parent counting sub-groups only a child that goes from
// ready to not ready matters, and only to the parent's count. The level named is the lowest
// of the broken chain: the one whose minimum the pod's owner must look at.
func (t *gangTree) shortfall(i int) Shortfall {
	if i < 0 {
		return Shortfall{} // a pod of no sub-group counts only for the job's pods, checked already
	}
	level := i
	own, readyChildren, notReady := t.own[i]-1, t.readyChildren[i], t.notReady[i]
	blame, blameOwn, blameReady := level, own, readyChildren
	for !t.readyWith(level, own, readyChildren, notReady) {
		if level < 0 {
			return t.describe(blame, blameOwn, blameReady)
		}
		before, parent := t.ready[level], t.parent[level]
		parentCounts, _ := t.minimumOf(parent)
		if parentCounts != nil && !before {
			return Shortfall{} // its parent did not count it before either
		}
		s := t.slot(parent)
		own, readyChildren, notReady = t.ownOf(parent), t.readyChildren[s], t.notReady[s]
		if parent < 0 {
			own-- // the job's own count is of all its pods, this one included
		}
		if before {
			readyChildren, notReady = readyChildren-1, notReady+1
		}
		if parentCounts != nil {
			blame, blameOwn, blameReady = parent, own, readyChildren
		}
		level = parent
	}
	return Shortfall{}
}

func (t *gangTree) describe(level int, own, readyChildren int32) Shortfall {
	group := "gang"
	if level >= 0 {
		group = "sub-group " + t.job.SubGroups[level].Name
	}
	minSub, minMember := t.minimumOf(level)
	if minSub != nil {
		return Shortfall{Group: group, Left: readyChildren, Minimum: *minSub, CountSubGroups: true}
	}
	return Shortfall{Group: group, Left: own, Minimum: minMember}
}

// lose takes one pod of sub-group i (-1: of none) away and updates readiness upwards.
func (t *gangTree) lose(i int) {
	t.total--
	if i < 0 {
		return
	}
	t.own[i]--
	for level := i; level >= 0; {
		s := t.slot(level)
		after := t.readyWith(level, t.own[level], t.readyChildren[s], t.notReady[s])
		if after == t.ready[level] {
			return
		}
		t.ready[level] = after
		p := t.slot(t.parent[level])
		t.readyChildren[p]--
		t.notReady[p]++
		level = t.parent[level]
	}
}

// gangPods chooses, from pending (in task order), the pods that make the job ready: every
// child of a level counting pods, and the children lacking the fewest pods of a level counting
// sub-groups (ties to the first in name order).
func (t *gangTree) gangPods(pending []*PodInfo) ([]*PodInfo, error) {
	chosen, err := t.complete(-1, pending)
	if err != nil {
		return nil, err
	}
	if t.job.MinSubGroup == nil {
		// The job's own pod count, beyond its sub-groups: any pending pods, in task order.
		for _, p := range pending {
			if t.total+int32(len(chosen)) >= t.job.MinMember {
				break
			}
			if !slices.Contains(chosen, p) {
				chosen = append(chosen, p)
			}
		}
		if lacking := t.job.MinMember - t.total - int32(len(chosen)); lacking > 0 {
			return nil, fmt.Errorf("gang needs %d pods but the job has only %d", t.job.MinMember, t.total+int32(len(chosen)))
		}
	}
	return chosen, nil
}

// complete returns the pending pods that make sub-group i (the job: -1) ready, or why it
// cannot be.
func (t *gangTree) complete(i int, pending []*PodInfo) ([]*PodInfo, error) {
	var chosen []*PodInfo
	minSub, minMember := t.minimumOf(i)
	if i >= 0 && t.ready[i] {
		return nil, nil
	}
	if minSub == nil {
		if i >= 0 {
			lacking := minMember - t.own[i]
			for _, p := range pending {
				if lacking <= 0 {
					break
				}
				if p.SubGroup == t.job.SubGroups[i].Name {
					chosen = append(chosen, p)
					lacking--
				}
			}
			if lacking > 0 {
				return nil, fmt.Errorf("sub-group %q needs %d more pods than it has", t.job.SubGroups[i].Name, lacking)
			}
		}
		for _, c := range t.children[t.slot(i)] {
			more, err := t.complete(c, pending)
			if err != nil {
				return nil, err
			}
			chosen = append(chosen, more...)
		}
		return chosen, nil
	}
	type option struct {
		pods []*PodInfo
		err  error
	}
	children := t.children[t.slot(i)]
	if int(*minSub) > len(children) {
		return nil, fmt.Errorf("%s needs %d ready sub-groups but has only %d", t.levelName(i), *minSub, len(children))
	}
	options := make([]option, len(children))
	for k, c := range children {
		options[k].pods, options[k].err = t.complete(c, pending)
	}
	order := make([]int, len(children))
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if (options[a].err == nil) != (options[b].err == nil) {
			if options[a].err == nil {
				return -1
			}
			return 1
		}
		return cmp.Compare(len(options[a].pods), len(options[b].pods))
	})
	for k := range int(*minSub) {
		if o := options[order[k]]; o.err != nil {
			return nil, fmt.Errorf("%s needs %d ready sub-groups but only %d can be: %w", t.levelName(i), *minSub, k, o.err)
		}
		chosen = append(chosen, options[order[k]].pods...)
	}
	return chosen, nil
}

func (t *gangTree) levelName(i int) string {
	if i < 0 {
		return "gang"
	}
	return fmt.Sprintf("sub-group %q", t.job.SubGroups[i].Name)
}

// minPods is the fewest pods with which level i can be ready, by the same rule.
func (t *gangTree) minPods(i int) int32 {
	minSub, minMember := t.minimumOf(i)
	children := t.children[t.slot(i)]
	costs := make([]int32, len(children))
	for k, c := range children {
		costs[k] = t.minPods(c)
	}
	if minSub != nil {
		slices.Sort(costs)
		var sum int32
		for _, c := range costs[:min(int(*minSub), len(costs))] {
			sum += c
		}
		return sum
	}
	var sum int32
	for _, c := range costs {
		sum += c
	}
	if i < 0 {
		return max(minMember, sum) // the job's count includes its sub-groups' pods
	}
	return minMember + sum // a sub-group's count is of its own pods
}

// MinMemberOf is the pod minimum of a PodGroup or sub-group level as the scheduler reads it:
// none beside MinSubGroup (the API refuses both), otherwise at least one, since an absent
// minMember makes a gang of one.
func MinMemberOf(minMember int32, minSubGroup *int32) int32 {
	if minSubGroup != nil {
		return 0
	}
	return max(minMember, 1)
}

// UntangleSubGroups makes the sub-groups a tree: a parent that names no sub-group, or whose
// chain of parents comes back to the sub-group, is dropped, so the sub-group hangs from the
// job and is still checked. The API refuses unknown parents but cannot see loops.
func UntangleSubGroups(groups []SubGroupInfo) {
	job := JobInfo{SubGroups: groups}
	for i := range groups {
		seen := 0
		for p := job.subGroupIndex(groups[i].Parent); p >= 0; p = job.subGroupIndex(groups[p].Parent) {
			if p == i || seen > len(groups) {
				groups[i].Parent = ""
				break
			}
			seen++
		}
		if job.subGroupIndex(groups[i].Parent) < 0 {
			groups[i].Parent = ""
		}
	}
}

// GangReport says how far a job counting sub-groups is from its minimum, counting the pods
// placed: what the job needs and has, then each sub-group that is not ready, with what it
// needs and has. Explanations and pending reasons show it, so that a user sees which
// replicas hold the job back.
func (j *JobInfo) GangReport() (summary string, short []string) {
	t := j.newGangTree(placedStatus)
	summary = t.levelReport(-1)
	for i, sg := range j.SubGroups {
		if !t.ready[i] {
			short = append(short, "sub-group "+sg.Name+" "+t.levelReport(i))
		}
	}
	return summary, short
}

// levelReport says what level i needs and has.
func (t *gangTree) levelReport(i int) string {
	minSub, minMember := t.minimumOf(i)
	s := t.slot(i)
	if minSub != nil {
		return fmt.Sprintf("needs %d of its %d sub-groups ready (at least %d pods): %d are", *minSub, len(t.children[s]), t.minPods(i), t.readyChildren[s])
	}
	if len(t.children[s]) == 0 {
		return fmt.Sprintf("needs %d pods: %d placed", minMember, t.ownOf(i))
	}
	return fmt.Sprintf("needs %d pods and every sub-group in it ready: %d placed, %d of %d sub-groups ready",
		minMember, t.ownOf(i), t.readyChildren[s], len(t.children[s]))
}
