package podgrouper_test

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/podgrouper"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// workload is an object of any kind in namespace ns, with UID uid-<name>, as the API server
// returns it: spec is its YAML-like spec (numbers as int64, as decoded JSON has them).
func workload(apiVersion, kind, name string, spec map[string]any) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"spec": runtime.DeepCopyJSONValue(spec)}}
	if spec == nil {
		o.Object = map[string]any{}
	}
	o.SetAPIVersion(apiVersion)
	o.SetKind(kind)
	o.SetNamespace("ns")
	o.SetName(name)
	o.SetUID(types.UID("uid-" + name))
	return o
}

// controls makes owner the controller of child.
func controls(owner *unstructured.Unstructured, child metav1.Object) {
	child.SetOwnerReferences([]metav1.OwnerReference{*metav1.NewControllerRef(owner, owner.GroupVersionKind())})
}

// podOf is a pod of the scheduler in namespace ns with the labels, controlled by owner (nil:
// a bare pod).
func podOf(name string, labels map[string]string, owner *unstructured.Unstructured) *v1.Pod {
	pod := builders.MakePod("ns", name).UID("uid-" + name).Obj()
	pod.Labels = labels
	if owner != nil {
		controls(owner, pod)
	}
	return pod
}

// groupOf is what the grouper of the default pool decides for pod, whose owners are among
// objects.
func groupOf(t *testing.T, pod *v1.Pod, objects ...*unstructured.Unstructured) podgrouper.Grouping {
	t.Helper()
	grouper := podgrouper.NewGrouper(podgrouper.NewObjectOwners(objects...), clocktesting.NewFakePassiveClock(time.Now()), scheduling.NodePool{})
	grouping, err := grouper.Group(context.Background(), pod)
	if err != nil {
		t.Fatalf("grouping pod %s: %v", pod.Name, err)
	}
	if grouping.PodGroup == nil {
		t.Fatalf("pod %s got no PodGroup", pod.Name)
	}
	return grouping
}
