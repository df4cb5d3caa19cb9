package model

import (
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// ResourceName names one of the resources every pod and node have, which Resources keeps in
// a fixed array; every other resource is kept by its Kubernetes name.
type ResourceName int

// The resources kept in the fixed part of Resources. The first three are also the resources
// queues share (QuotaResources).
const (
	CPU    ResourceName = iota // millicores
	Memory                     // bytes
	GPU                        // thousandths of a device (MilliGPU): a share of one counts as its fraction
	Pods                       // pod slots: every pod takes one, a node has its "pods" allocatable
	numDense
)

// FixedResources lists the resources kept in the fixed part of Resources, in index order.
var FixedResources = [numDense]ResourceName{CPU, Memory, GPU, Pods}

// NumQuotaResources is how many resources queues share: CPU, memory and GPUs, the resources
// a KAI queue's quota, limit and over-quota weight are given for.
const NumQuotaResources = 3

// QuotaResources lists the resources queues share, in index order.
var QuotaResources = [NumQuotaResources]ResourceName{CPU, Memory, GPU}

// GPUResourceName is the extended resource that counts NVIDIA GPUs.
const GPUResourceName v1.ResourceName = "nvidia.com/gpu"

// MilliGPU is how many of the scheduler's GPU units one whole device is. GPUs are counted in
// thousandths, as CPU is in millicores, so that a pod given half a device (GPU sharing)
// counts 0.5 GPU in its queue's quota, fair share and limit, exactly, in integers.
const MilliGPU = 1000

// kubeNames are the Kubernetes names of the fixed resources.
var kubeNames = [numDense]v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, GPUResourceName, v1.ResourcePods}

// KubeName is the resource's name in Kubernetes objects and messages.
func (r ResourceName) KubeName() v1.ResourceName { return kubeNames[r] }

func (r ResourceName) String() string {
	if r >= 0 && r < numDense {
		return string(kubeNames[r])
	}
	return fmt.Sprintf("resource(%d)", int(r))
}

// Scalar is an amount of a resource outside the fixed ones (an extended resource such as a
// MIG profile, RDMA devices or FPGAs; hugepages; ephemeral storage), by name.
type Scalar struct {
	Name  v1.ResourceName
	Value int64
}

// Resources is an amount of every resource by name: CPU in millicores, memory in bytes, GPUs
// and pods in units, in a fixed array; any other resource in a list by name. The model is
// open — whatever a node offers or a pod requests is accounted — yet the common case stays a
// value of four integers and a nil pointer: the list is immutable once built and shared
// between values, so arithmetic copies it only when both sides carry one. Clusters without
// extended resources allocate nothing in the placement loops.
type Resources struct {
	dense [numDense]int64
	// others is sorted by name, without zero amounts; nil when empty. Never modified once built.
	others *scalarList
}

type scalarList struct{ items []Scalar }

// scalars returns the resources outside the fixed ones, by name.
func (r Resources) scalars() []Scalar {
	if r.others == nil {
		return nil
	}
	return r.others.items
}

// NewResources builds an amount from CPU millicores, memory bytes and whole GPUs.
func NewResources(milliCPU, memoryBytes, gpus int64) Resources {
	return Resources{dense: [numDense]int64{CPU: milliCPU, Memory: memoryBytes, GPU: gpus * MilliGPU}}
}

// ResourcesFromList converts a Kubernetes resource list, keeping every resource it names:
// CPU in millicores, GPUs in thousandths (MilliGPU), everything else in units of the
// quantity (bytes, devices).
func ResourcesFromList(list v1.ResourceList) Resources {
	var r Resources
	var others []Scalar
	for name, q := range list {
		switch i := denseIndex(name); {
		case i == CPU || i == GPU:
			r.dense[i] = q.MilliValue()
		case i >= 0:
			r.dense[i] = q.Value()
		case !q.IsZero():
			others = append(others, Scalar{Name: name, Value: q.Value()})
		}
	}
	if len(others) > 0 {
		slices.SortFunc(others, func(a, b Scalar) int { return strings.Compare(string(a.Name), string(b.Name)) })
		r.others = &scalarList{items: others}
	}
	return r
}

