package property

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// judgeHanded judges a hand-made timeline, giving each of its binds that names no devices
// the devices kai-sim's node would (withDevices): the cases of the other properties need
// not write them, and D3 still holds every bind to its devices.
func judgeHanded(s *Scenario, r *report.Result) ([]Failure, Figures) {
	return Judge(s, withDevices(s, r))
}

// withDevices gives every Bind of a whole-GPU pod that names no devices the lowest devices of
// its node that no pod holds (bound, or evicted and still terminating, as the oracle counts
// holding), as kai-sim's device plugin hands them out. Binds that name devices keep theirs,
// and are counted as holding them.
func withDevices(s *Scenario, r *report.Result) *report.Result {
	out := *r
	out.Events = slices.Clone(r.Events)
	slices.SortStableFunc(out.Events, func(a, b report.Event) int { return cmp.Compare(a.Time, b.Time) })
	type hold struct {
		pod, job    string
		devices     []int
		began, gone float64
	}
	held := map[string][]*hold{} // by node
	jobs, grace := map[string]*Job{}, map[string]int{}
	for _, j := range s.Jobs {
		jobs["default/"+j.Name] = j
		for _, p := range j.Pods {
			grace[p.Name] = p.Grace
		}
	}
	bound := func(pod string) *hold {
		for _, list := range held {
			for _, h := range list {
				if h.pod == pod && math.IsInf(h.gone, 1) {
					return h
				}
			}
		}
		return nil
	}
	for i := range out.Events {
		e := &out.Events[i]
		switch e.Type {
		case report.EventBind:
			list := slices.DeleteFunc(held[e.Node], func(h *hold) bool { return h.gone <= e.Time && h.began < e.Time })
			if job := jobs[e.PodGroup]; e.GPUDevices == nil && job != nil && job.Share == nil {
				for d := 0; len(e.GPUDevices) < job.GPUs && d < 64; d++ {
					if !slices.ContainsFunc(list, func(h *hold) bool { return slices.Contains(h.devices, d) }) {
						e.GPUDevices = append(e.GPUDevices, d)
					}
				}
			}
			held[e.Node] = append(list, &hold{pod: e.Pod, job: e.PodGroup, devices: e.GPUDevices, gone: math.Inf(1)})
		case report.EventEvict:
			if h := bound(e.Pod); h != nil {
				h.began, h.gone = e.Time, e.Time+float64(grace[e.Pod])
			}
		case report.EventFail:
			if h := bound(e.Pod); h != nil {
				h.began, h.gone = e.Time, e.Time
			}
		case report.EventComplete:
			for node, list := range held {
				held[node] = slices.DeleteFunc(list, func(h *hold) bool { return h.job == e.PodGroup })
			}
		}
	}
	return &out
}

// sharedNode is one node of 2 GPUs whose devices have 40 GB (the label in bytes), a queue
// team, and one-pod jobs of it, each asking for the share given (nil: one whole GPU).
func sharedNode(shares map[string]*Share) *Scenario {
	s := &Scenario{Nodes: []Node{{Name: "node-0", GPUs: 2, GPUMemory: "42949672960"}}, Period: time.Second, Horizon: time.Hour,
		Queues: []*Queue{{Name: "team", Quota: 2, Limit: -1, Leaf: true}}}
	for _, name := range slices.Sorted(maps.Keys(shares)) {
		j := &Job{Name: name, Queue: "team", PriorityClass: "train", Priority: 50, MinMember: 1, Pods: []Pod{{Name: name + "-0", Grace: 5}}}
		if shares[name] == nil {
			j.GPUs = 1
		} else {
			j.Share = shares[name]
		}
		s.Jobs = append(s.Jobs, j)
	}
	return s
}

// onDevices binds job's pod onto node-0's devices, starts it, and completes it 100 s later.
func onDevices(t float64, job string, devices ...int) []report.Event {
	e := ev(t, report.EventBind, job, job+"-0")
	e.Node, e.GPUDevices = "node-0", devices
	return []report.Event{e, ev(t, report.EventStart, job), ev(t+100, report.EventComplete, job)}
}

