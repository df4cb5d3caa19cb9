package nodeplacement

import (
	"cmp"
	"slices"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// The fragmentation strategy places GPU pods where they strand the fewest GPUs for the
// cluster's mix of GPU requests: fragmentation gradient descent (Weng et al., "Beware of
// Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent",
// USENIX ATC 2023). A node's fragmentation, for one kind of GPU request, is the free GPU
// it holds that such a request could not use — the pieces of partly used devices too small
// for the share, or everything free when the request cannot fit at all; weighted by how
// common each kind of request is in the cluster, it is the GPU a random request of the mix
// would find stranded there. A pod goes to the node, and its share to the device, whose
// fragmentation grows least. Packing strands the small pieces it leaves on every device;
// spreading breaks whole devices that multi-GPU pods need; weighing the mix avoids both.
//
// Only GPUs are weighed (a node whose CPU cannot take a request strands nothing for this
// measure), and the mix is the session's pods — running and pending — so it follows the
// workload as it changes. A cluster whose mix holds no share is placed exactly as binpack
// places it: there is nothing to fragment but whole devices, which packing keeps whole.

// gpuKind is one kind of GPU request of the mix: portion of each of devices devices
// (MilliGPU; MilliGPU for whole GPUs).
type gpuKind struct {
	portion int64
	devices int32
}

// kindWeight is a kind and its share of the mix's requests.
type kindWeight struct {
	gpuKind
	weight float64
}

// maxKinds bounds the kinds weighed (the most common): each is weighed for every node
// scored.
const maxKinds = 32

// mixOf weighs the kinds of GPU request of the session's pods; nil when none asks for a
// share, which leaves placement to packing.
func mixOf(ssn *framework.Session) []kindWeight {
	counts := map[gpuKind]int{}
	shares := false
	for _, job := range ssn.Snapshot().Jobs {
		for _, p := range job.Pods {
			gpus := p.Request.Get(model.GPU)
			switch {
			case p.Status == model.Succeeded || p.Status == model.Failed || gpus == 0:
				continue
			case p.IsShare():
				shares = true
				counts[gpuKind{portion: gpus / int64(p.Share.Devices), devices: p.Share.Devices}]++
			default:
				counts[gpuKind{portion: model.MilliGPU, devices: int32((gpus + model.MilliGPU - 1) / model.MilliGPU)}]++
			}
		}
	}
	if !shares {
		return nil
	}
	mix := make([]kindWeight, 0, len(counts))
	total := 0
	for k, n := range counts {
		mix = append(mix, kindWeight{gpuKind: k, weight: float64(n)})
		total += n
	}
	// Most common first, then by shape: the same mix weighs the same way every time.
	slices.SortFunc(mix, func(a, b kindWeight) int {
		if c := cmp.Compare(b.weight, a.weight); c != 0 {
			return c
		}
		if c := cmp.Compare(a.portion, b.portion); c != 0 {
			return c
		}
		return cmp.Compare(a.devices, b.devices)
	})
	mix = mix[:min(len(mix), maxKinds)]
	for i := range mix {
		mix[i].weight /= float64(total)
	}
	return mix
}

// freeDevices is a node's free GPU as the measure sees it: the room on each device holding
// shares (the first maxShared; more are rare, and left out), and how many devices are free
// whole. A value, so that weighing a node allocates nothing.
type freeDevices struct {
	rooms [maxShared]int64
	n     int
	whole int64
}

const maxShared = 16

func freeOf(node *model.NodeInfo) freeDevices {
	f := freeDevices{whole: max(node.Idle().Get(model.GPU)/model.MilliGPU, 0)}
	for _, g := range node.GPUGroups {
		if room := g.Room(false); g.Open(false) && room > 0 && f.n < maxShared {
			f.rooms[f.n] = room
			f.n++
		}
	}
	return f
}

// fragmentation is the GPU a request drawn from mix would find stranded on f (MilliGPU).
func fragmentation(f *freeDevices, mix []kindWeight) float64 {
	total := f.whole * model.MilliGPU
	for _, r := range f.rooms[:f.n] {
		total += r
	}
	var expected float64
	for _, k := range mix {
		expected += k.weight * float64(stranded(f, k.gpuKind, total))
	}
	return expected
}

// stranded is the free GPU on f that a request of kind k cannot use: all of it when k does
// not fit; otherwise the rooms too small for its share (for whole GPUs, every partly used
// device's room).
func stranded(f *freeDevices, k gpuKind, total int64) int64 {
	usable, small := f.whole, int64(0)
	for _, r := range f.rooms[:f.n] {
		if k.portion < model.MilliGPU && r >= k.portion {
			usable++
		} else {
			small += r
		}
	}
	if usable < int64(k.devices) {
		return total
	}
	return small
}

// withShare is f once a share of portion goes to a device of room (MilliGPU: a whole free
// device).
func (f freeDevices) withShare(room, portion int64) freeDevices {
	if room >= model.MilliGPU {
		f.whole--
		if left := model.MilliGPU - portion; left > 0 && f.n < maxShared {
			f.rooms[f.n] = left
			f.n++
		}
		return f
	}
	for i := range f.n {
		if f.rooms[i] == room {
			f.rooms[i] -= portion
			if f.rooms[i] == 0 {
				f.n--
				f.rooms[i] = f.rooms[f.n]
			}
			break
		}
	}
	return f
}

// fragmentationGrowth is how much placing pod on node grows its fragmentation, its shares
// going to the devices that grow it least.
func (p *plugin) fragmentationGrowth(pod *model.PodInfo, node *model.NodeInfo) float64 {
	f := freeOf(node)
	before := fragmentation(&f, p.mix)
	if !pod.IsShare() {
		f.whole -= (pod.Request.Get(model.GPU) + model.MilliGPU - 1) / model.MilliGPU
		return fragmentation(&f, p.mix) - before
	}
	portion, ok := node.SharePortion(pod.Share)
	if !ok {
		return 0
	}
	after := before
	for range pod.Share.Devices {
		room, grown := p.bestDevice(&f, portion)
		if room < 0 {
			return 0 // does not fit: the node search refuses it anyway
		}
		f, after = f.withShare(room, portion), grown
	}
	return after - before
}

// bestDevice is the room of the device on f where a share of portion grows fragmentation
// least (MilliGPU: a whole device; the fullest among equals), and f's fragmentation then;
// -1 when no device has room.
func (p *plugin) bestDevice(f *freeDevices, portion int64) (int64, float64) {
	best, bestF := int64(-1), 0.0
	try := func(room int64) {
		if room < portion || room == best {
			return
		}
		next := f.withShare(room, portion)
		after := fragmentation(&next, p.mix)
		if best < 0 || after < bestF || (after == bestF && room < best) {
			best, bestF = room, after
		}
	}
	for _, r := range f.rooms[:f.n] {
		try(r)
	}
	if f.whole > 0 {
		try(model.MilliGPU)
	}
	return best, bestF
}

// fragmentationOrder ranks a node's devices for a share pod by the fragmentation a share
// leaves there, the fullest first among equals.
func (p *plugin) fragmentationOrder(pod *model.PodInfo, node *model.NodeInfo) model.DeviceOrder {
	portion, ok := node.SharePortion(pod.Share)
	if !ok {
		return model.PackDevices
	}
	f := freeOf(node)
	return func(room int64) float64 { // asked only of devices with room for the share
		next := f.withShare(room, portion)
		// Fragmentation dominates; the room breaks ties toward the fullest device.
		return fragmentation(&next, p.mix)*model.MilliGPU + float64(room)
	}
}
