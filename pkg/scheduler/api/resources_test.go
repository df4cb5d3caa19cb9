package api

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestResourcesFromList(t *testing.T) {
	got := ResourcesFromList(v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse("1500m"),
		v1.ResourceMemory: resource.MustParse("2Gi"),
		GPUResourceName:   resource.MustParse("4"),
		"example.com/foo": resource.MustParse("7"),
	})
	if want := NewResources(1500, 2<<30, 4); got != want {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestResourcesArithmetic(t *testing.T) {
	node := NewResources(8000, 64<<30, 8)
	pod := NewResources(2000, 8<<30, 3)
	if got := node.Sub(pod).Add(pod); got != node {
		t.Errorf("sub then add = %v, want %v", got, node)
	}
	if !pod.FitsIn(node) || node.FitsIn(pod) {
		t.Error("FitsIn must compare every resource")
	}
	if NewResources(1, 0, 9).FitsIn(node) {
		t.Error("9 GPUs do not fit in 8")
	}
	if !(Resources{}).IsZero() || pod.IsZero() {
		t.Error("IsZero")
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