// The device properties fail on a timeline that breaks them, and pass the same devices used
// right: shares up to one whole device, a device given whole once its last share is gone.
func TestOracleJudgesDevices(t *testing.T) {
	half, quarter, mem := &Share{Fraction: 0.5, Devices: 1}, &Share{Fraction: 0.25, Devices: 1}, &Share{MemoryMiB: 20000, Devices: 1}
	wide := &Share{Fraction: 0.5, Devices: 2}
	for _, c := range []struct {
		name   string
		shares map[string]*Share
		run    []report.Event
		want   []string
	}{
		{"two halves and a whole GPU beside them", map[string]*Share{"a": half, "b": half, "w": nil},
			slices.Concat(onDevices(0, "a", 0), onDevices(0, "b", 0), onDevices(0, "w", 1)), nil},
		{"three halves on one device", map[string]*Share{"a": half, "b": half, "c": half},
			slices.Concat(onDevices(0, "a", 0), onDevices(0, "b", 0), onDevices(0, "c", 0)), []string{PropDeviceFull}},
		// 20000 MiB of a device of 40900 (40 GiB floored to 100 MiB) is 0.49, beside 0.5.
		{"a memory share counted on its node's devices", map[string]*Share{"a": half, "m": mem},
			slices.Concat(onDevices(0, "a", 0), onDevices(0, "m", 0)), nil},
		{"a memory share that does not fit beside two quarters and a half", map[string]*Share{"a": half, "q": quarter, "m": mem},
			slices.Concat(onDevices(0, "a", 0), onDevices(0, "q", 0), onDevices(0, "m", 0)), []string{PropDeviceFull}},
		{"a share beside a whole-GPU pod", map[string]*Share{"a": half, "w": nil},
			slices.Concat(onDevices(0, "w", 0), onDevices(10, "a", 0)), []string{PropDeviceWhole}},
		{"a whole GPU given a device a share holds", map[string]*Share{"a": half, "w": nil},
			slices.Concat(onDevices(0, "a", 1), onDevices(10, "w", 1)), []string{PropDeviceWhole}},
		{"a whole GPU given the device of a share still terminating", map[string]*Share{"a": half, "w": nil},
			slices.Concat(onDevices(0, "a", 1)[:2], []report.Event{evictOnNode(50, "a", "reclaim", "w")}, onDevices(52, "w", 1),
				onDevices(200, "a", 0)), []string{PropDeviceWhole}},
		{"a whole GPU given the device once the share has gone", map[string]*Share{"a": half, "w": nil},
			slices.Concat(onDevices(0, "a", 1)[:2], []report.Event{evictOnNode(50, "a", "reclaim", "w")}, onDevices(55, "w", 1),
				onDevices(200, "a", 0)), nil},
		{"two whole GPUs on one device", map[string]*Share{"v": nil, "w": nil},
			slices.Concat(onDevices(0, "v", 1), onDevices(10, "w", 1)), []string{PropDeviceWhole}},
		{"shares of two devices fill both", map[string]*Share{"x": wide, "y": wide},
			slices.Concat(onDevices(0, "x", 0, 1), onDevices(0, "y", 1, 0)), nil},
		{"a share of two devices on one device twice", map[string]*Share{"x": wide},
			onDevices(0, "x", 1, 1), []string{PropDevicesAsked}},
		{"a share of two devices given one", map[string]*Share{"x": wide},
			onDevices(0, "x", 1), []string{PropDevicesAsked}},
		{"a whole GPU given no device", map[string]*Share{"w": nil},
			onDevices(0, "w"), []string{PropDevicesAsked}},
		{"a device the node does not have", map[string]*Share{"a": half},
			onDevices(0, "a", 2), []string{PropDevicesAsked}},
		{"a memory share larger than the node's devices", map[string]*Share{"big": {MemoryMiB: 60000, Devices: 1}},
			onDevices(0, "big", 0), []string{PropDevicesAsked}},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Only the device properties are looked at: the evictions here break action rules.
			failures, _ := Judge(sharedNode(c.shares), timeline(3000, c.run))
			var devices []Failure
			for _, f := range failures {
				if f.Property[0] == 'D' {
					devices = append(devices, f)
				}
			}
			expectProperties(t, devices, c.want)
		})
	}
}

