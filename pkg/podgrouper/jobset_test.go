package podgrouper_test

import (
	"fmt"
	"hash/fnv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/podgrouper"
)

// expectedGang is the PodGroup a pod should get, and its sub-group. A non-empty badField says
// the workload is malformed there: the pod is then grouped on its own and the field reported.
type expectedGang struct {
	group       string
	minMember   int32
	minSubGroup *int32
	subGroups   []v2alpha2.SubGroup
	subGroup    string
	badField    string
	// overridden: a gang annotation replaced the rule's gang, sub-groups and all; the pod's
	// sub-group is then group.go's to decide, and not checked here.
	overridden bool
}

func (e expectedGang) check(t *testing.T, pod *v1.Pod, objects ...*unstructured.Unstructured) {
	t.Helper()
	got := groupOf(t, pod, objects...)
	g := got.PodGroup
	if e.badField != "" {
		if len(got.Problems) != 1 || got.Problems[0].Reason != podgrouper.ReasonWorkloadFieldInvalid ||
			!strings.Contains(got.Problems[0].Message, e.badField) {
			t.Errorf("problems %v, want one %s naming %s", got.Problems, podgrouper.ReasonWorkloadFieldInvalid, e.badField)
		}
		e.group, e.minMember = "pg-"+pod.Name+"-uid-"+pod.Name, 1
	} else if len(got.Problems) != 0 {
		t.Errorf("problems %v, want none", got.Problems)
	}
	if g.Name != e.group || g.Spec.MinMember != e.minMember || !cmp.Equal(g.Spec.MinSubGroup, e.minSubGroup) {
		t.Errorf("PodGroup %s of minMember %d, minSubGroup %v; want %s of %d, %v",
			g.Name, g.Spec.MinMember, optionalCount(g.Spec.MinSubGroup), e.group, e.minMember, optionalCount(e.minSubGroup))
	}
	if diff := cmp.Diff(e.subGroups, g.Spec.SubGroups); diff != "" {
		t.Errorf("sub-groups (-want +got):\n%s", diff)
	}
	if got.SubGroup != e.subGroup && !e.overridden {
		t.Errorf("pod's sub-group %q, want %q", got.SubGroup, e.subGroup)
	}
	if g.Spec.PriorityClassName != "train" {
		t.Errorf("priority class %q, want train", g.Spec.PriorityClassName)
	}
}

func optionalCount(p *int32) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

// replicatedJob is a JobSet's replicated job: replicas Jobs of the template's parallelism and
// completions (0: the field is absent; negative values are kept, to be refused).
// withField sets a field of an unstructured object's map and returns the map.
func withField(m map[string]any, value any, path ...string) map[string]any {
	if err := unstructured.SetNestedField(m, value, path...); err != nil {
		panic(err)
	}
	return m
}

func replicatedJob(name string, replicas, parallelism, completions int64) map[string]any {
	spec := map[string]any{}
	if parallelism != 0 {
		spec["parallelism"] = parallelism
	}
	if completions != 0 {
		spec["completions"] = completions
	}
	rj := map[string]any{"name": name, "template": map[string]any{"spec": spec}}
	if replicas != 0 {
		rj["replicas"] = replicas
	}
	return rj
}

func jobSetOf(name string, spec map[string]any) *unstructured.Unstructured {
	return workload("jobset.x-k8s.io/v1alpha2", "JobSet", name, spec)
}

// jobSetPod is a pod of replica index of replicated job rj of js, with its Job (controlled by
// js) as the JobSet controller makes them: both labelled with the replicated job and index.
func jobSetPod(js *unstructured.Unstructured, rj string, index int) (*v1.Pod, *unstructured.Unstructured) {
	labels := map[string]string{"jobset.sigs.k8s.io/replicatedjob-name": rj, "jobset.sigs.k8s.io/job-index": fmt.Sprint(index)}
	job := workload("batch/v1", "Job", fmt.Sprintf("%s-%s-%d", js.GetName(), rj, index), nil)
	job.SetLabels(labels)
	controls(js, job)
	return podOf(job.GetName()+"-x", labels, job), job
}

func jobSetLeaf(name, parent string, pods int32) v2alpha2.SubGroup {
	return v2alpha2.SubGroup{Name: name, MinMember: pods, Parent: ptr.To(parent)}
}

func jobSetParent(name string, n int32) v2alpha2.SubGroup {
	return v2alpha2.SubGroup{Name: name, MinSubGroup: ptr.To(n)}
}

