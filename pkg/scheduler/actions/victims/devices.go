package victims

import (
	"slices"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// nodeFree is what a node has free for a preemptor under the plan: resources counted whole
// (GPUs as whole devices), and the devices holding shares that are not free whole, with the
// room each has. A device's shares leave it one victim at a time: evicting a share frees its
// part of the device for a share preemptor, and only the last share leaving frees the device
// whole. A node without shares has no devices here, and its arithmetic is that of Resources.
//
// The devices are shared between values and never modified: a walk over a node's victims
// records what it changes in a few inline edits, so that judging victims allocates nothing;
// past that many, the devices are copied with the edits applied.
type nodeFree struct {
	res model.Resources
	// memoryMiB is the node's device memory, which a share asked in memory is measured by.
	memoryMiB int64
	devs      []shareDevice
	edits     [maxEdits]deviceEdit
	n         int
}

// shareDevice is a device holding shares, under the plan.
type shareDevice struct {
	id string
	// room is what a new share may have of it once its releasing shares are gone; live is
	// what its active shares the plan does not evict hold (MilliGPU).
	room, live int64
	// promised: a pipelined share counts on it, so it stays shared when live reaches zero.
	promised bool
}

// deviceEdit moves freed (MilliGPU; negative: taken) from the live shares of device k to its
// room.
type deviceEdit struct {
	k     int
	freed int64
}

const maxEdits = 4

// futureFree is the node's nodeFree before any plan: what it will have once its releasing
// pods are gone (NodeInfo.FutureIdle), with the devices whose shares are not all releasing.
func futureFree(n *model.NodeInfo) nodeFree {
	f := nodeFree{res: n.FutureIdle(), memoryMiB: n.GPUMemoryMiB}
	for _, g := range n.GPUGroups {
		if !g.Open(true) {
			continue // all its shares are releasing: free whole in FutureIdle already
		}
		f.devs = append(f.devs, shareDevice{id: g.ID, room: g.Room(true), live: g.Active, promised: g.Pipelined > 0})
	}
	return f
}

// device is device k as the edits leave it.
func (f *nodeFree) device(k int) shareDevice {
	d := f.devs[k]
	for _, e := range f.edits[:f.n] {
		if e.k == k {
			d.room, d.live = d.room+e.freed, d.live-e.freed
		}
	}
	return d
}

// whole reports whether a device is free whole: its last live share gone, no promise on it
// (the node's resources count it then).
func (d shareDevice) whole() bool { return d.live <= 0 && !d.promised }

// edit moves freed on device k, copying the devices once the inline edits run out.
func (f *nodeFree) edit(k int, freed int64) {
	if f.n == maxEdits {
		devs := make([]shareDevice, len(f.devs))
		for j := range devs {
			devs[j] = f.device(j)
		}
		f.devs, f.n = devs, 0
	}
	f.edits[f.n] = deviceEdit{k: k, freed: freed}
	f.n++
}

// fits reports whether pod fits: a whole-GPU (or GPU-less) pod in the resources, a share
// pod's other resources there and each of its shares on its own device, with room or whole.
func (f nodeFree) fits(pod *model.PodInfo) bool {
	if !pod.IsShare() {
		return pod.Request.FitsIn(f.res)
	}
	if !pod.Request.With(model.GPU, 0).FitsIn(f.res) {
		return false
	}
	portion, ok := f.sharePortion(pod)
	if !ok {
		return false
	}
	devices := f.res.Get(model.GPU) / model.MilliGPU
	for k := range f.devs {
		if d := f.device(k); !d.whole() && d.room >= portion {
			devices++
		}
	}
	return devices >= int64(pod.Share.Devices)
}

// sharePortion is what each of a share pod's shares takes of one of the node's devices (as
// the placement measures it: model.SharePortionOn); ok is false where they are too small.
func (f *nodeFree) sharePortion(pod *model.PodInfo) (int64, bool) {
	return model.SharePortionOn(pod.Share, f.memoryMiB)
}

// evict is f once victim is gone: its resources free, and its shares' room on their
// devices; a device whose last live share leaves is free whole.
func (f nodeFree) evict(victim *model.PodInfo) nodeFree {
	if !victim.IsShare() || len(victim.GPUGroups) == 0 {
		f.res = f.res.Add(victim.Request)
		return f
	}
	f.res = f.res.Add(victim.Request.With(model.GPU, 0))
	per := victim.Request.Get(model.GPU) / int64(len(victim.GPUGroups))
	for _, id := range victim.GPUGroups {
		k := slices.IndexFunc(f.devs, func(d shareDevice) bool { return d.id == id })
		if k < 0 || f.device(k).whole() {
			continue
		}
		f.edit(k, per)
		if f.device(k).whole() {
			f.res = f.res.With(model.GPU, f.res.Get(model.GPU)+model.MilliGPU)
		}
	}
	return f
}

// occupy is f once pod is placed (it must fit): a share on the fullest devices with room,
// then on whole devices, as the placement itself prefers.
func (f nodeFree) occupy(pod *model.PodInfo) nodeFree {
	if !pod.IsShare() {
		f.res = f.res.Sub(pod.Request)
		return f
	}
	f.res = f.res.Sub(pod.Request.With(model.GPU, 0))
	portion, _ := f.sharePortion(pod) // it fits
	want := int(pod.Share.Devices)
	for ; want > 0; want-- {
		best, bestRoom := -1, int64(0)
		for k := range f.devs {
			if d := f.device(k); !d.whole() && d.room >= portion && (best < 0 || d.room < bestRoom) {
				best, bestRoom = k, d.room
			}
		}
		if best < 0 {
			break
		}
		f.edit(best, -portion)
	}
	if want > 0 {
		devs := make([]shareDevice, 0, len(f.devs)+want)
		for k := range f.devs {
			devs = append(devs, f.device(k))
		}
		for ; want > 0; want-- {
			f.res = f.res.With(model.GPU, f.res.Get(model.GPU)-model.MilliGPU)
			devs = append(devs, shareDevice{room: model.MilliGPU - portion, live: portion, promised: true})
		}
		f.devs, f.n = devs, 0
	}
	return f
}

// helps reports whether going from f to next, freed freed (resources beside GPUs), brings
// pod closer to fitting: a resource it lacks grows (GPUs: whole devices), or, for a share
// pod, a device gains room it lacked.
func (f nodeFree) helps(next nodeFree, freed model.Resources, pod *model.PodInfo) bool {
	freed = freed.With(model.GPU, next.res.Get(model.GPU)-f.res.Get(model.GPU))
	if !pod.IsShare() {
		return freed.Relieves(pod.Request, f.res)
	}
	if freed.Get(model.GPU) > 0 {
		return true // a device freed whole
	}
	portion, ok := f.sharePortion(pod)
	if !ok {
		return false // no eviction makes its devices larger
	}
	for k := range f.devs { // evict never adds devices: f's and next's are the same
		if before := f.device(k).room; before < portion && next.device(k).room > before {
			return true
		}
	}
	return freed.Relieves(pod.Request.With(model.GPU, 0), f.res)
}

// sharesOn reports whether any of pods holds a placed share while f has devices holding
// shares: whether evicting them may free a device only with others (solver.step).
func (f nodeFree) sharesOn(pods []*model.PodInfo) bool {
	if len(f.devs) == 0 {
		return false
	}
	for _, p := range pods {
		if p.IsShare() && len(p.GPUGroups) > 0 {
			return true
		}
	}
	return false
}
