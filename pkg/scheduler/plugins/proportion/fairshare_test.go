package proportion

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

const unlimited = model.Unlimited

// gpuQueue makes a queue with the given GPU policy, default priority, and unlimited CPU and
// memory (quota and limit -1, weight 1), so that tests on GPUs are not disturbed by them.
func gpuQueue(name, parent string, quota, weight, limit float64) *model.QueueInfo {
	q := &model.QueueInfo{Name: name, Parent: parent, Priority: model.DefaultQueuePriority}
	for _, r := range model.QuotaResources {
		q.Resources[r] = model.QueueResourceShare{Quota: unlimited, OverQuotaWeight: 1, Limit: unlimited}
	}
	q.Resources[model.GPU] = model.QueueResourceShare{Quota: quota, OverQuotaWeight: weight, Limit: limit}
	return q
}

func withPriority(q *model.QueueInfo, priority int) *model.QueueInfo {
	q.Priority = priority
	return q
}

// gpuRequests turns GPU amounts per queue into request vectors.
func gpuRequests(gpus map[string]float64) map[string]Vector {
	request := make(map[string]Vector, len(gpus))
	for name, n := range gpus {
		var v Vector
		v[model.GPU] = n
		request[name] = v
	}
	return request
}

func gpuCapacity(gpus float64) Vector {
	var v Vector
	v[model.GPU] = gpus
	return v
}

// seedTree is the shape of the example tree: a -> b -> {c, d}, c -> {leaf1, leaf2},
// d -> {leaf3}, plus an idle top-level queue whose leaf requests nothing.
func seedTree() []*model.QueueInfo {
	return []*model.QueueInfo{
		gpuQueue("a", "", 8, 1, unlimited),
		gpuQueue("b", "a", 8, 1, unlimited),
		gpuQueue("c", "b", 4, 1, unlimited),
		gpuQueue("d", "b", 2, 1, unlimited),
		gpuQueue("leaf1", "c", 2, 1, unlimited),
		gpuQueue("leaf2", "c", 1, 2, unlimited),
		gpuQueue("leaf3", "d", 2, 1, unlimited),
		gpuQueue("idle", "", 4, 1, unlimited),
		gpuQueue("idle-leaf", "idle", 4, 1, unlimited),
	}
}

var seedRequests = map[string]float64{"leaf1": 5, "leaf2": 4, "leaf3": 1}

