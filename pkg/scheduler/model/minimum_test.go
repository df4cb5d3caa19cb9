package model

import (
	"fmt"
	"strings"
	"testing"
)

func minSub(n int32) *int32 { return &n }

// replicaJob is upstream's elastic gang: replicas r-0.. of size pods each (minMember size),
// ready when minSubGroup of them are. running[r] of replica r's pods run, the rest pend.
func replicaJob(minSubGroup *int32, size int32, running ...int) *JobInfo {
	j := &JobInfo{ID: "ns/j", Name: "j", MinSubGroup: minSubGroup}
	for r, n := range running {
		name := fmt.Sprintf("r-%d", r)
		j.SubGroups = append(j.SubGroups, SubGroupInfo{Name: name, MinMember: size})
		for k := range int(size) {
			pod := &PodInfo{Namespace: "ns", Name: fmt.Sprintf("j-%d-%d", r, k), Job: j.ID, SubGroup: name, Status: Pending}
			if k < n {
				pod.Status = Running
			}
			j.AddPod(pod)
		}
	}
	return j
}

// twoLevelJob is upstream's second example: decode and prefill, each a leader (1 pod) and
// workers (4 pods), both needed in each; the job needs rootMin of decode and prefill.
func twoLevelJob(rootMin int32) *JobInfo {
	j := &JobInfo{ID: "ns/t", Name: "t", MinSubGroup: minSub(rootMin)}
	for _, part := range []string{"decode", "prefill"} {
		j.SubGroups = append(j.SubGroups, SubGroupInfo{Name: part, MinSubGroup: minSub(2)},
			SubGroupInfo{Name: part + "-leaders", Parent: part, MinMember: 1},
			SubGroupInfo{Name: part + "-workers", Parent: part, MinMember: 4})
		for k := range 5 {
			group := part + "-workers"
			if k == 0 {
				group = part + "-leaders"
			}
			j.AddPod(&PodInfo{Namespace: "ns", Name: fmt.Sprintf("%s-%d", part, k), Job: j.ID, SubGroup: group, Status: Running})
		}
	}
	return j
}

func podNamed(j *JobInfo, name string) *PodInfo {
	for _, p := range j.Pods {
		if p.Name == name {
			return p
		}
	}
	panic("no pod " + name)
}

// evictInTurn loses the named pods one by one while the guard allows it, and returns what
// it said of each: "" for a loss allowed, the shortfall for one refused (not taken).
func evictInTurn(j *JobInfo, names ...string) []string {
	guard := j.NewMinimumGuard()
	var said []string
	for _, name := range names {
		p := podNamed(j, name)
		if short := guard.Shortfall(p); short.Breaks() {
			said = append(said, short.String())
			continue
		}
		said = append(said, "")
		guard.Lose(p)
	}
	return said
}

func TestMinimumGuardKeepsMinSubGroupReadyReplicas(t *testing.T) {
	j := replicaJob(minSub(3), 2, 2, 2, 2, 2)
	got := evictInTurn(j, "j-3-1", "j-3-0", "j-2-1", "j-2-0", "j-0-0")
	want := []string{"", "", "2 ready sub-groups where its gang needs 3", "2 ready sub-groups where its gang needs 3",
		"2 ready sub-groups where its gang needs 3"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("want %q\n got %q", want, got)
	}
}

func TestMinimumGuardLetsAReplicaThatIsNotCountedGoWhole(t *testing.T) {
	// r-3 runs 1 of its 2 pods: not ready, so not counted; the 3 ready ones are all needed.
	j := replicaJob(minSub(3), 2, 2, 2, 2, 1)
	got := evictInTurn(j, "j-3-0", "j-1-1", "j-0-0")
	want := []string{"", "2 ready sub-groups where its gang needs 3", "2 ready sub-groups where its gang needs 3"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("want %q\n got %q", want, got)
	}
}

