package property

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim/report"
)

// The oracle's own accounting of GPU devices, from the timeline alone: each Bind event names
// the devices of its node the pod got (gpuDevices, as kai-sim's device plugin hands them
// out), the scenario says what the pod asked for, and the pod holds them as it holds its node
// (holding): while bound, and after an eviction until its grace period ends; a failed pod or
// a finished job's pods let go at once. Binds are the only events that take devices, so
// checking each bind against what is held at its time checks every moment.
const (
	// D1: the shares on a device never add up to more than one whole device.
	PropDeviceFull = "D1 no device over one"
	// D2: a device given whole holds nothing else: no share beside the whole-GPU pod, no
	// other whole-GPU pod, and a whole-GPU pod never gets a device a share or another pod
	// holds (a device is free whole only once every share on it has gone).
	PropDeviceWhole = "D2 a whole device alone"
	// D3: a bind's devices are as many distinct devices of its node as the pod asks for (its
	// whole GPUs, or its share's devices), none for a pod asking none, and a memory share's
	// on a node whose devices have that much memory.
	PropDevicesAsked = "D3 devices as asked"
)

// deviceKey is one device of one node.
type deviceKey struct {
	node   string
	device int
}

// checkDevices is D1 to D3 for the bind e of a pod of job, h its holding, held the other
// pods holding its node at e's time.
func (j *judge) checkDevices(e report.Event, job *Job, h *holding, held []*holding) {
	node := j.s.node(e.Node)
	if node == nil {
		return // K1 reports it
	}
	asked := job.GPUs
	if job.Share != nil {
		asked = job.Share.Devices
		j.figures.ShareBinds++
		if job.Share.MemoryMiB > 0 {
			j.figures.MemoryShareBinds++
		}
		if job.Share.Devices > 1 {
			j.figures.MultiDeviceShareBinds++
		}
		portion, ok := job.Share.portion(node)
		if !ok {
			j.fail(PropDevicesAsked, e, "a share of %s bound to %s, whose devices have %d MiB (label %q)",
				job.Share, e.Node, deviceMiB(node.GPUMemory), node.GPUMemory)
			portion = milli // it takes the device, as far as anyone beside it can tell
		}
		h.portion = portion
	}
	var devices []int
	for _, d := range e.GPUDevices {
		switch {
		case d < 0 || d >= node.GPUs:
			j.fail(PropDevicesAsked, e, "given device %d of %s, which has devices 0 to %d", d, e.Node, node.GPUs-1)
		case slices.Contains(devices, d):
			j.fail(PropDevicesAsked, e, "given device %d of %s twice (%v)", d, e.Node, e.GPUDevices)
		default:
			devices = append(devices, d)
		}
	}
	if len(e.GPUDevices) != asked {
		what := fmt.Sprintf("%d whole GPUs", job.GPUs)
		if job.Share != nil {
			what = "a share of " + job.Share.String()
		}
		j.fail(PropDevicesAsked, e, "asking for %s, given %d devices of %s (%v)", what, len(e.GPUDevices), e.Node, e.GPUDevices)
	}
	h.devices = devices
	for _, d := range devices {
		j.checkDevice(e, job, h, d, held)
	}
	j.podDevices[e.Pod] = devices
}

// checkDevice is D1 and D2 for device d of the bind e: what the other holders hold of it.
func (j *judge) checkDevice(e report.Event, job *Job, h *holding, d int, held []*holding) {
	var whole, shares []string
	var shared int64
	for _, o := range held {
		if !slices.Contains(o.devices, d) {
			continue
		}
		if o.portion == 0 {
			whole = append(whole, o.describe())
		} else {
			shared += o.portion
			shares = append(shares, fmt.Sprintf("%s (%g)", o.describe(), gpusOf(o.portion)))
		}
	}
	key := deviceKey{e.Node, d}
	if job.Share == nil {
		if len(whole) > 0 || len(shares) > 0 {
			j.fail(PropDeviceWhole, e, "given device %d of %s whole, which %s holds", d, e.Node, strings.Join(append(whole, shares...), " and "))
		}
		if j.everShared[key] {
			j.figures.WholeAfterShares++ // the device came back whole once its last share left
		}
		return
	}
	if len(whole) > 0 {
		j.fail(PropDeviceWhole, e, "given a share (%g) of device %d of %s, which %s holds whole", gpusOf(h.portion), d, e.Node, strings.Join(whole, " and "))
	}
	if shared+h.portion > milli {
		j.fail(PropDeviceFull, e, "given %g of device %d of %s, which holds %g already: %s",
			gpusOf(h.portion), d, e.Node, gpusOf(shared), strings.Join(shares, ", "))
	}
	if shared > 0 {
		j.figures.PackedShareBinds++
	}
	if shared+h.portion == milli {
		j.figures.FilledDevices++
	}
	j.everShared[key] = true
}

// describe names a holder, with when a terminating one leaves.
func (h *holding) describe() string {
	if math.IsInf(h.gone, 1) {
		return h.pod
	}
	return fmt.Sprintf("%s terminating until %s", h.pod, clock(h.gone))
}