func TestFairSharesGPU(t *testing.T) {
	tests := []struct {
		name     string
		queues   []*model.QueueInfo
		request  map[string]float64
		capacity float64
		want     map[string]float64 // GPU share of every queue that must be present
	}{
		{"equal weights split the spare above quotas evenly: 4+2 each",
			[]*model.QueueInfo{gpuQueue("a", "", 4, 1, unlimited), gpuQueue("b", "", 4, 1, unlimited)},
			map[string]float64{"a": 10, "b": 10}, 12,
			map[string]float64{"a": 6, "b": 6}},
		{"weights 1 and 3 split the spare 1:3: 4+1 and 4+3",
			[]*model.QueueInfo{gpuQueue("a", "", 4, 1, unlimited), gpuQueue("b", "", 4, 3, unlimited)},
			map[string]float64{"a": 10, "b": 10}, 12,
			map[string]float64{"a": 5, "b": 7}},
		{"a queue requesting less than its quota gets its request and the rest goes to the other",
			[]*model.QueueInfo{gpuQueue("a", "", 4, 1, unlimited), gpuQueue("b", "", 4, 1, unlimited)},
			map[string]float64{"a": 2, "b": 20}, 12,
			map[string]float64{"a": 2, "b": 10}},
		{"a limit of 5 stops at 5 even with spare capacity",
			[]*model.QueueInfo{gpuQueue("a", "", 2, 1, 5), gpuQueue("b", "", 2, 1, unlimited)},
			map[string]float64{"a": 10, "b": 3}, 12,
			map[string]float64{"a": 5, "b": 3}},
		{"limit -1 is unlimited and takes what the limited sibling cannot",
			[]*model.QueueInfo{gpuQueue("a", "", 0, 1, unlimited), gpuQueue("b", "", 0, 1, 5)},
			map[string]float64{"a": 20, "b": 20}, 12,
			map[string]float64{"a": 7, "b": 5}},
		{"limit 0 caps at zero even with a quota",
			[]*model.QueueInfo{gpuQueue("a", "", 4, 1, 0), gpuQueue("b", "", 4, 1, unlimited)},
			map[string]float64{"a": 10, "b": 20}, 12,
			map[string]float64{"a": 0, "b": 12}},
		{"quota -1 deserves its whole request when the parent has it",
			[]*model.QueueInfo{gpuQueue("a", "", unlimited, 1, unlimited), gpuQueue("b", "", 4, 1, unlimited)},
			map[string]float64{"a": 7, "b": 10}, 12,
			map[string]float64{"a": 7, "b": 5}},
		{"priority 200 takes all the over-quota capacity before priority 100",
			[]*model.QueueInfo{
				withPriority(gpuQueue("hi", "", 2, 1, unlimited), 200),
				withPriority(gpuQueue("lo", "", 2, 1, unlimited), 100)},
			map[string]float64{"hi": 10, "lo": 10}, 12,
			map[string]float64{"hi": 10, "lo": 2}},
		{"priority 100 gets what priority 200 does not request",
			[]*model.QueueInfo{
				withPriority(gpuQueue("hi", "", 2, 1, unlimited), 200),
				withPriority(gpuQueue("lo", "", 2, 1, unlimited), 100)},
			map[string]float64{"hi": 6, "lo": 10}, 12,
			map[string]float64{"hi": 6, "lo": 6}},
		{"priority wins over name order, and equal priorities share a level wherever they sort",
			[]*model.QueueInfo{
				withPriority(gpuQueue("a-low", "", 0, 1, unlimited), 100),
				withPriority(gpuQueue("b-high", "", 0, 1, unlimited), 200),
				withPriority(gpuQueue("c-low", "", 0, 1, unlimited), 100)},
			map[string]float64{"a-low": 10, "b-high": 10, "c-low": 10}, 16,
			map[string]float64{"a-low": 3, "b-high": 10, "c-low": 3}},
		{"a high priority ignores its siblings' weights but not the lower level's quota",
			[]*model.QueueInfo{
				withPriority(gpuQueue("hi", "", 0, 1, unlimited), 200),
				withPriority(gpuQueue("lo", "", 3, 100, unlimited), 100)},
			map[string]float64{"hi": 20, "lo": 20}, 12,
			map[string]float64{"hi": 9, "lo": 3}},
		{"weight 0 gets nothing above its quota",
			[]*model.QueueInfo{gpuQueue("a", "", 4, 0, unlimited), gpuQueue("b", "", 4, 1, unlimited)},
			map[string]float64{"a": 10, "b": 10}, 12,
			map[string]float64{"a": 4, "b": 8}},
		{"with every weight 0 the spare stays unassigned",
			[]*model.QueueInfo{gpuQueue("a", "", 4, 0, unlimited), gpuQueue("b", "", 4, 0, unlimited)},
			map[string]float64{"a": 10, "b": 10}, 12,
			map[string]float64{"a": 4, "b": 4}},
		{"over-subscribed quotas 6 and 12 on 12 GPUs are each owed in full, and nothing is over quota",
			[]*model.QueueInfo{gpuQueue("a", "", 6, 1, unlimited), gpuQueue("b", "", 12, 1, unlimited)},
			map[string]float64{"a": 20, "b": 20}, 12,
			map[string]float64{"a": 6, "b": 12}},
		{"over-subscribed: a queue asking less than its quota deserves its request, the other its whole quota",
			[]*model.QueueInfo{gpuQueue("a", "", 6, 1, unlimited), gpuQueue("b", "", 12, 1, unlimited)},
			map[string]float64{"a": 3, "b": 20}, 12,
			map[string]float64{"a": 3, "b": 12}},
		{"quota -1 deserves at most what its parent has, and does not shrink a sibling's quota",
			[]*model.QueueInfo{gpuQueue("a", "", unlimited, 1, unlimited), gpuQueue("b", "", 4, 1, unlimited)},
			map[string]float64{"a": 20, "b": 10}, 12,
			map[string]float64{"a": 12, "b": 4}},
		{"one waiting job in a queue of quota -1 takes nothing from a quota that fills the cluster",
			[]*model.QueueInfo{
				gpuQueue("production", "", 16, 1, unlimited),
				gpuQueue("research", "", 0, 1, unlimited),
				gpuQueue("default-parent-queue", "", unlimited, 1, unlimited),
				gpuQueue("default-queue", "default-parent-queue", unlimited, 1, unlimited)},
			map[string]float64{"production": 16, "research": 16, "default-queue": 1}, 16,
			map[string]float64{"production": 16, "research": 0, "default-parent-queue": 1, "default-queue": 1}},
		{"water-filling: when one of three equal queues is full the other two split the rest",
			[]*model.QueueInfo{
				gpuQueue("a", "", 0, 1, unlimited),
				gpuQueue("b", "", 0, 1, unlimited),
				gpuQueue("c", "", 0, 1, unlimited)},
			map[string]float64{"a": 1, "b": 20, "c": 20}, 12,
			map[string]float64{"a": 1, "b": 5.5, "c": 5.5}},
		{"water-filling redistributes across several rounds by weight",
			[]*model.QueueInfo{
				gpuQueue("a", "", 0, 1, unlimited),
				gpuQueue("b", "", 0, 2, 5),
				gpuQueue("c", "", 0, 4, unlimited)},
			map[string]float64{"a": 1, "b": 20, "c": 20}, 17,
			// round 1 gives 17/7 x (1, 2, 4): a stops at 1; round 2 gives b and c the rest 1:2,
			// b stops at its limit 5; round 3 gives c the rest.
			map[string]float64{"a": 1, "b": 5, "c": 11}},
		{"capacity nobody requests stays unassigned",
			[]*model.QueueInfo{gpuQueue("a", "", 4, 1, unlimited), gpuQueue("b", "", 4, 1, unlimited)},
			map[string]float64{"a": 1, "b": 2}, 12,
			map[string]float64{"a": 1, "b": 2}},
		{"seed tree: the parent's share is divided down three levels",
			seedTree(), seedRequests, 8,
			// a and b deserve 8; c deserves 4 and d its request 1; c takes the spare 3 and
			// gives leaf1 2+4/3 and leaf2 1+8/3 (weights 1 and 2).
			map[string]float64{"a": 8, "b": 8, "c": 7, "d": 1,
				"leaf1": 2 + 4.0/3, "leaf2": 1 + 8.0/3, "leaf3": 1, "idle": 0, "idle-leaf": 0}},
		{"seed tree: inner queues get exactly what their leaves request when it all fits",
			seedTree(), seedRequests, 100,
			map[string]float64{"a": 10, "b": 10, "c": 9, "d": 1,
				"leaf1": 5, "leaf2": 4, "leaf3": 1, "idle": 0, "idle-leaf": 0}},
		{"a parent's quota and limit bound its whole subtree",
			[]*model.QueueInfo{
				gpuQueue("p", "", 2, 1, 3),
				gpuQueue("p1", "p", 2, 1, unlimited),
				gpuQueue("p2", "p", 2, 1, unlimited),
				gpuQueue("q", "", 2, 1, unlimited)},
			map[string]float64{"p1": 10, "p2": 10, "q": 10}, 12,
			// p's share is its limit 3; p1 and p2 still deserve their quotas, 4 of its 3 in
			// all: the limit, not a smaller share, is what keeps p within 3.
			map[string]float64{"p": 3, "p1": 2, "p2": 2, "q": 9}},
		{"a child's limit does not lower its parent's request: the unusable share stays with the parent",
			[]*model.QueueInfo{
				gpuQueue("p", "", 0, 1, unlimited),
				gpuQueue("pc", "p", 0, 1, 2),
				gpuQueue("q", "", 0, 1, unlimited)},
			map[string]float64{"pc": 10, "q": 10}, 12,
			map[string]float64{"p": 6, "pc": 2, "q": 6}},
		{"invalid queues (cycle, orphan and its child) are absent and take nothing",
			[]*model.QueueInfo{
				gpuQueue("x", "y", 4, 1, unlimited),
				gpuQueue("y", "x", 4, 1, unlimited),
				gpuQueue("orphan", "gone", 4, 1, unlimited),
				gpuQueue("orphan-child", "orphan", 4, 1, unlimited),
				gpuQueue("ok", "", 0, 1, unlimited)},
			map[string]float64{"x": 10, "y": 10, "orphan-child": 10, "ok": 10}, 12,
			map[string]float64{"ok": 10}},
		{"requests for unknown and inner queues are ignored",
			[]*model.QueueInfo{gpuQueue("p", "", 0, 1, unlimited), gpuQueue("leaf", "p", 0, 1, unlimited)},
			map[string]float64{"p": 10, "unknown": 10, "leaf": 3}, 12,
			map[string]float64{"p": 3, "leaf": 3}},
		{"negative and NaN requests count as zero",
			[]*model.QueueInfo{gpuQueue("a", "", 4, 1, unlimited), gpuQueue("b", "", 4, 1, unlimited)},
			map[string]float64{"a": -5, "b": math.NaN()}, 12,
			map[string]float64{"a": 0, "b": 0}},
		{"zero capacity: quotas are still owed, and nothing is over quota",
			[]*model.QueueInfo{gpuQueue("a", "", 4, 1, unlimited), gpuQueue("b", "", 0, 1, unlimited)},
			map[string]float64{"a": 10, "b": 10}, 0,
			map[string]float64{"a": 4, "b": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FairShares(model.NewQueueTree(tt.queues), gpuRequests(tt.request), gpuCapacity(tt.capacity))
			if len(got) != len(tt.want) {
				t.Errorf("got shares for %v, want exactly %v", sortedKeys(got), sortedKeys(tt.want))
			}
			for name, want := range tt.want {
				share, ok := got[name]
				if !ok {
					t.Errorf("%s: no share", name)
					continue
				}
				if !near(share[model.GPU], want) {
					t.Errorf("%s: GPU share %v, want %v", name, share[model.GPU], want)
				}
			}
		})
	}
}

