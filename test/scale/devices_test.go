package scale

import (
	"slices"
	"strconv"

	v1 "k8s.io/api/core/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
)

// The observer's view of shared GPUs. A share pod asks for no nvidia.com/gpu but for a
// fraction of one device (annotation gpu-fraction); once placed, its label runai-gpu-group
// names the device. With GPU sharing on the node, a reservation pod per device (in
// kai-resource-reservation, with the same label) holds that device, asking for one whole
// nvidia.com/gpu. So a node's GPUs in use are its whole-GPU pods' requests plus its devices
// (groups) that a reservation pod or a share holds, each counted once however many shares
// and reservations name it. The observer reads only labels and annotations: it shares no
// code with the scheduler's accounting.

// gpuResource is the whole GPUs a pod requests.
const gpuResource v1.ResourceName = "nvidia.com/gpu"

// device is what holds one shared device (GPU group) on a node.
type device struct {
	reservations int
	// shares is the sum of the bound shares' fractions, in thousandths.
	shares int64
}

// shareOf reads the fraction a pod asks for, in thousandths; 0 for a pod that asks for none.
func shareOf(pod *v1.Pod) int64 {
	value, ok := pod.Annotations[scheduling.GPUFractionAnnotation]
	if !ok {
		return 0
	}
	f, err := strconv.ParseFloat(value, 64)
	if err != nil || f <= 0 {
		return 0
	}
	return int64(f*1000 + 0.5)
}

// isReservation tells a reservation pod: it holds a device for the shares, it is no workload.
func isReservation(pod *v1.Pod) bool {
	return pod.Namespace == scheduling.ReservationNamespace && pod.Labels[scheduling.ReservationAppLabel] == scheduling.ReservationApp
}

// holdDevice adds (sign 1) or removes (-1) what a bound share or reservation pod holds of
// its device on its node, and reports a device given more than one GPU in shares, a share
// bound where its device has no reservation pod, and a reservation pod deleted while shares
// still hold its device. The node's GPU total is checked by charge.
func (o *observer) holdDevice(use *nodeUse, rec *podRecord, sign int) {
	if use.devices == nil {
		use.devices = map[string]*device{}
	}
	dev := use.devices[rec.group]
	if dev == nil {
		dev = &device{}
		use.devices[rec.group] = dev
	}
	switch {
	case rec.reservation:
		dev.reservations += sign
		if sign < 0 && dev.shares > 0 {
			o.violate("reservation pod %s of GPU group %s deleted while shares of %d/1000 still hold the device on %s",
				rec.name, rec.group, dev.shares, rec.node)
		}
	default:
		dev.shares += int64(sign) * rec.share
		if sign > 0 && dev.shares > 1000 {
			o.violate("GPU group %s on %s shared beyond one GPU: %d/1000 (when %s/%s was bound)", rec.group, rec.node, dev.shares, rec.namespace, rec.name)
		}
		if sign > 0 && dev.reservations == 0 && o.sharing {
			o.violate("share %s/%s bound to %s in GPU group %s, which has no reservation pod there (reserved on %v)",
				rec.namespace, rec.name, rec.node, rec.group, o.reservations[rec.group])
		}
	}
	if dev.reservations == 0 && dev.shares == 0 {
		delete(use.devices, rec.group)
	}
}

// reserve counts a reservation pod of its group, cluster-wide (sign 1 when it appears, -1
// when it is gone), and reports a group reserved twice: a device the device plugin would
// give to two reservation pods is two devices the shares think one.
func (o *observer) reserve(rec *podRecord, sign int) {
	nodes := o.reservations[rec.group]
	if sign > 0 {
		o.reservationsCreated++
		o.reservations[rec.group] = append(nodes, rec.node)
		if len(nodes) > 0 {
			o.violate("GPU group %s has %d reservation pods, on %v (%s the last)", rec.group, len(nodes)+1, o.reservations[rec.group], rec.name)
		}
		return
	}
	o.reservationsDeleted++
	if i := slices.Index(nodes, rec.node); i >= 0 {
		nodes = slices.Delete(nodes, i, i+1)
	}
	if len(nodes) == 0 {
		delete(o.reservations, rec.group)
	} else {
		o.reservations[rec.group] = nodes
	}
}

// takeReservationCounts returns how many reservation pods were created and deleted since the
// last call.
func (o *observer) takeReservationCounts() (created, deleted int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	created, deleted = o.reservationsCreated, o.reservationsDeleted
	o.reservationsCreated, o.reservationsDeleted = 0, 0
	return created, deleted
}

// gpusInUse is a node's whole GPUs requested plus the shared devices held.
func (use *nodeUse) gpusInUse() int64 {
	whole := use.used[gpuResource]
	return whole.Value() + int64(len(use.devices))
}

// setSharing says whether the scenario's scheduler shares GPUs on the node, where a share
// without a reservation pod is a fault (without, shares are only labelled).
func (o *observer) setSharing(on bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sharing = on
}
