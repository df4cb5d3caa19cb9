package property

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// GPU sharing in the scenarios. A job may ask, per pod, for part of a GPU device instead of
// whole GPUs, with upstream KAI's annotations; nodes may say how much memory each of their
// devices has. The names are written out here rather than taken from the scheduler's code,
// so that the suite would notice them renamed, and the arithmetic (what part of a device a
// share takes, what its queue is charged) is this package's own, from upstream's rules.
const (
	fractionAnnotation   = "gpu-fraction"
	memoryAnnotation     = "gpu-memory"
	numDevicesAnnotation = "gpu-fraction-num-devices"
	gpuMemoryLabel       = "nvidia.com/gpu.memory"
)

// milli is a whole device in the thousandths shares and charges are counted in.
const milli = 1000

// Share is the part of a GPU each pod of a job asks for: Fraction of each of Devices
// devices, or MemoryMiB of each, measured against its node's device memory. Such a pod asks
// for no nvidia.com/gpu.
type Share struct {
	// Fraction is the share of one device, 0 < Fraction < 1; 0 for a memory share.
	Fraction float64
	// MemoryMiB is the memory of one device asked for; 0 for a fraction.
	MemoryMiB int64
	// Devices is how many devices each give the share: 1, or what num-devices says.
	Devices int
	// WriteDevices writes gpu-fraction-num-devices even when it is 1, which must change
	// nothing.
	WriteDevices bool
}

// annotations are the pod annotations that ask for the share.
func (sh *Share) annotations() map[string]string {
	a := map[string]string{}
	if sh.MemoryMiB > 0 {
		a[memoryAnnotation] = strconv.FormatInt(sh.MemoryMiB, 10)
	} else {
		a[fractionAnnotation] = strconv.FormatFloat(sh.Fraction, 'f', -1, 64)
	}
	if sh.Devices > 1 || sh.WriteDevices {
		a[numDevicesAnnotation] = strconv.Itoa(sh.Devices)
	}
	return a
}

// String words the share for a failure's message.
func (sh *Share) String() string {
	what := strconv.FormatFloat(sh.Fraction, 'f', -1, 64)
	if sh.MemoryMiB > 0 {
		what = strconv.FormatInt(sh.MemoryMiB, 10) + " MiB"
	}
	if sh.Devices > 1 {
		what += " of each of " + strconv.Itoa(sh.Devices) + " devices"
	}
	return what
}

// sameShare reports whether two jobs' pods ask for the same share (both nil: whole GPUs).
func sameShare(a, b *Share) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Fraction == b.Fraction && a.MemoryMiB == b.MemoryMiB && a.Devices == b.Devices
}

// deviceMiB is the memory of each device of a node whose nvidia.com/gpu.memory label is
// label, as upstream reads it: MiB, or bytes from 1,048,576 up, floored to a multiple of 100
// MiB; 0 when the label is missing or unreadable.
func deviceMiB(label string) int64 {
	v, err := strconv.ParseInt(strings.TrimSpace(label), 10, 64)
	if err != nil || v <= 0 {
		return 0
	}
	if v >= 1<<20 {
		v /= 1 << 20
	}
	return v / 100 * 100
}

// portion is what the share takes of each of its devices on node, in thousandths: the
// fraction, or the memory as upstream reports it, ceil(MiB*100/device MiB)/100 of a device.
// ok is false when the node's devices are too small for the memory (or their memory is not
// known).
func (sh *Share) portion(node *Node) (int64, bool) {
	if sh.MemoryMiB == 0 {
		return min(max(int64(math.Round(sh.Fraction*milli)), 1), milli-1), true
	}
	device := deviceMiB(node.GPUMemory)
	if device < sh.MemoryMiB {
		return 0, false
	}
	hundredths := (sh.MemoryMiB*100 + device - 1) / device
	return min(hundredths*milli/100, milli), true
}

// shareSlots is how many pods asking for share the node's empty devices hold, by a rule any
// sensible placement meets: a share of one device, as many as fit on each device; of n
// devices, the devices taken n at a time, each group holding as many as fit on one device.
func (n *Node) shareSlots(share *Share) int {
	portion, ok := share.portion(n)
	if !ok || share.Devices > n.GPUs {
		return 0
	}
	perDevice := int(milli / portion)
	if share.Devices == 1 {
		return n.GPUs * perDevice
	}
	return n.GPUs / share.Devices * perDevice
}

// charge is what a pod of the job bound to node is charged in GPUs' thousandths: its whole
// GPUs, or its share's portion times its devices: a fraction's on any node, a memory share's
// on that node (one on a device too small for it, which D3 reports, is charged whole
// devices).
func (s *Scenario) charge(job *Job, node string) int64 {
	if job.Share == nil {
		return int64(job.GPUs) * milli
	}
	portion, ok := job.Share.portion(&Node{})
	if job.Share.MemoryMiB > 0 {
		if n := s.node(node); n != nil {
			portion, ok = job.Share.portion(n)
		}
	}
	if !ok {
		portion = milli
	}
	return portion * int64(job.Share.Devices)
}