func TestFairSharesDividesResourcesIndependently(t *testing.T) {
	a := gpuQueue("a", "", 4, 1, unlimited)
	a.Resources[model.CPU] = model.QueueResourceShare{Quota: 1000, OverQuotaWeight: 0, Limit: unlimited}
	b := gpuQueue("b", "", 4, 1, unlimited)
	b.Resources[model.Memory] = model.QueueResourceShare{Quota: 0, OverQuotaWeight: 1, Limit: 1 << 30}
	tree := model.NewQueueTree([]*model.QueueInfo{a, b})
	request := map[string]Vector{
		"a": {model.CPU: 4000, model.Memory: 8 << 30, model.GPU: 2},
		"b": {model.CPU: 4000, model.Memory: 8 << 30, model.GPU: 10},
	}
	got := FairShares(tree, request, Vector{model.CPU: 6000, model.Memory: 16 << 30, model.GPU: 12})
	want := map[string]Vector{
		// CPU: a deserves 1000 (weight 0), b its unlimited-quota request 4000; 1000 unassigned.
		// Memory: a deserves its request 8Gi, b is limited to 1Gi.
		// GPU: a requests 2, b takes the rest up to its request 10.
		"a": {model.CPU: 1000, model.Memory: 8 << 30, model.GPU: 2},
		"b": {model.CPU: 4000, model.Memory: 1 << 30, model.GPU: 10},
	}
	for name, w := range want {
		for _, r := range model.QuotaResources {
			if g := got[name][r]; !near(g, w[r]) {
				t.Errorf("%s %v: share %v, want %v", name, r, g, w[r])
			}
		}
	}
}

