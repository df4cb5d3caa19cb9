package model

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// GPUGroup is a device of a node that holds GPU shares — a "GPU group" in upstream KAI's
// words: the pods sharing it carry its ID in their runai-gpu-group label. While any share is
// on it, the device is taken whole out of the node's GPUs (NodeInfo.account), so no
// whole-GPU pod is given it; it comes back when the last share has left.
type GPUGroup struct {
	ID string
	// Active, Releasing and Pipelined are the shares (MilliGPU) the device's active,
	// releasing and pipelined pods hold.
	Active, Releasing, Pipelined int64
}

// held is what the group takes from the node's whole GPUs, by the status of its shares: a
// device is used while any share on it is active, releasing only once all its shares are,
// and promised while a pipelined share counts on it and none is active.
func (g GPUGroup) held() (used, releasing, pipelined int64) {
	if g.Active > 0 {
		return MilliGPU, 0, 0
	}
	if g.Releasing > 0 {
		releasing = MilliGPU
	}
	if g.Pipelined > 0 {
		pipelined = MilliGPU
	}
	return 0, releasing, pipelined
}

// Open reports whether the device takes new shares: one bound now takes them only beside an
// active share — a device whose shares are all promised is still held by the pods being
// released for them, until the promise binds — and one pipelined (withReleasing) beside an
// active or promised share. A device whose every share is releasing takes none: it becomes
// free whole, which the node's whole GPUs count once it is, and which a preemptor whose
// eviction emptied it may have been promised.
func (g GPUGroup) Open(withReleasing bool) bool {
	return g.Active > 0 || (withReleasing && g.Pipelined > 0)
}

// Room is what a new share may have of the device: what no share holds, counting what
// releasing shares hold as free when withReleasing (a share pipelined onto the device binds
// once they are gone).
func (g GPUGroup) Room(withReleasing bool) int64 {
	room := MilliGPU - g.Active - g.Pipelined
	if !withReleasing {
		room -= g.Releasing
	}
	return room
}

// IsShare reports whether the pod asks for shares of GPU devices rather than whole ones.
func (p *PodInfo) IsShare() bool { return p.Share != nil }

// SharePortion is what one of the pod's shares takes of one of the node's devices, in
// MilliGPU: the fraction, or the memory over the device's memory rounded up to the
// hundredth, as upstream reports it. ok is false when the node's devices are too small for
// the memory asked (or their memory is unknown).
func (n *NodeInfo) SharePortion(s *GPUShare) (portion int64, ok bool) {
	return SharePortionOn(s, n.GPUMemoryMiB)
}

// SharePortionOn is SharePortion on a device of deviceMiB (0: unknown).
func SharePortionOn(s *GPUShare, deviceMiB int64) (portion int64, ok bool) {
	if s.MemoryMiB == 0 {
		return FractionPortion(s.Fraction), true
	}
	if deviceMiB < s.MemoryMiB {
		return 0, false
	}
	return MemoryPortion(s.MemoryMiB, deviceMiB), true
}

// FractionPortion is a fraction of a device in MilliGPU, at least one thousandth and short of
// a whole device.
func FractionPortion(f float64) int64 {
	return min(max(int64(math.Round(f*MilliGPU)), 1), MilliGPU-1)
}

// MemoryPortion is the portion of a device of deviceMiB that mib of its memory is: rounded up
// to the hundredth, as upstream reports it (GPU_PORTION).
func MemoryPortion(mib, deviceMiB int64) int64 {
	hundredths := (mib*100 + deviceMiB - 1) / deviceMiB
	return min(hundredths*MilliGPU/100, MilliGPU)
}

// ShareChoice is where a share pod's shares go on a node: onto the devices of Groups, which
// have room for them, and onto Fresh whole devices, each of which becomes a new group.
type ShareChoice struct {
	Groups []string
	Fresh  int
	// Portion is what each share takes of its device (MilliGPU).
	Portion int64
}

// DeviceOrder ranks the devices a share may go to on a node, lower first: room is what the
// device has free before the share (MilliGPU; a whole free device has MilliGPU).
type DeviceOrder func(room int64) float64

// PackDevices puts a share on the fullest device that has room for it, a whole free device
// last: partly used devices fill up before a whole one is broken into.
func PackDevices(room int64) float64 { return float64(room) }

// SpreadDevices puts a share on the emptiest device, a whole free one first.
func SpreadDevices(room int64) float64 { return -float64(room) }