func TestMinimumGuardMinSubGroupZeroAsksNothing(t *testing.T) {
	j := replicaJob(minSub(0), 2, 2, 2)
	got := evictInTurn(j, "j-0-0", "j-0-1", "j-1-0", "j-1-1")
	if strings.Join(got, "") != "" {
		t.Fatalf("every pod may go under minSubGroup 0, got %q", got)
	}
	if !replicaJob(minSub(0), 2, 0, 0).IsGangSatisfied() {
		t.Fatal("a job with minSubGroup 0 has no gang to wait for")
	}
	if gang, err := replicaJob(minSub(0), 2, 0, 0).GangPods(byName); err != nil || len(gang) != 0 {
		t.Fatalf("gang %v, %v; want none", gang, err)
	}
}

func TestMinimumGuardNestedLevels(t *testing.T) {
	// Both parts needed: any worker taken breaks its part, and with it the job.
	got := evictInTurn(twoLevelJob(2), "decode-4")
	if want := "1 ready sub-groups where its gang needs 2"; got[0] != want {
		t.Fatalf("want %q, got %q", want, got[0])
	}
	// One part is enough: decode may go down, pod by pod, once it no longer counts; then
	// prefill is the one kept.
	got = evictInTurn(twoLevelJob(1), "decode-4", "decode-0", "decode-3", "prefill-4", "prefill-0")
	want := []string{"", "", "", "0 ready sub-groups where its gang needs 1", "0 ready sub-groups where its gang needs 1"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("want %q\n got %q", want, got)
	}
}

func TestMinimumGuardNamesAPodLevelNeededWholeByItsParent(t *testing.T) {
	// The job counts pods (3) and needs every top-level sub-group; "a" counts its children
	// (1 of them), "b" counts its own pods (2).
	j := &JobInfo{ID: "ns/n", Name: "n", MinMember: 3, SubGroups: []SubGroupInfo{
		{Name: "a", MinSubGroup: minSub(1)}, {Name: "a0", Parent: "a", MinMember: 1}, {Name: "a1", Parent: "a", MinMember: 1},
		{Name: "b", MinMember: 2},
	}}
	for i, g := range []string{"a0", "a1", "b", "b", "b"} {
		j.AddPod(&PodInfo{Namespace: "ns", Name: fmt.Sprintf("n-%d", i), Job: j.ID, SubGroup: g, Status: Running})
	}
	// n-4 leaves b its 2; n-3 would not; n-0 takes a0, and a keeps a1 ready; then the job
	// is at its 3 pods.
	got := evictInTurn(j, "n-4", "n-3", "n-0", "n-1")
	want := []string{"", "1 pods where its sub-group b needs 2", "", "2 pods where its gang needs 3"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("want %q\n got %q", want, got)
	}
}

func byName(l, r *PodInfo) int { return strings.Compare(l.Name, r.Name) }

func TestGangPodsCompletesTheCheapestReplicas(t *testing.T) {
	// r-1 runs fully; r-3 lacks one pod; r-0 and r-2 lack both: the gang is r-3's last pod
	// and r-0's two (the first in name order among equals).
	j := replicaJob(minSub(3), 2, 0, 2, 0, 1)
	if j.IsGangSatisfied() {
		t.Fatal("1 ready replica is not 3")
	}
	gang, err := j.GangPods(byName)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range gang {
		names = append(names, p.Name)
	}
	if got, want := strings.Join(names, ","), "j-3-1,j-0-0,j-0-1"; got != want {
		t.Fatalf("gang %s, want %s", got, want)
	}
	for _, p := range gang {
		p.Status = Allocated
	}
	if !j.IsGangSatisfied() {
		t.Fatal("3 ready replicas satisfy minSubGroup 3")
	}
}