func evictOnNode(t float64, job, action, preemptor string) report.Event {
	e := ev(t, report.EventEvict, job, job+"-0", action, preemptor)
	e.Node = "node-0"
	return e
}

// The quota rules count a share as its part of a GPU, neither 0 nor 1: owner (quota 1) holds
// jobs of half a GPU, and a reclaim for borrower takes some. Two halves are its quota, not more
// (Q1 fails; counted as 1 each they would be 2); three are more (no Q1; counted as 0 they
// would be none); from four, taking three leaves it below its quota by more than a half
// (Q2 fails; counted as 1 each, it would keep 1).
func TestQuotaRulesCountShares(t *testing.T) {
	judged := func(halves, taken int) []string {
		jobs := map[string][2]any{"b": {"borrower", 1}}
		for i := range halves {
			jobs[fmt.Sprintf("o%d", i)] = [2]any{"owner", 1}
		}
		s := quotaPair(1, jobs)
		var parts [][]report.Event
		for _, j := range s.Jobs {
			if j.Queue == "owner" {
				j.Share, j.GPUs = &Share{Fraction: 0.5, Devices: 1}, 0
				parts = append(parts, bind(0, j.Name, j.Name+"-0"))
			}
		}
		for i := range taken {
			parts = append(parts, evictFor(10, fmt.Sprintf("o%d", i), "b", fmt.Sprintf("o%d-0", i)))
		}
		failures, _ := Judge(s, timeline(500, parts...))
		var props []string
		for _, f := range failures {
			if strings.HasPrefix(f.Property, "Q") {
				props = append(props, f.Property[:2])
			}
		}
		return props
	}
	for _, c := range []struct {
		name          string
		halves, taken int
		want          []string
	}{
		{"two halves are the quota of 1", 2, 1, []string{"Q1"}},
		{"three halves are above it", 3, 1, nil},
		{"four halves, three taken, leave it below by more than one job", 4, 3, []string{"Q2"}},
		{"four halves, two taken, leave it at its quota", 4, 2, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := judged(c.halves, c.taken); !slices.Equal(got, c.want) {
				t.Errorf("quota failures %v, want %v", got, c.want)
			}
		})
	}
}

// The held seeds draw no share, so that they still build the scenarios that found their
// defects (see shareStream).
func TestHeldSeedsDrawNoShares(t *testing.T) {
	for _, seed := range heldSeeds {
		s := Generate(seed)
		for _, n := range s.Nodes {
			if n.GPUMemory != "" {
				t.Errorf("held seed %d: node %s labelled with device memory %s", seed, n.Name, n.GPUMemory)
			}
		}
		for _, j := range s.Jobs {
			if j.Share != nil {
				t.Errorf("held seed %d: job %s asks for a share of %s", seed, j.Name, j.Share)
			}
		}
	}
}

// Every generated job can still run on its own with shares: its gang fits the empty
// cluster's devices (a memory share only on nodes whose devices hold it) and its queues'
// limits, charged the most it may be.
func TestSharesCanRunAlone(t *testing.T) {
	shares := 0
	for seed := uint64(1); seed <= 300; seed++ {
		s := Generate(seed)
		for _, j := range s.Jobs {
			if j.Share == nil {
				continue
			}
			shares++
			if !s.canShare(j, j.Share) {
				t.Errorf("seed %d: job %s, a share of %s, cannot run on its own", seed, j.Name, j.Share)
			}
			if j.GPUs != 0 || j.PodObject(j.Pods[0]).Spec.Containers[0].Resources.Requests.Name(gpuResource, "").Value() != 0 {
				t.Errorf("seed %d: job %s asks for a share and whole GPUs", seed, j.Name)
			}
		}
	}
	if shares == 0 {
		t.Fatal("300 seeds generated no share")
	}
}
