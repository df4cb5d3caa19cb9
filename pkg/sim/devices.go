package sim

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// devicePlugin plays the node side of GPUs: it hands each pod bound to a node the devices it
// gets there, as NVIDIA's device plugin and upstream KAI's reservation pods do — a whole-GPU
// pod the lowest free devices, a share the device of its GPU group (the lowest free one for
// a group's first share) — and takes them back when the pod stops. It is also the check a
// real node makes: a bind the node could not honour (no free device, a device over one
// whole, a share beside a whole pod) is a scheduler bug, reported as the run's error.
type devicePlugin struct {
	nodes map[string]*nodeDevices
	// held are the devices each pod holds, by pod.
	held map[types.UID]heldDevices
}

type heldDevices struct {
	node    string
	devices []int
	share   int64 // MilliGPU of each device, 0 for a whole-GPU pod
}

// nodeDevices are one node's devices: for each, the pod holding it whole, or the group and
// the shares (MilliGPU) on it.
type nodeDevices struct {
	memoryMiB int64
	whole     []types.UID
	group     []string
	shares    []int64
}

func newDevicePlugin(nodes []*v1.Node) *devicePlugin {
	d := &devicePlugin{nodes: map[string]*nodeDevices{}, held: map[types.UID]heldDevices{}}
	for _, n := range nodes {
		gpus := n.Status.Allocatable[model.GPUResourceName]
		count := int(gpus.Value())
		d.nodes[n.Name] = &nodeDevices{memoryMiB: model.GPUMemoryMiB(n.Labels),
			whole: make([]types.UID, count), group: make([]string, count), shares: make([]int64, count)}
	}
	return d
}

// gpusOf is what a pod holds of GPUs (MilliGPU): its shares' parts of its devices, or its
// whole devices; whole GPUs asked (asked whole GPUs) for a pod given none, on a node with none.
func (d *devicePlugin) gpusOf(pod *v1.Pod, asked int64) int64 {
	h, ok := d.held[pod.UID]
	switch {
	case !ok:
		return asked * model.MilliGPU
	case h.share > 0:
		return h.share * int64(len(h.devices))
	}
	return int64(len(h.devices)) * model.MilliGPU
}

// bind gives a pod bound to node its devices and returns their indexes (nil for a pod
// given no GPU), or the error a node would meet.
func (d *devicePlugin) bind(pod *v1.Pod, node string) ([]int, error) {
	n := d.nodes[node]
	if n == nil {
		return nil, nil
	}
	share, err := model.ParseGPUShare(pod)
	if err != nil {
		return nil, fmt.Errorf("pod %s/%s was bound to %s though its GPU share is refused: %w", pod.Namespace, pod.Name, node, err)
	}
	if share == nil {
		return d.bindWhole(pod, node, n, PodGPUs(pod))
	}
	return d.bindShare(pod, node, n, share)
}

// firstFree is the lowest device neither held whole nor shared; -1 when none is.
func (n *nodeDevices) firstFree() int {
	for i := range n.whole {
		if n.whole[i] == "" && n.group[i] == "" {
			return i
		}
	}
	return -1
}

func (d *devicePlugin) bindWhole(pod *v1.Pod, node string, n *nodeDevices, count int64) ([]int, error) {
	var devices []int
	for i := range n.whole {
		if int64(len(devices)) == count {
			break
		}
		if n.whole[i] == "" && n.group[i] == "" {
			devices = append(devices, i)
		}
	}
	if int64(len(devices)) < count {
		return nil, fmt.Errorf("pod %s/%s was bound to %s for %d GPUs, but only %d of its devices are free", pod.Namespace, pod.Name, node, count, len(devices))
	}
	for _, i := range devices {
		n.whole[i] = pod.UID
	}
	if len(devices) > 0 {
		d.held[pod.UID] = heldDevices{node: node, devices: devices}
	}
	return devices, nil
}

func (d *devicePlugin) bindShare(pod *v1.Pod, node string, n *nodeDevices, share *model.GPUShare) ([]int, error) {
	groups := model.GPUGroupsOf(pod)
	if len(groups) != int(share.Devices) {
		return nil, fmt.Errorf("pod %s/%s was bound to %s for shares of %d devices, labelled with %d GPU groups", pod.Namespace, pod.Name, node, share.Devices, len(groups))
	}
	portion, ok := model.SharePortionOn(share, n.memoryMiB)
	if !ok {
		return nil, fmt.Errorf("pod %s/%s was bound to %s for %d MiB of a device, which has %d", pod.Namespace, pod.Name, node, share.MemoryMiB, n.memoryMiB)
	}
	devices := make([]int, 0, len(groups))
	for _, g := range groups {
		i := slices.Index(n.group, g)
		if i < 0 {
			if i = n.firstFree(); i < 0 {
				return nil, fmt.Errorf("pod %s/%s was bound to %s for a share of a new device (group %s), but none is free", pod.Namespace, pod.Name, node, g)
			}
			n.group[i] = g
		}
		if n.shares[i]+portion > model.MilliGPU {
			return nil, fmt.Errorf("pod %s/%s was bound to %s for %s of device %d, which holds %s already", pod.Namespace, pod.Name, node,
				model.FormatGPUs(portion), i, model.FormatGPUs(n.shares[i]))
		}
		n.shares[i] += portion
		devices = append(devices, i)
	}
	d.held[pod.UID] = heldDevices{node: node, devices: devices, share: portion}
	return devices, nil
}

