package api

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// ResourceName indexes a Resources vector.
type ResourceName int

// The resources the scheduler accounts for.
const (
	CPU    ResourceName = iota // millicores
	Memory                     // bytes
	GPU                        // whole devices
	// NumResources is the length of a Resources vector.
	NumResources
)

// ResourceNames lists every resource in vector order.
var ResourceNames = [NumResources]ResourceName{CPU, Memory, GPU}

// GPUResourceName is the extended resource that counts NVIDIA GPUs.
const GPUResourceName v1.ResourceName = "nvidia.com/gpu"

func (r ResourceName) String() string {
	switch r {
	case CPU:
		return "cpu"
	case Memory:
		return "memory"
	case GPU:
		return "gpu"
	}
	return fmt.Sprintf("resource(%d)", int(r))
}

// Resources is a fixed-size vector of amounts: CPU in millicores, memory in bytes, GPUs in
// devices. A value type of three integers, so arithmetic on thousands of nodes allocates
// nothing and is exact.
type Resources [NumResources]int64

// NewResources builds a vector from CPU millicores, memory bytes and GPUs.
func NewResources(milliCPU, memoryBytes, gpus int64) Resources {
	return Resources{CPU: milliCPU, Memory: memoryBytes, GPU: gpus}
}

// ResourcesFromList converts a Kubernetes resource list; other resources are ignored.
func ResourcesFromList(list v1.ResourceList) Resources {
	var r Resources
	if q, ok := list[v1.ResourceCPU]; ok {
		r[CPU] = q.MilliValue()
	}
	if q, ok := list[v1.ResourceMemory]; ok {
		r[Memory] = q.Value()
	}
	if q, ok := list[GPUResourceName]; ok {
		r[GPU] = q.Value()
	}
	return r
}

// Add returns r + o.
func (r Resources) Add(o Resources) Resources {
	for i := range r {
		r[i] += o[i]
	}
	return r
}

// Sub returns r - o.
func (r Resources) Sub(o Resources) Resources {
	for i := range r {
		r[i] -= o[i]
	}
	return r
}

// FitsIn reports whether every amount of r is at most the same amount of capacity.
func (r Resources) FitsIn(capacity Resources) bool {
	for i := range r {
		if r[i] > capacity[i] {
			return false
		}
	}
	return true
}

// IsZero reports whether r holds nothing.
func (r Resources) IsZero() bool {
	return r == Resources{}
}

// Get returns one amount.
func (r Resources) Get(name ResourceName) int64 {
	return r[name]
}

func (r Resources) String() string {
	return fmt.Sprintf("cpu=%dm memory=%d gpu=%d", r[CPU], r[Memory], r[GPU])
}
