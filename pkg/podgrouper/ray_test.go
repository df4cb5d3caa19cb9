package podgrouper_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/podgrouper"
)

// kindCase is one pod of a workload kind with its owners, and the grouping it should get.
type kindCase struct {
	name      string
	pod       *v1.Pod
	objects   []*unstructured.Unstructured
	group     string
	minMember int32
	subGroups []v2alpha2.SubGroup // nil: none
	subGroup  string              // the pod's
	priority  string
	// problem, when set, is the field a WorkloadFieldInvalid problem names; empty: no problem.
	problem string
}

// checkKindCases groups each case's pod and compares what it gets.
func checkKindCases(t *testing.T, cases []kindCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			grouping := groupOf(t, tc.pod, tc.objects...)
			g := grouping.PodGroup
			if g.Name != tc.group || g.Spec.MinMember != tc.minMember || g.Spec.MinSubGroup != nil {
				t.Errorf("PodGroup %s of %d pods (minSubGroup %v); want %s of %d", g.Name, g.Spec.MinMember, g.Spec.MinSubGroup, tc.group, tc.minMember)
			}
			if !reflect.DeepEqual(g.Spec.SubGroups, tc.subGroups) {
				t.Errorf("sub-groups %+v, want %+v", g.Spec.SubGroups, tc.subGroups)
			}
			if grouping.SubGroup != tc.subGroup {
				t.Errorf("the pod's sub-group %q, want %q", grouping.SubGroup, tc.subGroup)
			}
			if g.Spec.PriorityClassName != tc.priority {
				t.Errorf("priority class %q, want %q", g.Spec.PriorityClassName, tc.priority)
			}
			switch {
			case tc.problem == "" && len(grouping.Problems) != 0:
				t.Errorf("problems %+v, want none", grouping.Problems)
			case tc.problem != "" && (len(grouping.Problems) != 1 || grouping.Problems[0].Reason != podgrouper.ReasonWorkloadFieldInvalid ||
				!strings.Contains(grouping.Problems[0].Message, tc.problem)):
				t.Errorf("problems %+v, want one %s naming %s", grouping.Problems, podgrouper.ReasonWorkloadFieldInvalid, tc.problem)
			}
		})
	}
}

// kindAlone is the grouping of a pod whose workload cannot be read: a PodGroup of its own.
func kindAlone(tc kindCase, problem string) kindCase {
	tc.group, tc.minMember, tc.subGroups, tc.subGroup = fmt.Sprintf("pg-%s-uid-%s", tc.pod.Name, tc.pod.Name), 1, nil, ""
	tc.priority, tc.problem = "train", problem
	return tc
}

func kindObjects(o ...*unstructured.Unstructured) []*unstructured.Unstructured { return o }

func rayHead() map[string]string {
	return map[string]string{"ray.io/node-type": "head", "ray.io/group": "headgroup"}
}

func rayWorker(group string) map[string]string {
	return map[string]string{"ray.io/node-type": "worker", "ray.io/group": group}
}

// rayGroup is a worker group as the API server stores it, with the CRD's defaults.
func rayGroup(name string, fields map[string]any) map[string]any {
	g := map[string]any{"groupName": name, "replicas": int64(0), "minReplicas": int64(0),
		"maxReplicas": int64(2147483647), "numOfHosts": int64(1), "template": map[string]any{}}
	for k, v := range fields {
		g[k] = v
	}
	return g
}

func rayClusterSpec(groups ...map[string]any) map[string]any {
	list := make([]any, len(groups))
	for i, g := range groups {
		list[i] = g
	}
	return map[string]any{"headGroupSpec": map[string]any{"template": map[string]any{}}, "workerGroupSpecs": list}
}