// release takes back what a pod held, when it stops (it failed, or its termination ended).
func (d *devicePlugin) release(pod *v1.Pod) {
	h, ok := d.held[pod.UID]
	if !ok {
		return
	}
	delete(d.held, pod.UID)
	n := d.nodes[h.node]
	for _, i := range h.devices {
		if h.share == 0 {
			n.whole[i] = ""
			continue
		}
		if n.shares[i] -= h.share; n.shares[i] == 0 {
			n.group[i] = ""
		}
	}
}

// allocated is the GPUs the nodes have given: whole devices, and the shares on the others
// (MilliGPU).
func (d *devicePlugin) allocated() int64 {
	var total int64
	for _, n := range d.nodes {
		for i := range n.whole {
			if n.whole[i] != "" {
				total += model.MilliGPU
			}
			total += n.shares[i]
		}
	}
	return total
}

// gpuDemand is what the pods of one node pool waiting for GPUs ask for, reduced to what
// decides whether a free piece of a device could serve one of them: the smallest request of
// each shape, as a piece that cannot take the smallest cannot take any. The engine fills it
// for every sample (note), and stranded reads it.
type gpuDemand struct {
	// waiting: some pod of the pool waits for GPUs.
	waiting bool
	// whole is the fewest whole GPUs a waiting pod asks for (0: none asks for whole GPUs).
	whole int64
	// fraction and memory are, at index n-1, the smallest fraction (MilliGPU) and the
	// smallest memory (MiB) a waiting pod asks of each of n devices; 0 where none does.
	fraction, memory []int64
}

// reset forgets the previous sample's pods, keeping the slices' room.
func (g *gpuDemand) reset() {
	g.waiting, g.whole = false, 0
	clear(g.fraction)
	clear(g.memory)
}

// note adds a waiting pod's GPU request: whole GPUs, or a share (nil for none).
func (g *gpuDemand) note(whole int64, share *model.GPUShare) {
	switch {
	case share != nil:
		g.waiting = true
		n := int(share.Devices)
		for len(g.fraction) < n { // grows once per new number of devices, not per sample
			g.fraction, g.memory = append(g.fraction, 0), append(g.memory, 0)
		}
		if share.MemoryMiB > 0 {
			g.memory[n-1] = smallest(g.memory[n-1], share.MemoryMiB)
		} else {
			g.fraction[n-1] = smallest(g.fraction[n-1], model.FractionPortion(share.Fraction))
		}
	case whole > 0:
		g.waiting = true
		g.whole = smallest(g.whole, whole)
	}
}

// smallest is the smaller of two requests, 0 standing for none.
func smallest(have, v int64) int64 {
	if have == 0 {
		return v
	}
	return min(have, v)
}

// stranded is the free GPU capacity (MilliGPU) that no waiting pod of its node's pool could
// use: the room left on devices holding shares, and free devices, where no waiting request
// fits — a share needs that much room on the device (and as many devices with that room on
// the node as it asks shares of), k whole GPUs need k free devices on the node. Only the GPU
// request is read: CPU, memory, node selectors and taints are not, so a piece counted
// usable may still be out of a pod's reach for another reason. Where nothing waits for
// GPUs, free capacity is idle, not stranded. demands gives each node's pool's demand.
func (d *devicePlugin) stranded(demands map[string]*gpuDemand) int64 {
	var total int64
	for name, n := range d.nodes {
		want := demands[name]
		if want == nil || !want.waiting {
			continue
		}
		free := 0 // devices neither held whole nor shared
		for i := range n.whole {
			if n.whole[i] == "" && n.group[i] == "" {
				free++
			}
		}
		for i := range n.whole {
			room := model.MilliGPU - n.shares[i]
			if n.whole[i] != "" || room <= 0 {
				continue
			}
			if !n.serves(want, room, n.group[i] == "", free) {
				total += room
			}
		}
	}
	return total
}

// serves says whether a device of the node with room left (a free device when fresh, of the
// node's free devices) could take a waiting request.
func (n *nodeDevices) serves(want *gpuDemand, room int64, fresh bool, free int) bool {
	if fresh && want.whole > 0 && int64(free) >= want.whole {
		return true
	}
	for k := range want.fraction {
		portion := want.fraction[k]
		if portion > 0 && room >= portion && (k == 0 || n.roomy(portion) > k) {
			return true
		}
		mib := want.memory[k]
		if mib <= 0 || n.memoryMiB < mib {
			continue
		}
		portion = model.MemoryPortion(mib, n.memoryMiB)
		if room >= portion && (k == 0 || n.roomy(portion) > k) {
			return true
		}
	}
	return false
}

// roomy counts the node's devices not held whole with at least portion free.
func (n *nodeDevices) roomy(portion int64) int {
	count := 0
	for i := range n.whole {
		if n.whole[i] == "" && model.MilliGPU-n.shares[i] >= portion {
			count++
		}
	}
	return count
}

// sharing says whether some device holds shares.
func (d *devicePlugin) sharing() bool {
	for _, n := range d.nodes {
		for _, s := range n.shares {
			if s > 0 {
				return true
			}
		}
	}
	return false
}
