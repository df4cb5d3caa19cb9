package scale

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
)

// A node of two GPUs, for the observer's view of shares.
func twoGPUNode(o *observer) {
	o.node(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: v1.NodeStatus{Allocatable: v1.ResourceList{
		gpuResource: resource.MustParse("2"), v1.ResourceCPU: resource.MustParse("64"), v1.ResourcePods: resource.MustParse("110")}}})
}

func wholePod(name string) *v1.Pod {
	gpu := v1.ResourceList{gpuResource: resource.MustParse("1")}
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "w", Name: name, UID: types.UID(name)},
		Spec: v1.PodSpec{NodeName: "n", Containers: []v1.Container{{Resources: v1.ResourceRequirements{Requests: gpu, Limits: gpu}}}}}
}

func sharePod(name, fraction, group string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "w", Name: name, UID: types.UID(name),
		Annotations: map[string]string{scheduling.GPUFractionAnnotation: fraction},
		Labels:      map[string]string{scheduling.GPUGroupLabel: group}},
		Spec: v1.PodSpec{NodeName: "n", Containers: []v1.Container{{}}}}
}

func reservationPod(group string) *v1.Pod {
	p := wholePod("reservation-" + group)
	p.Namespace = scheduling.ReservationNamespace
	p.Labels = map[string]string{scheduling.ReservationAppLabel: scheduling.ReservationApp, scheduling.GPUGroupLabel: group}
	return p
}

// Two halves of a device and its reservation pod take one GPU of the node, not three: with a
// whole-GPU pod beside them the node of two GPUs is full, not over-committed; one more
// whole GPU over-commits it.
func TestObserverCountsASharedDeviceOnce(t *testing.T) {
	o := newObserver()
	o.sharing = true
	twoGPUNode(o)
	o.pod(reservationPod("g1"))
	o.pod(sharePod("a", "0.5", "g1"))
	o.pod(sharePod("b", "0.5", "g1"))
	o.pod(wholePod("w1"))
	if len(o.violations) > 0 {
		t.Fatalf("a full node reported: %v", o.violations)
	}
	o.pod(wholePod("w2"))
	if len(o.violations) != 1 || !strings.Contains(o.violations[0], "over-committed in nvidia.com/gpu: 3 in use") {
		t.Errorf("violations %v, want the node over-committed", o.violations)
	}
}

// Each invariant of sharing is reported: a device shared beyond one GPU, a share without a
// reservation pod of its device, a second reservation pod of a device, and a reservation
// pod deleted while a share holds its device; the collector deleting one no share holds is
// not a lost pod.
func TestObserverReportsBrokenSharing(t *testing.T) {
	o := newObserver()
	o.sharing = true
	twoGPUNode(o)
	o.pod(reservationPod("g1"))
	o.pod(sharePod("a", "0.5", "g1"))
	o.pod(sharePod("b", "0.7", "g1"))
	o.pod(sharePod("c", "0.5", "g2"))
	second := reservationPod("g1")
	second.Name, second.UID = "again", "again"
	o.pod(second)
	o.podDeleted(reservationPod("g1"))
	want := []string{"shared beyond one GPU", "has no reservation pod", "has 2 reservation pods", "deleted while shares"}
	if len(o.violations) != len(want) {
		t.Fatalf("violations %v, want %d", o.violations, len(want))
	}
	for i, w := range want {
		if !strings.Contains(o.violations[i], w) {
			t.Errorf("violation %d is %q, want one saying %q", i, o.violations[i], w)
		}
	}

	o = newObserver()
	twoGPUNode(o)
	o.pod(reservationPod("g3"))
	o.podDeleted(reservationPod("g3"))
	if created, deleted := o.takeReservationCounts(); len(o.violations) > 0 || created != 1 || deleted != 1 {
		t.Errorf("collecting an unheld reservation pod: violations %v, created %d, deleted %d", o.violations, created, deleted)
	}
}