// A Ray cluster is one gang: its head and what each worker group is sure to have (minReplicas
// when above 0, else replicas, at most maxReplicas, times numOfHosts), a sub-group per group,
// the pod's by its KubeRay labels. A RayJob's PodGroup stands for the RayJob, a RayService's
// for each of its clusters; ray.io/priority-class-name names the priority class.
func TestRayGang(t *testing.T) {
	// gpu: 2 replicas; cpu: minReplicas 1 of 3 (the autoscaler's floor).
	spec := rayClusterSpec(rayGroup("gpu", map[string]any{"replicas": int64(2)}),
		rayGroup("cpu", map[string]any{"minReplicas": int64(1), "replicas": int64(3)}))
	shape := []v2alpha2.SubGroup{{Name: "headgroup", MinMember: 1}, {Name: "gpu", MinMember: 2}, {Name: "cpu", MinMember: 1}}
	cluster := workload("ray.io/v1", "RayCluster", "rc", spec)

	variants := workload("ray.io/v1", "RayCluster", "multi", rayClusterSpec(
		rayGroup("tpu", map[string]any{"replicas": int64(2), "numOfHosts": int64(4)}),
		rayGroup("capped", map[string]any{"replicas": int64(5), "maxReplicas": int64(3)}),
		rayGroup("paused", map[string]any{"replicas": int64(4), "suspend": true}),
		rayGroup("idle", nil),
		rayGroup("floor", map[string]any{"minReplicas": int64(2)})))
	variantShape := []v2alpha2.SubGroup{{Name: "headgroup", MinMember: 1}, {Name: "tpu", MinMember: 8},
		{Name: "capped", MinMember: 3}, {Name: "floor", MinMember: 2}}

	autoscaledSpec := rayClusterSpec(rayGroup("gpu", map[string]any{"replicas": int64(3)}),
		rayGroup("cpu", map[string]any{"minReplicas": int64(1), "replicas": int64(2)}))
	autoscaledSpec["enableInTreeAutoscaling"] = true
	autoscaled := workload("ray.io/v1", "RayCluster", "auto", autoscaledSpec)

	twice := workload("ray.io/v1", "RayCluster", "twice", rayClusterSpec(
		rayGroup("gpu", map[string]any{"replicas": int64(1)}), rayGroup("gpu", map[string]any{"replicas": int64(2)})))

	job := workload("ray.io/v1", "RayJob", "rj", map[string]any{"entrypoint": "python train.py", "rayClusterSpec": spec})
	job.SetLabels(map[string]string{"ray.io/priority-class-name": "high"})
	jobCluster := workload("ray.io/v1", "RayCluster", "rj-raycluster-abc", spec)
	controls(job, jobCluster)
	submitter := workload("batch/v1", "Job", "rj-submitter", map[string]any{"parallelism": int64(1)})
	controls(job, submitter)
	onExisting := workload("ray.io/v1", "RayJob", "adhoc", map[string]any{"clusterSelector": map[string]any{"ray.io/cluster": "rc"}})
	adhocSubmitter := workload("batch/v1", "Job", "adhoc-submitter", nil)
	controls(onExisting, adhocSubmitter)

	service := workload("ray.io/v1", "RayService", "serve", nil)
	oldCluster := workload("ray.io/v1", "RayCluster", "serve-raycluster-old", spec)
	newCluster := workload("ray.io/v1", "RayCluster", "serve-raycluster-new", rayClusterSpec(rayGroup("gpu", map[string]any{"replicas": int64(4)})))
	controls(service, oldCluster)
	controls(service, newCluster)

	broken := func(name string, groups ...any) *unstructured.Unstructured {
		return workload("ray.io/v1", "RayCluster", name, map[string]any{"workerGroupSpecs": groups})
	}
	negative := broken("negative", rayGroup("gpu", map[string]any{"minReplicas": int64(-1)}))
	hosts := broken("hosts", rayGroup("gpu", map[string]any{"replicas": int64(1), "numOfHosts": "four"}))
	unnamed := broken("unnamed", rayGroup("", map[string]any{"replicas": int64(1)}))
	maxText := broken("maxtext", rayGroup("gpu", map[string]any{"replicas": int64(1), "maxReplicas": "lots"}))
	notList := workload("ray.io/v1", "RayCluster", "notlist", map[string]any{"workerGroupSpecs": "gpu"})

	checkKindCases(t, []kindCase{
		{name: "a RayCluster's head", pod: podOf("rc-head", rayHead(), cluster), objects: kindObjects(cluster),
			group: "pg-rc-uid-rc", minMember: 4, subGroups: shape, subGroup: "headgroup", priority: "train"},
		{name: "a RayCluster's worker", pod: podOf("rc-gpu-x", rayWorker("gpu"), cluster), objects: kindObjects(cluster),
			group: "pg-rc-uid-rc", minMember: 4, subGroups: shape, subGroup: "gpu", priority: "train"},
		{name: "numOfHosts, maxReplicas, minReplicas; suspended and idle groups need none",
			pod: podOf("multi-tpu-x", rayWorker("tpu"), variants), objects: kindObjects(variants),
			group: "pg-multi-uid-multi", minMember: 14, subGroups: variantShape, subGroup: "tpu", priority: "train"},
		{name: "a pod of a suspended group is in no sub-group", pod: podOf("multi-paused-x", rayWorker("paused"), variants), objects: kindObjects(variants),
			group: "pg-multi-uid-multi", minMember: 14, subGroups: variantShape, priority: "train"},
		{name: "an autoscaled cluster: the autoscaler's floors, 0 for gpu, whose pods then join no sub-group",
			pod: podOf("auto-gpu-x", rayWorker("gpu"), autoscaled), objects: kindObjects(autoscaled),
			group: "pg-auto-uid-auto", minMember: 2, subGroups: []v2alpha2.SubGroup{{Name: "headgroup", MinMember: 1}, {Name: "cpu", MinMember: 1}},
			priority: "train"},
		{name: "two groups of one name are one sub-group", pod: podOf("twice-gpu-x", rayWorker("gpu"), twice), objects: kindObjects(twice),
			group: "pg-twice-uid-twice", minMember: 4, subGroups: []v2alpha2.SubGroup{{Name: "headgroup", MinMember: 1}, {Name: "gpu", MinMember: 3}},
			subGroup: "gpu", priority: "train"},
		{name: "a RayJob's cluster: the RayJob's PodGroup, its ray.io/priority-class-name",
			pod: podOf("rj-head", rayHead(), jobCluster), objects: kindObjects(job, jobCluster),
			group: "pg-rj-uid-rj", minMember: 4, subGroups: shape, subGroup: "headgroup", priority: "high"},
		{name: "a RayJob's submitter joins it with the cluster it describes", pod: podOf("rj-submitter-x", nil, submitter), objects: kindObjects(job, submitter),
			group: "pg-rj-uid-rj", minMember: 4, subGroups: shape, priority: "high"},
		{name: "a RayJob on an existing cluster: its submitter alone", pod: podOf("adhoc-submitter-x", nil, adhocSubmitter),
			objects: kindObjects(onExisting, adhocSubmitter), group: "pg-adhoc-uid-adhoc", minMember: 1, priority: "train"},
		{name: "a RayService's cluster is its own PodGroup", pod: podOf("old-gpu-x", rayWorker("gpu"), oldCluster), objects: kindObjects(service, oldCluster),
			group: "pg-serve-raycluster-old-uid-serve-raycluster-old", minMember: 4, subGroups: shape, subGroup: "gpu", priority: "train"},
		{name: "and so is its next one, during an upgrade", pod: podOf("new-head", rayHead(), newCluster), objects: kindObjects(service, newCluster),
			group: "pg-serve-raycluster-new-uid-serve-raycluster-new", minMember: 5,
			subGroups: []v2alpha2.SubGroup{{Name: "headgroup", MinMember: 1}, {Name: "gpu", MinMember: 4}}, subGroup: "headgroup", priority: "train"},
		kindAlone(kindCase{name: "a negative minReplicas", pod: podOf("negative-head", rayHead(), negative), objects: kindObjects(negative)},
			"spec.workerGroupSpecs[0].minReplicas"),
		kindAlone(kindCase{name: "a numOfHosts that is no number", pod: podOf("hosts-head", rayHead(), hosts), objects: kindObjects(hosts)},
			"spec.workerGroupSpecs[0].numOfHosts"),
		kindAlone(kindCase{name: "a worker group without a name", pod: podOf("unnamed-head", rayHead(), unnamed), objects: kindObjects(unnamed)},
			"spec.workerGroupSpecs[0].groupName"),
		kindAlone(kindCase{name: "a maxReplicas that is no number", pod: podOf("maxtext-head", rayHead(), maxText), objects: kindObjects(maxText)},
			"spec.workerGroupSpecs[0].maxReplicas"),
		kindAlone(kindCase{name: "worker groups that are no list", pod: podOf("notlist-head", rayHead(), notList), objects: kindObjects(notList)},
			"spec.workerGroupSpecs"),
	})
}
