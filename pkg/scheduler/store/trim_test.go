package store

import (
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// A trimmed pod and node make the same snapshot as the whole objects: Trim leaves everything
// a decision reads (requests, sidecars, ports, affinity, tolerations, selectors, gates,
// conditions, start, nominated node, labels, annotations) and drops only the rest.
func TestTrimLeavesWhatTheSchedulerReads(t *testing.T) {
	gpu := v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), "nvidia.com/gpu": resource.MustParse("1")}
	started := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	managed := []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
	container := func(name string) v1.Container {
		return v1.Container{Name: name, Image: "trainer", Command: []string{"train"}, Args: []string{"--epochs=90"},
			Env:           []v1.EnvVar{{Name: "TOKEN", Value: "secret"}},
			VolumeMounts:  []v1.VolumeMount{{Name: "data", MountPath: "/data"}},
			Ports:         []v1.ContainerPort{{ContainerPort: 8888, HostPort: 8888}},
			Resources:     v1.ResourceRequirements{Requests: gpu, Limits: gpu},
			LivenessProbe: &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}}}
	}
	sidecar := container("proxy")
	sidecar.RestartPolicy = ptr.To(v1.ContainerRestartPolicyAlways)
	// Every field a decision reads, by the builders; the rest, which Trim drops, by hand.
	full := builders.MakePod("ns", "p").UID("uid-p").PodGroup("job").Label(scheduling.SubGroupLabel, "workers").
		Annotation("kubectl.kubernetes.io/last-applied-configuration", `{"kind":"Pod"}`).Node("n1").
		NodeSelector("gpu", "a100").Toleration(v1.Toleration{Key: "dedicated", Operator: v1.TolerationOpExists}).
		RequiredNodeAffinityIn("zone", "a").StartedAt(started).NominatedNode("n1").
		Condition(v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Message: "evicted by reclaim for job ns/other"}).Obj()
	full.ManagedFields = managed
	full.Spec.InitContainers, full.Spec.Containers = []v1.Container{sidecar}, []v1.Container{container("main")}
	full.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
	full.Status.PodIP, full.Status.PodIPs, full.Status.HostIP = "10.0.0.1", []v1.PodIP{{IP: "10.0.0.1"}}, "192.168.0.1"
	full.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "main", Ready: true, Image: "trainer"}}
	node := builders.MakeNode("n1").GPUs(8).Label("gpu", "a100").Label("zone", "a").
		Taint(v1.Taint{Key: "dedicated", Effect: v1.TaintEffectNoSchedule}).Obj()
	node.ManagedFields = managed
	node.Status.Images = []v1.ContainerImage{{Names: []string{"trainer"}, SizeBytes: 1 << 30}}

	storeOf := func(objects ...any) *Store {
		s := New("kai-scheduler", scheduling.NodePool{})
		s.Upsert(job("job", 1))
		for _, o := range objects {
			s.Upsert(o)
		}
		return s
	}
	whole := storeOf(node.DeepCopy(), full.DeepCopy())
	var trimmed []any
	for _, o := range []any{node.DeepCopy(), full.DeepCopy()} {
		out, err := Trim(o)
		if err != nil {
			t.Fatal(err)
		}
		trimmed = append(trimmed, out)
	}
	cut := storeOf(trimmed...)
	want, _ := storeSnapshot(t, whole)
	got, _ := storeSnapshot(t, cut)
	if job := want.Job("ns/job"); job == nil || len(job.Pods) != 1 || job.Pods[0].Placement == nil {
		t.Fatalf("the whole pod is not in the snapshot with its placement: %+v", job)
	}
	if diff := cmp.Diff(want, got, cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
		t.Fatalf("a trimmed pod and node make another snapshot (-whole +trimmed):\n%s", diff)
	}

	pod := trimmed[1].(*v1.Pod)
	if pod.ManagedFields != nil || pod.Spec.Volumes != nil || pod.Spec.Containers[0].Env != nil || pod.Spec.Containers[0].Resources.Limits != nil ||
		pod.Status.ContainerStatuses != nil || pod.Annotations["kubectl.kubernetes.io/last-applied-configuration"] != "" {
		t.Errorf("the pod keeps what is never read: %+v", pod)
	}
	if n := trimmed[0].(*v1.Node); n.Status.Images != nil || n.ManagedFields != nil {
		t.Errorf("the node keeps its images or managed fields")
	}
}