// PlaceShare chooses devices of the node for a share pod, best first by order: groups with
// room for a share, and whole devices out of what free (the node's capacity for the pod, by
// the caller's rule: bindable now, or once releasing pods are gone) has whole. withReleasing
// counts what releasing shares hold as room, for a pod pipelined onto it. Ties go to groups
// before whole devices, then by group ID. ok is false when the node cannot take the pod's
// shares.
func (n *NodeInfo) PlaceShare(p *PodInfo, free Resources, withReleasing bool, order DeviceOrder) (choice ShareChoice, ok bool) {
	if !n.ShareFits(p, free, withReleasing) {
		return ShareChoice{}, false
	}
	choice.Portion, _ = n.SharePortion(p.Share)
	type candidate struct {
		id   string
		rank float64
	}
	var fitting []candidate // ranked once each: a rank may weigh the whole node
	for _, g := range n.GPUGroups {
		if g.takes(choice.Portion, withReleasing) {
			fitting = append(fitting, candidate{g.ID, order(g.Room(withReleasing))})
		}
	}
	slices.SortStableFunc(fitting, func(a, b candidate) int { return cmp.Compare(a.rank, b.rank) })
	// The groups and the whole devices merged by rank, a group first among equals.
	want, fresh, freshRank, next := int(p.Share.Devices), int(free.Get(GPU)/MilliGPU), order(MilliGPU), 0
	for len(choice.Groups)+choice.Fresh < want {
		if next < len(fitting) && (choice.Fresh == fresh || fitting[next].rank <= freshRank) {
			choice.Groups = append(choice.Groups, fitting[next].id)
			next++
		} else {
			choice.Fresh++
		}
	}
	return choice, true
}

// ShareFits reports whether the node can take the share pod's shares out of free (as
// PlaceShare), allocation-free: it runs for every node a share pod is tried on.
func (n *NodeInfo) ShareFits(p *PodInfo, free Resources, withReleasing bool) bool {
	portion, ok := n.SharePortion(p.Share)
	if !ok {
		return false
	}
	devices := int(free.Get(GPU) / MilliGPU)
	for _, g := range n.GPUGroups {
		if g.takes(portion, withReleasing) {
			devices++
		}
	}
	return devices >= int(p.Share.Devices)
}

// takes reports whether a share of portion may go onto the device (see Open and Room).
func (g GPUGroup) takes(portion int64, withReleasing bool) bool {
	return g.Open(withReleasing) && g.Room(withReleasing) >= portion
}

// NewGPUGroupID names the group the i-th fresh device of a share pod placed on node
// becomes: a UUID, as upstream's, derived from the node, the pod and i, so that the same
// decision names the same group every time (a session's decisions depend on nothing else).
func NewGPUGroupID(node, podUID string, i int) string {
	return uuid.NewSHA1(gpuGroupSpace, []byte(node+"/"+podUID+"/"+strconv.Itoa(i))).String()
}

var gpuGroupSpace = uuid.MustParse("6f0c7f0e-4f52-4c77-9c1e-5a5b0b6f2a41")

// group returns the index of the node's group id, adding it (empty) when add is set; -1
// when it is missing and not added.
func (n *NodeInfo) group(id string, add bool) int {
	i, found := slices.BinarySearchFunc(n.GPUGroups, id, func(g GPUGroup, id string) int { return strings.Compare(g.ID, id) })
	if found {
		return i
	}
	if !add {
		return -1
	}
	n.GPUGroups = slices.Insert(n.GPUGroups, i, GPUGroup{ID: id})
	return i
}

// Group returns the node's group of that ID, if the node has it.
func (n *NodeInfo) Group(id string) (GPUGroup, bool) {
	if i := n.group(id, false); i >= 0 {
		return n.GPUGroups[i], true
	}
	return GPUGroup{}, false
}

// accountShares adds (sign 1) or removes (sign -1) a share pod's shares on their devices,
// in its current status, and moves whole devices in and out of the node's used, releasing
// and promised GPUs as its groups' states change (GPUGroup.held).
func (n *NodeInfo) accountShares(p *PodInfo, sign int64) {
	per := p.Request.Get(GPU) / int64(len(p.GPUGroups))
	for _, id := range p.GPUGroups {
		i := n.group(id, sign > 0)
		if i < 0 {
			continue
		}
		g := &n.GPUGroups[i]
		used, releasing, pipelined := g.held()
		switch {
		case p.Status.IsActive():
			g.Active += sign * per
		case p.Status == Releasing:
			g.Releasing += sign * per
		case p.Status == Pipelined:
			g.Pipelined += sign * per
		}
		u, r, pl := g.held()
		n.Used = n.Used.With(GPU, n.Used.Get(GPU)+u-used)
		n.Releasing = n.Releasing.With(GPU, n.Releasing.Get(GPU)+r-releasing)
		n.Pipelined = n.Pipelined.With(GPU, n.Pipelined.Get(GPU)+pl-pipelined)
		if g.Active == 0 && g.Releasing == 0 && g.Pipelined == 0 {
			n.GPUGroups = slices.Delete(n.GPUGroups, i, i+1)
			if len(n.GPUGroups) == 0 {
				n.GPUGroups = nil // a node whose shares left looks like one that never had any
			}
		}
	}
}