// PodRequest converts what a pod requests (summed by the Kubernetes resource helpers) and
// adds the pod slot every pod takes on its node.
func PodRequest(list v1.ResourceList) Resources {
	return ResourcesFromList(list).With(Pods, 1)
}

func denseIndex(name v1.ResourceName) ResourceName {
	for i, n := range kubeNames {
		if n == name {
			return ResourceName(i)
		}
	}
	return -1
}

// Get returns the amount of a fixed resource.
func (r Resources) Get(name ResourceName) int64 { return r.dense[name] }

// With returns r with one fixed resource set to an amount.
func (r Resources) With(name ResourceName, amount int64) Resources {
	r.dense[name] = amount
	return r
}

// Amount returns the amount of any resource by its Kubernetes name.
func (r Resources) Amount(name v1.ResourceName) int64 {
	if i := denseIndex(name); i >= 0 {
		return r.dense[i]
	}
	return r.scalar(name)
}

func (r Resources) scalar(name v1.ResourceName) int64 {
	for _, s := range r.scalars() {
		if s.Name == name {
			return s.Value
		}
	}
	return 0
}

// WithScalar returns r with a resource outside the fixed ones set to an amount.
func (r Resources) WithScalar(name v1.ResourceName, amount int64) Resources {
	return r.merge(Resources{others: &scalarList{items: []Scalar{{Name: name, Value: amount - r.Amount(name)}}}}, 1)
}

// Scalars returns the resources outside the fixed ones, by name; the caller must not modify it.
func (r Resources) Scalars() []Scalar { return r.scalars() }

// Add returns r + o.
func (r Resources) Add(o Resources) Resources {
	// Unrolled, here and below: these run in the innermost loops of every search, and the
	// compiler does not unroll loops.
	r.dense[0] += o.dense[0]
	r.dense[1] += o.dense[1]
	r.dense[2] += o.dense[2]
	r.dense[3] += o.dense[3]
	if o.others != nil {
		return r.addOthers(o)
	}
	return r
}

// addOthers is Add for the resources outside the fixed ones, kept apart so that Add inlines.
func (r Resources) addOthers(o Resources) Resources {
	if r.others == nil {
		r.others = o.others // shared: neither is ever modified
		return r
	}
	return r.merge(o, 1)
}

// Sub returns r - o.
func (r Resources) Sub(o Resources) Resources {
	r.dense[0] -= o.dense[0]
	r.dense[1] -= o.dense[1]
	r.dense[2] -= o.dense[2]
	r.dense[3] -= o.dense[3]
	if o.others != nil {
		return r.merge(o, -1)
	}
	return r
}

// merge returns r + sign*o for the scalars (the dense part of r is kept as it is), in a new
// slice, dropping zero amounts.
func (r Resources) merge(o Resources, sign int64) Resources {
	a, b := r.scalars(), o.scalars()
	out := make([]Scalar, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		var s Scalar
		switch {
		case j == len(b) || (i < len(a) && a[i].Name < b[j].Name):
			s = a[i]
			i++
		case i == len(a) || b[j].Name < a[i].Name:
			s = Scalar{Name: b[j].Name, Value: sign * b[j].Value}
			j++
		default:
			s = Scalar{Name: a[i].Name, Value: a[i].Value + sign*b[j].Value}
			i++
			j++
		}
		if s.Value != 0 {
			out = append(out, s)
		}
	}
	r.others = nil // one representation of "none", so equal amounts compare equal
	if len(out) > 0 {
		r.others = &scalarList{items: out}
	}
	return r
}

// AtLeastZero returns r with every negative amount raised to zero.
func (r Resources) AtLeastZero() Resources {
	for i := range r.dense {
		r.dense[i] = max(r.dense[i], 0)
	}
	if !slices.ContainsFunc(r.scalars(), func(s Scalar) bool { return s.Value < 0 }) {
		return r
	}
	var kept []Scalar
	for _, s := range r.scalars() {
		if s.Value > 0 {
			kept = append(kept, s)
		}
	}
	r.others = nil
	if len(kept) > 0 {
		r.others = &scalarList{items: kept}
	}
	return r
}