func TestFairSharesIsDeterministic(t *testing.T) {
	queues, request := randomTree(rand.New(rand.NewPCG(1, 2)), 200)
	first := FairShares(model.NewQueueTree(queues), request, gpuCapacity(50))
	for i := range 5 {
		again, _ := randomTree(rand.New(rand.NewPCG(1, 2)), 200) // fresh QueueInfo values
		if got := FairShares(model.NewQueueTree(again), request, gpuCapacity(50)); !reflect.DeepEqual(got, first) {
			t.Fatalf("run %d differs from the first", i+1)
		}
	}
}

// TestFairSharesInvariants checks, on random trees, the properties every division must have:
// every queue deserves its quota in full (-1: all its parent has), capped by its request and
// limit, whatever its siblings ask; nobody exceeds its request or limit; what siblings get
// above their deserved quotas never adds up to more than their parent has left over them;
// and capacity stays unassigned only when no hungry queue could take it.
func TestFairSharesInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for round := range 200 {
		queues, request := randomTree(rng, 1+rng.IntN(60))
		capacity := gpuCapacity(float64(rng.IntN(100)))
		tree := model.NewQueueTree(queues)
		shares, deserved := Shares(tree, request, capacity)
		requested := map[string]float64{}
		for _, name := range tree.Names() {
			if q := tree.Get(name); q.IsValid() && q.IsLeaf() {
				for _, up := range tree.Ancestry(name) {
					requested[up] += request[name][model.GPU]
				}
			}
		}
		check := func(parent string, amount float64, children []string) {
			deservedSum, overQuota, spareTaker := 0.0, 0.0, ""
			for _, name := range children {
				q := tree.Get(name)
				share, ceiling := shares[name][model.GPU], requested[name]
				if l := q.Resources[model.GPU].Limit; l >= 0 {
					ceiling = math.Min(ceiling, l)
				}
				owed := q.Resources[model.GPU].Quota
				if owed < 0 {
					owed = amount
				}
				if d := deserved[name][model.GPU]; !near(d, math.Min(owed, ceiling)) || d > share+1e-9 {
					t.Fatalf("round %d: %s deserves %v, want min(quota %v, request and limit %v), at most its fair share %v",
						round, name, d, owed, ceiling, share)
				}
				if share < -1e-9 || share > ceiling+1e-6 {
					t.Fatalf("round %d: %s share %v outside [0, %v]", round, name, share, ceiling)
				}
				if q.Resources[model.GPU].OverQuotaWeight > 0 && share < ceiling-1e-6 {
					spareTaker = name
				}
				deservedSum += deserved[name][model.GPU]
				overQuota += share - deserved[name][model.GPU]
			}
			left := math.Max(0, amount-deservedSum)
			if overQuota > left+1e-6*math.Max(amount, 1) {
				t.Fatalf("round %d: children of %q get %v over quota, but only %v is left over their quotas", round, parent, overQuota, left)
			}
			if spareTaker != "" && overQuota < left-1e-6*math.Max(amount, 1) {
				t.Fatalf("round %d: %v of %q unassigned while %s is hungry", round, left-overQuota, parent, spareTaker)
			}
		}
		var top []string
		for _, name := range tree.Names() {
			_, present := shares[name]
			if q := tree.Get(name); present != q.IsValid() {
				t.Fatalf("round %d: %s has a share: %v, is valid: %v", round, name, present, q.IsValid())
			} else if q.Parent == "" {
				top = append(top, name)
			}
		}
		check("", capacity[model.GPU], top)
		for name := range shares {
			check(name, shares[name][model.GPU], tree.Get(name).Children)
		}
	}
}

