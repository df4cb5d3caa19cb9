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
	portion := model.FractionPortion(share.Fraction)
	if share.MemoryMiB > 0 {
		if n.memoryMiB < share.MemoryMiB {
			return nil, fmt.Errorf("pod %s/%s was bound to %s for %d MiB of a device, which has %d", pod.Namespace, pod.Name, node, share.MemoryMiB, n.memoryMiB)
		}
		portion = model.MemoryPortion(share.MemoryMiB, n.memoryMiB)
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