// HasNegative reports whether any amount is below zero: more taken than there is.
func (r Resources) HasNegative() bool {
	for _, v := range r.dense {
		if v < 0 {
			return true
		}
	}
	return slices.ContainsFunc(r.scalars(), func(s Scalar) bool { return s.Value < 0 })
}

// FitsIn reports whether every resource r asks for is available in capacity. As in
// kube-scheduler, a resource r does not ask for always fits, even where capacity is
// overcommitted.
func (r Resources) FitsIn(capacity Resources) bool {
	// The fixed resources are compared directly: this is the innermost check of every
	// placement loop. An amount above max(capacity, 0) is one asked for (above zero) and
	// above capacity.
	c := &capacity.dense
	if r.dense[0] > max(c[0], 0) || r.dense[1] > max(c[1], 0) || r.dense[2] > max(c[2], 0) || r.dense[3] > max(c[3], 0) {
		return false
	}
	return r.others == nil || r.othersFit(capacity)
}

// othersFit is FitsIn for the resources outside the fixed ones, kept apart so that FitsIn
// inlines.
func (r Resources) othersFit(capacity Resources) bool {
	_, short := r.Shortage(capacity)
	return !short
}

// Shortage returns the first resource (fixed ones in index order, then by name) that r asks
// for and capacity lacks, and whether there is one.
func (r Resources) Shortage(capacity Resources) (v1.ResourceName, bool) {
	for name := range r.Shortages(capacity) {
		return name, true
	}
	return "", false
}

// Shortages yields every resource r asks for and capacity lacks: fixed ones in index order,
// then the others by name.
func (r Resources) Shortages(capacity Resources) iter.Seq[v1.ResourceName] {
	return func(yield func(v1.ResourceName) bool) {
		for i, amount := range r.dense {
			if amount > 0 && amount > capacity.dense[i] && !yield(kubeNames[i]) {
				return
			}
		}
		j, have := 0, capacity.scalars()
		for _, s := range r.scalars() {
			for j < len(have) && have[j].Name < s.Name {
				j++
			}
			amount := int64(0)
			if j < len(have) && have[j].Name == s.Name {
				amount = have[j].Value
			}
			if s.Value > 0 && s.Value > amount && !yield(s.Name) {
				return
			}
		}
	}
}

// Relieves reports whether r holds some of a resource that request asks more of than free
// has: whether freeing r would help a pod that does not fit.
func (r Resources) Relieves(request, free Resources) bool {
	for i, want := range request.dense {
		if want > max(free.dense[i], 0) && r.dense[i] > 0 {
			return true
		}
	}
	if request.others == nil {
		return false
	}
	for _, s := range request.scalars() {
		if s.Value > free.scalar(s.Name) && r.scalar(s.Name) > 0 {
			return true
		}
	}
	return false
}

// IsZero reports whether r holds nothing.
func (r Resources) IsZero() bool {
	return r.dense == [numDense]int64{} && r.others == nil
}

// Equal reports whether r and o hold the same amount of every resource.
func (r Resources) Equal(o Resources) bool {
	return r.dense == o.dense && slices.Equal(r.scalars(), o.scalars())
}

func (r Resources) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cpu=%dm memory=%d gpu=%s", r.dense[CPU], r.dense[Memory], FormatGPUs(r.dense[GPU]))
	if r.dense[Pods] != 0 {
		fmt.Fprintf(&b, " pods=%d", r.dense[Pods])
	}
	for _, s := range r.scalars() {
		fmt.Fprintf(&b, " %s=%d", s.Name, s.Value)
	}
	return b.String()
}

// FormatGPUs writes an amount of GPUs in the scheduler's units as devices: 2, 0.5, 1.25.
func FormatGPUs(milli int64) string {
	return strconv.FormatFloat(float64(milli)/MilliGPU, 'f', -1, 64)
}