// randomTree builds n queues with random parents (some missing or cyclic), policies and
// priorities, and requests for every queue (inner and invalid ones included, to be ignored).
func randomTree(rng *rand.Rand, n int) ([]*model.QueueInfo, map[string]Vector) {
	queues := make([]*model.QueueInfo, n)
	request := map[string]float64{}
	for i := range queues {
		parent := ""
		switch k := rng.IntN(10); {
		case k == 0:
			parent = "missing"
		case k == 1:
			parent = fmt.Sprintf("q%03d", rng.IntN(n)) // may form a cycle
		case k < 6 && i > 0:
			parent = fmt.Sprintf("q%03d", rng.IntN(i))
		}
		quota := float64(rng.IntN(8)) - 1
		limit := float64(rng.IntN(12)) - 1
		if rng.IntN(3) == 0 {
			limit = unlimited
		}
		q := gpuQueue(fmt.Sprintf("q%03d", i), parent, quota, float64(rng.IntN(4)), limit)
		q.Priority = 100 * (1 + rng.IntN(3))
		queues[i] = q
		request[q.Name] = float64(rng.IntN(12))
	}
	return queues, gpuRequests(request)
}

func near(got, want float64) bool {
	return math.Abs(got-want) <= 1e-6*math.Max(1, math.Abs(want))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// BenchmarkFairShares divides a 10 x 10 x 10 tree (1110 queues, 1000 requesting leaves) on
// every resource, as one scheduling cycle does.
func BenchmarkFairShares(b *testing.B) {
	var queues []*model.QueueInfo
	request := map[string]Vector{}
	for i := range 10 {
		top := fmt.Sprintf("t%d", i)
		queues = append(queues, withPriority(gpuQueue(top, "", 40, float64(1+i%3), unlimited), 100+100*(i%2)))
		for j := range 10 {
			mid := fmt.Sprintf("%s-m%d", top, j)
			queues = append(queues, gpuQueue(mid, top, 4, float64(1+j%4), float64(8+j)))
			for k := range 10 {
				leaf := fmt.Sprintf("%s-l%d", mid, k)
				queues = append(queues, gpuQueue(leaf, mid, float64(k%3), float64(k%5), unlimited))
				request[leaf] = Vector{model.CPU: float64(1000 * (k + 1)), model.Memory: float64((k + 1) << 30), model.GPU: float64(k % 4)}
			}
		}
	}
	tree := model.NewQueueTree(queues)
	capacity := Vector{model.CPU: 2_000_000, model.Memory: 1 << 42, model.GPU: 512}
	b.ReportAllocs()
	for b.Loop() {
		FairShares(tree, request, capacity)
	}
}

// Under a parent limited to 4 GPUs, children with quotas 3 and 21 cannot both get their
// quota: each still deserves it in full (capped by its own request and limit), none is
// scaled for the other, and neither deserves more than its fair share, so "within quota" can
// never contradict "within fair share".
func TestDeservedIsOwedInFullAndNeverAboveFairShare(t *testing.T) {
	queues := []*model.QueueInfo{
		gpuQueue("parent", "", unlimited, 1, 4),
		gpuQueue("small", "parent", 3, 3, 6),
		gpuQueue("large", "parent", 21, 0, 11),
	}
	fair, deserved := Shares(model.NewQueueTree(queues), gpuRequests(map[string]float64{"small": 4, "large": 4}), gpuCapacity(16))
	// small deserves min(3, 4) = 3 and large min(21, 11, 4) = 4: 7 owed of the parent's 4.
	want := map[string]float64{"small": 3, "large": 4}
	for name, d := range want {
		if got := deserved[name][model.GPU]; math.Abs(got-d) > 1e-9 {
			t.Errorf("%s deserves %v GPUs, want %v", name, got, d)
		}
		if deserved[name][model.GPU] > fair[name][model.GPU]+1e-9 {
			t.Errorf("%s deserves %v, above its fair share %v", name, deserved[name][model.GPU], fair[name][model.GPU])
		}
	}
	if got := deserved["parent"][model.GPU]; got != 4 {
		t.Errorf("parent deserves %v GPUs, want its limit 4", got)
	}
}