func TestGangPodsRefusesTooFewReplicas(t *testing.T) {
	j := replicaJob(minSub(3), 2, 0, 0)
	if _, err := j.GangPods(byName); err == nil || !strings.Contains(err.Error(), "gang needs 3 ready sub-groups but has only 2") {
		t.Fatalf("want a refusal naming the 3 sub-groups needed, got %v", err)
	}
}

func TestGangSizeCountsTheCheapestReadyTree(t *testing.T) {
	for _, c := range []struct {
		job  *JobInfo
		want int32
	}{
		{replicaJob(minSub(3), 8, 0, 0, 0, 0), 24},
		{twoLevelJob(2), 10},
		{twoLevelJob(1), 5},
		{replicaJob(minSub(0), 8, 0, 0), 0},
		{&JobInfo{MinMember: 3, SubGroups: []SubGroupInfo{{Name: "a", MinMember: 2}}}, 3}, // no minSubGroup: MinMember, as always
	} {
		if got := c.job.GangSize(); got != c.want {
			t.Errorf("%s: gang size %d, want %d", c.job.Name, got, c.want)
		}
	}
}

func TestMinMemberOfIsExclusiveWithMinSubGroup(t *testing.T) {
	if got := MinMemberOf(0, nil); got != 1 {
		t.Errorf("absent minMember without minSubGroup: %d, want a gang of one", got)
	}
	if got := MinMemberOf(4, nil); got != 4 {
		t.Errorf("minMember 4: %d", got)
	}
	if got := MinMemberOf(0, minSub(0)); got != 0 {
		t.Errorf("beside minSubGroup the level counts no pods, got %d", got)
	}
}

func TestUntangleSubGroupsBreaksLoopsAndUnknownParents(t *testing.T) {
	groups := []SubGroupInfo{{Name: "a", Parent: "b"}, {Name: "b", Parent: "a"}, {Name: "c", Parent: "nobody"}, {Name: "d", Parent: "c"}}
	UntangleSubGroups(groups)
	var parents []string
	for _, g := range groups {
		parents = append(parents, g.Name+"<"+g.Parent)
	}
	if got, want := strings.Join(parents, " "), "a< b<a c< d<c"; got != want {
		t.Fatalf("parents %s, want %s", got, want)
	}
}

// A job without minSubGroup keeps the flat rule and its words.
func TestMinimumGuardFlatJobUnchanged(t *testing.T) {
	j := &JobInfo{ID: "ns/f", Name: "f", MinMember: 1, SubGroups: []SubGroupInfo{{Name: "w", MinMember: 2}}}
	for i := range 3 {
		j.AddPod(&PodInfo{Namespace: "ns", Name: fmt.Sprintf("f-%d", i), Job: j.ID, SubGroup: "w", Status: Running})
	}
	got := evictInTurn(j, "f-2", "f-1")
	if want := []string{"", "1 pods where its sub-group w needs 2"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("want %q\n got %q", want, got)
	}
}

// A Job of 4 parallel pods whose 3 pods succeeded and whose fourth failed and was recreated:
// the retried pod is all that is left of the gang, so it is the gang (upstream KAI's Jobs
// deadlock here, waiting for peers that will never come again).
func TestSucceededPodsCountTowardTheGang(t *testing.T) {
	j := &JobInfo{ID: "ns/j", Name: "j", MinMember: 4, SucceededPods: 3}
	retry := &PodInfo{Namespace: "ns", Name: "j-3", Job: j.ID, Status: Pending}
	j.AddPod(retry)
	gang, err := j.GangPods(func(l, r *PodInfo) int { return strings.Compare(l.Name, r.Name) })
	if err != nil || len(gang) != 1 || gang[0] != retry {
		t.Fatalf("gang %v, %v; want the retried pod alone", gang, err)
	}
	if j.IsGangSatisfied() {
		t.Error("the gang is satisfied before the retried pod is placed")
	}
	retry.Status = Allocated
	if !j.IsGangSatisfied() {
		t.Error("with 3 succeeded and the retry placed, the gang of 4 is not satisfied")
	}
}
