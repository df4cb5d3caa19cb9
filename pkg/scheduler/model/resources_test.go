package model

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

const fpga v1.ResourceName = "example.com/fpga"

func TestResourcesFromListKeepsEveryResourceByName(t *testing.T) {
	got := ResourcesFromList(v1.ResourceList{
		v1.ResourceCPU:                   resource.MustParse("1500m"),
		v1.ResourceMemory:                resource.MustParse("2Gi"),
		GPUResourceName:                  resource.MustParse("4"),
		v1.ResourcePods:                  resource.MustParse("110"),
		fpga:                             resource.MustParse("7"),
		"nvidia.com/mig-1g.10gb":         resource.MustParse("2"),
		"hugepages-2Mi":                  resource.MustParse("1Gi"),
		"rdma/ib":                        resource.MustParse("0"),
		v1.ResourceEphemeralStorage:      resource.MustParse("100Gi"),
		v1.ResourceName("example.com/x"): resource.MustParse("1"),
	})
	want := NewResources(1500, 2<<30, 4).With(Pods, 110).
		WithScalar(fpga, 7).WithScalar("nvidia.com/mig-1g.10gb", 2).WithScalar("hugepages-2Mi", 1<<30).
		WithScalar(v1.ResourceEphemeralStorage, 100<<30).WithScalar("example.com/x", 1)
	if !got.Equal(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if got.Amount(fpga) != 7 || got.Amount("rdma/ib") != 0 || got.Amount(GPUResourceName) != 4*MilliGPU {
		t.Fatalf("amounts by name wrong: %v", got)
	}
}

func TestResourcesArithmetic(t *testing.T) {
	node := NewResources(8000, 64<<30, 8).WithScalar(fpga, 1)
	pod := NewResources(2000, 8<<30, 3)
	if got := node.Sub(pod).Add(pod); !got.Equal(node) {
		t.Errorf("sub then add = %v, want %v", got, node)
	}
	if !pod.FitsIn(node) || node.FitsIn(pod) {
		t.Error("FitsIn must compare every resource")
	}
	if NewResources(1, 0, 9).FitsIn(node) {
		t.Error("9 GPUs do not fit in 8")
	}
	if !(Resources{}).IsZero() || pod.IsZero() || (Resources{}).WithScalar(fpga, 1).IsZero() {
		t.Error("IsZero")
	}
}

// Two pods asking for the node's one FPGA: the first fits, the second does not, and the
// shortage is named.
func TestExtendedResourcesAreNeverCountedTwice(t *testing.T) {
	node := NewResources(8000, 64<<30, 0).WithScalar(fpga, 1)
	pod := NewResources(1000, 1<<30, 0).WithScalar(fpga, 1)
	if !pod.FitsIn(node) {
		t.Fatal("one FPGA fits in one")
	}
	left := node.Sub(pod)
	if name, short := pod.Shortage(left); !short || name != fpga {
		t.Fatalf("second pod: shortage %q %v, want %s", name, short, fpga)
	}
	if !pod.FitsIn(left.Add(pod)) {
		t.Fatal("the FPGA is free again once the first pod is gone")
	}
	noFPGA := NewResources(8000, 64<<30, 8)
	if name, _ := pod.Shortage(noFPGA); name != fpga {
		t.Fatalf("a node without the resource: shortage %q, want %s", name, fpga)
	}
	// What a pod does not ask for always fits, even where it is overcommitted.
	if !NewResources(1000, 0, 0).FitsIn(node.WithScalar(fpga, -1)) {
		t.Fatal("an overcommitted resource the pod does not ask for refused it")
	}
}

func TestRelievesOnlyWhatThePodLacks(t *testing.T) {
	free := NewResources(0, 0, 0).WithScalar(fpga, 0)
	request := NewResources(0, 0, 1).WithScalar(fpga, 1)
	if !(NewResources(0, 0, 1)).Relieves(request, free) || !(Resources{}).WithScalar(fpga, 1).Relieves(request, free) {
		t.Fatal("freeing a lacking GPU or FPGA helps")
	}
	if NewResources(4000, 0, 0).Relieves(request, free) {
		t.Fatal("freeing CPU the pod does not lack does not help")
	}
}

// The fixed resources stay allocation-free, and so does arithmetic where only one side
// carries extended resources (nodes offering RDMA to pods that do not ask for it).
func TestResourcesArithmeticAllocatesNothing(t *testing.T) {
	node := NewResources(8000, 64<<30, 8).WithScalar("rdma/hca", 1000)
	pod := NewResources(2000, 8<<30, 3).With(Pods, 1)
	if allocs := testing.AllocsPerRun(100, func() { _ = pod.FitsIn(node.Sub(pod).Add(pod)) }); allocs != 0 {
		t.Fatalf("%v allocations per check, want 0", allocs)
	}
}

// BenchmarkFitsIn shows resource checks cost nanoseconds and no allocations, which the
// placement loops over thousands of nodes rely on.
func BenchmarkFitsIn(b *testing.B) {
	node := NewResources(8000, 64<<30, 8)
	pod := NewResources(2000, 8<<30, 3)
	b.ReportAllocs()
	for b.Loop() {
		_ = pod.FitsIn(node.Sub(pod))
	}
}