// A JobSet is one PodGroup: a sub-group per replicated job needing all its replicas, a leaf
// per replica needing the pods its Job runs at once, and the JobSet needing every replicated
// job when they start together, one when they start in turn (InOrder, dependsOn). A
// TrainJob is grouped as its JobSet, in a PodGroup of its own name.
func TestJobSetAndTrainJob(t *testing.T) {
	shape := func(extra map[string]any) map[string]any {
		spec := map[string]any{"replicatedJobs": []any{
			replicatedJob("driver", 0, 0, 0),
			replicatedJob("workers", 2, 4, 4),
		}}
		for k, v := range extra {
			spec[k] = v
		}
		return spec
	}
	normal := []v2alpha2.SubGroup{
		jobSetParent("driver", 1), jobSetLeaf("driver-replica-0", "driver", 1),
		jobSetParent("workers", 2), jobSetLeaf("workers-replica-0", "workers", 4), jobSetLeaf("workers-replica-1", "workers", 4),
	}
	type testCase struct {
		name    string
		pod     *v1.Pod
		objects []*unstructured.Unstructured
		want    expectedGang
	}
	jobSetCase := func(name string, js *unstructured.Unstructured, rj string, index int, want expectedGang) testCase {
		pod, job := jobSetPod(js, rj, index)
		return testCase{name: name, pod: pod, objects: []*unstructured.Unstructured{js, job}, want: want}
	}
	annotated := func(js *unstructured.Unstructured, key, value string) *unstructured.Unstructured {
		js.SetAnnotations(map[string]string{key: value})
		return js
	}
	trainJob := workload("trainer.kubeflow.org/v1alpha1", "TrainJob", "llama", map[string]any{"runtimeRef": map[string]any{"name": "torch-distributed"}})
	trainJobSet := func(spec map[string]any) *unstructured.Unstructured {
		js := jobSetOf("llama", spec)
		controls(trainJob, js)
		return js
	}
	trainCase := func(name string, js *unstructured.Unstructured, rj string, want expectedGang) testCase {
		tc := jobSetCase(name, js, rj, 0, want)
		tc.objects = append(tc.objects, trainJob)
		return tc
	}
	long := strings.Repeat("x", 60)
	cut := func(name string) string { // 54 characters and a hash of the whole: 63
		h := fnv.New32a()
		h.Write([]byte(name))
		return fmt.Sprintf("%s-%08x", name[:54], h.Sum32())
	}

	for _, tc := range []testCase{
		jobSetCase("every replicated job, every replica", jobSetOf("train", shape(nil)), "workers", 1,
			expectedGang{group: "pg-train-uid-train", minSubGroup: ptr.To[int32](2), subGroups: normal, subGroup: "workers-replica-1"}),
		jobSetCase("a driver pod", jobSetOf("train", shape(nil)), "driver", 0,
			expectedGang{group: "pg-train-uid-train", minSubGroup: ptr.To[int32](2), subGroups: normal, subGroup: "driver-replica-0"}),
		jobSetCase("AnyOrder is the default", jobSetOf("train", shape(map[string]any{"startupPolicy": map[string]any{"startupPolicyOrder": "AnyOrder"}})), "workers", 0,
			expectedGang{group: "pg-train-uid-train", minSubGroup: ptr.To[int32](2), subGroups: normal, subGroup: "workers-replica-0"}),
		jobSetCase("InOrder needs one replicated job", jobSetOf("train", shape(map[string]any{"startupPolicy": map[string]any{"startupPolicyOrder": "InOrder"}})), "workers", 0,
			expectedGang{group: "pg-train-uid-train", minSubGroup: ptr.To[int32](1), subGroups: normal, subGroup: "workers-replica-0"}),
		jobSetCase("a replicated job that dependsOn another: one", jobSetOf("train", map[string]any{"replicatedJobs": []any{
			replicatedJob("init", 0, 0, 0),
			withField(replicatedJob("node", 0, 2, 2), []any{map[string]any{"name": "init", "status": "Complete"}}, "dependsOn"),
		}}), "node", 0,
			expectedGang{group: "pg-train-uid-train", minSubGroup: ptr.To[int32](1), subGroup: "node-replica-0", subGroups: []v2alpha2.SubGroup{
				jobSetParent("init", 1), jobSetLeaf("init-replica-0", "init", 1), jobSetParent("node", 1), jobSetLeaf("node-replica-0", "node", 2)}}),
		jobSetCase("a Job runs no more pods than its completions", jobSetOf("train", map[string]any{"replicatedJobs": []any{replicatedJob("w", 1, 8, 3)}}), "w", 0,
			expectedGang{group: "pg-train-uid-train", minSubGroup: ptr.To[int32](1), subGroup: "w-replica-0", subGroups: []v2alpha2.SubGroup{
				jobSetParent("w", 1), jobSetLeaf("w-replica-0", "w", 3)}}),
		jobSetCase("a replicated job that runs no pods is left out", jobSetOf("train", map[string]any{"replicatedJobs": []any{
			replicatedJob("w", 1, 2, 0),
			withField(replicatedJob("spare", 0, 0, 0), int64(0), "replicas"),
			withField(replicatedJob("idle", 3, 0, 0), int64(0), "template", "spec", "parallelism"),
			withField(replicatedJob("done", 3, 2, 0), int64(0), "template", "spec", "completions"),
		}}), "w", 0,
			expectedGang{group: "pg-train-uid-train", minSubGroup: ptr.To[int32](1), subGroup: "w-replica-0", subGroups: []v2alpha2.SubGroup{
				jobSetParent("w", 1), jobSetLeaf("w-replica-0", "w", 2)}}),
		jobSetCase("too many replicas for a sub-group each: one per replicated job", jobSetOf("train", map[string]any{"replicatedJobs": []any{
			replicatedJob("driver", 0, 0, 0), replicatedJob("workers", 200, 4, 0)}}), "workers", 150,
			expectedGang{group: "pg-train-uid-train", minSubGroup: ptr.To[int32](2), subGroup: "workers", subGroups: []v2alpha2.SubGroup{
				{Name: "driver", MinMember: 1}, {Name: "workers", MinMember: 800}}}),
		jobSetCase("a long name is cut to a sub-group's 63 characters", jobSetOf("train", map[string]any{"replicatedJobs": []any{replicatedJob(long, 0, 0, 0)}}), long, 0,
			expectedGang{group: "pg-train-uid-train", minSubGroup: ptr.To[int32](1), subGroup: cut(long + "-replica-0"), subGroups: []v2alpha2.SubGroup{
				jobSetParent(long, 1), jobSetLeaf(cut(long+"-replica-0"), long, 1)}}),
		jobSetCase("a pod of a replica scaled away is in no sub-group", jobSetOf("train", shape(nil)), "workers", 5,
			expectedGang{group: "pg-train-uid-train", minSubGroup: ptr.To[int32](2), subGroups: normal}),
		jobSetCase("batch-min-member replaces the gang", annotated(jobSetOf("train", shape(nil)), podgrouper.BatchMinMemberAnnotation, "3"), "workers", 0,
			expectedGang{group: "pg-train-uid-train", minMember: 3, overridden: true}),
		jobSetCase("negative replicas", jobSetOf("train", map[string]any{"replicatedJobs": []any{replicatedJob("driver", 0, 0, 0), replicatedJob("workers", -1, 4, 0)}}), "workers", 0,
			expectedGang{badField: "spec.replicatedJobs[1].replicas"}),
		jobSetCase("negative parallelism", jobSetOf("train", map[string]any{"replicatedJobs": []any{replicatedJob("workers", 2, -4, 0)}}), "workers", 0,
			expectedGang{badField: "spec.replicatedJobs[0].template.spec.parallelism"}),
		jobSetCase("an unknown startup order", jobSetOf("train", shape(map[string]any{"startupPolicy": map[string]any{"startupPolicyOrder": "Sometimes"}})), "workers", 0,
			expectedGang{badField: "spec.startupPolicy.startupPolicyOrder"}),

		trainCase("a TrainJob is grouped as its JobSet, by its own name", trainJobSet(map[string]any{"replicatedJobs": []any{replicatedJob("node", 1, 4, 4)}}), "node",
			expectedGang{group: "pg-llama-uid-llama", minSubGroup: ptr.To[int32](1), subGroup: "node-replica-0", subGroups: []v2alpha2.SubGroup{
				jobSetParent("node", 1), jobSetLeaf("node-replica-0", "node", 4)}}),
		trainCase("a TrainJob's JobSet with negative replicas", trainJobSet(map[string]any{"replicatedJobs": []any{replicatedJob("node", -2, 4, 4)}}), "node",
			expectedGang{badField: "spec.replicatedJobs[0].replicas"}),
		{name: "a TrainJob without a JobSet is a gang of one", pod: podOf("llama-x", nil, trainJob), objects: []*unstructured.Unstructured{trainJob},
			want: expectedGang{group: "pg-llama-uid-llama", minMember: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.want.check(t, tc.pod, tc.objects...) })
	}
}