// chargeRange is the least and the most a pod of the job not yet bound may be charged: what
// it takes on the nodes whose devices can hold it (for a fraction or whole GPUs, one value).
// A scheduler that charges a pending memory share the most it can take (so that what its
// queue's limit counts never grows once it is placed) charges it high; judging with low where
// a lower bound is needed stays safe whatever it charges.
func (s *Scenario) chargeRange(job *Job) (low, high int64) {
	if job.Share == nil {
		return int64(job.GPUs) * milli, int64(job.GPUs) * milli
	}
	if job.Share.MemoryMiB == 0 {
		portion, _ := job.Share.portion(&Node{}) // a fraction is the same part on any node
		return portion * int64(job.Share.Devices), portion * int64(job.Share.Devices)
	}
	low = math.MaxInt64
	for i := range s.Nodes {
		if portion, ok := job.Share.portion(&s.Nodes[i]); ok {
			low, high = min(low, portion), max(high, portion)
		}
	}
	if high == 0 {
		return 0, 0
	}
	devices := int64(job.Share.Devices)
	return low * devices, high * devices
}

// node finds a node by name; nil when the scenario has none.
func (s *Scenario) node(name string) *Node {
	for i := range s.Nodes {
		if s.Nodes[i].Name == name {
			return &s.Nodes[i]
		}
	}
	return nil
}

// gpusOf writes thousandths of GPUs as GPUs.
func gpusOf(m int64) float64 { return float64(m) / milli }

// shareStream sets the stream of GPU shares apart; of the keys from "shr" (0x736872) on, the
// first that draws none for a held seed, so that those still build the scenarios that found
// their defects.
const shareStream = 0x736873

// shareScenarios is the share of scenarios, in thirds, whose jobs may ask for GPU shares.
const shareScenarios = 1

// shareFractions are the fractions drawn: tenths, and quarters, which four of fill a device.
var shareFractions = []float64{0.1, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9}

// deviceMemories are the nvidia.com/gpu.memory labels drawn: MiB of common devices, which
// upstream floors to a multiple of 100 (24576 reads 24500), and two in bytes.
var deviceMemories = []string{"16384", "24576", "40960", "81920", "42949672960", "85899345920"}

// shareMemories are the gpu-memory requests drawn, in MiB: small parts of any device, and
// large ones that only the larger devices hold.
var shareMemories = []int64{2000, 4000, 8000, 10000, 12000, 16000, 20000, 30000, 40000, 60000}

// shareGPUs, in shareScenarios of the scenarios, labels about three nodes in four with the
// memory of their devices, and turns about half of the jobs (default-queue notebooks among
// them) into jobs whose pods ask for part of a GPU: a fraction, in one case in four the
// memory of a device instead, of one device or now and then of two. The rest keep whole
// GPUs, so that shares and whole pods meet on nodes, as victims and as preemptors. A job
// keeps whole GPUs when its share would not let it run on its own (canShare).
func (s *Scenario) shareGPUs(r *rand.Rand) {
	if r.IntN(3) >= shareScenarios {
		return
	}
	for i := range s.Nodes {
		if r.IntN(4) != 0 {
			s.Nodes[i].GPUMemory = deviceMemories[r.IntN(len(deviceMemories))]
		}
	}
	for _, j := range s.Jobs {
		if r.IntN(2) != 0 {
			continue
		}
		share := &Share{Devices: 1}
		if r.IntN(4) == 0 {
			share.MemoryMiB = shareMemories[r.IntN(len(shareMemories))]
		} else {
			share.Fraction = shareFractions[r.IntN(len(shareFractions))]
		}
		switch r.IntN(8) {
		case 0, 1:
			share.Devices = 2
		case 2:
			share.WriteDevices = true
		}
		if s.canShare(j, share) {
			j.Share, j.GPUs = share, 0
		}
	}
}

// canShare reports whether the job, its pods asking for share, can still run on its own: its
// gang fits on the empty cluster's devices, on the nodes its pods may use and whose devices
// hold the share, and, charged the most it may be, within every limit of its queues, and a
// non-preemptible one within every quota.
func (s *Scenario) canShare(j *Job, share *Share) bool {
	trial := *j
	trial.Share, trial.GPUs = share, 0
	_, high := s.chargeRange(&trial)
	if high == 0 {
		return false // no device of the cluster holds it
	}
	gang := int64(j.GangPods())
	limit, quota := s.chainBounds(j.Queue)
	if gpusOf(gang*high) > limit || (!j.Preemptible() && gpusOf(gang*high) > quota) {
		return false
	}
	return s.slots(&trial) >= j.GangPods()
}
