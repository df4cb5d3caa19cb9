package gpureservation_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/gpureservation"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// Upstream's name: gpu-reservation- and the first 8 bytes of sha256("<node>/<group>") in hex
// (computed apart, with Python's hashlib), so that a reservation made by upstream's binder
// is found, not made twice, after a switch.
func TestReservationPodNameIsUpstreams(t *testing.T) {
	if got, want := gpureservation.PodName("node-a", "group-a"), "gpu-reservation-a69b9e98a7d2e9bd"; got != want {
		t.Fatalf("PodName = %q, want %q", got, want)
	}
}

func sharePod(annotations map[string]string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "infer", UID: "uid-1", Annotations: annotations},
		Spec: v1.PodSpec{
			InitContainers: []v1.Container{{Name: "warmup"}},
			Containers:     []v1.Container{{Name: "sidecar"}, {Name: "server"}},
		},
	}
}

func TestShareConfigMapsGoToTheNamedContainer(t *testing.T) {
	for _, c := range []struct {
		container, name string
	}{
		{"", "p-0"}, // the first container by default
		{"server", "p-1"},
		{"warmup", "p-i0"},
	} {
		annotations := map[string]string{scheduling.SharedGPUConfigMapAnnotation: "p"}
		if c.container != "" {
			annotations[scheduling.GPUFractionContainerNameAnnotation] = c.container
		}
		maps, err := gpureservation.ConfigMaps(sharePod(annotations), []string{"GPU-1"}, 500, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(maps) != 2 || maps[0].Name != c.name || maps[1].Name != c.name+"-evar" {
			t.Fatalf("container %q: ConfigMaps %v, want %s and %s-evar", c.container, names(maps), c.name, c.name)
		}
	}
}

func TestShareConfigMapsNameDevicesByCDINameWhenAsked(t *testing.T) {
	pod := sharePod(map[string]string{scheduling.SharedGPUConfigMapAnnotation: "p"})
	maps, err := gpureservation.ConfigMaps(pod, []string{"GPU-1", "GPU-2"}, model.MemoryPortion(10000, 40960), true)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		scheduling.VisibleDevicesKey: "k8s.device-plugin.nvidia.com/gpu=GPU-1,k8s.device-plugin.nvidia.com/gpu=GPU-2",
		scheduling.GPUPortionKey:     "0.25", // 10,000 of 40,960 MiB, rounded up to the hundredth
	}
	for _, cm := range maps {
		if len(cm.Data) != 2 || cm.Data[scheduling.VisibleDevicesKey] != want[scheduling.VisibleDevicesKey] || cm.Data[scheduling.GPUPortionKey] != want[scheduling.GPUPortionKey] {
			t.Fatalf("%s holds %v, want %v", cm.Name, cm.Data, want)
		}
		if len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].UID != "uid-1" {
			t.Fatalf("%s is owned by %v, want the pod alone", cm.Name, cm.OwnerReferences)
		}
	}
}

func TestNoConfigMapsForAPodNoWebhookPrepared(t *testing.T) {
	maps, err := gpureservation.ConfigMaps(sharePod(nil), []string{"GPU-1"}, 500, false)
	if err != nil || maps != nil {
		t.Fatalf("ConfigMaps = %v, %v; want none: no container reads them", names(maps), err)
	}
}

func TestAContainerNameNamingNoContainerIsRefusedNamingTheAnnotation(t *testing.T) {
	pod := sharePod(map[string]string{scheduling.SharedGPUConfigMapAnnotation: "p", scheduling.GPUFractionContainerNameAnnotation: "trainer"})
	_, err := gpureservation.ConfigMaps(pod, []string{"GPU-1"}, 500, false)
	want := `annotation gpu-fraction-container-name="trainer": the pod has no container "trainer" (its containers: warmup (init), sidecar, server)`
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}

func names(maps []*v1.ConfigMap) []string {
	var out []string
	for _, cm := range maps {
		out = append(out, cm.Name)
	}
	return out
}
