package podgrouper_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/podgrouper"
	"github.com/kai-minruntime/kai-scheduler/test/testenv"
)

// Whatever a workload holds — numbers where strings belong, negative replicas, lists where
// maps belong, labels of any value, owners in any order — the grouper never panics, always
// gives the pod a PodGroup, and that PodGroup is one the API server accepts (a name it can
// store, a gang the CRD's rules allow): a PodGroup refused by the API server would leave its
// pods waiting for ever, which is exactly what grouping must never do. Workloads are the
// real kinds' smallest objects (test/testenv), their fields shaken at random.
func TestNoWorkloadBreaksTheGrouper(t *testing.T) {
	seeds := 400
	if testing.Short() {
		seeds = 50
	}
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 41))
		owners := randomChain(rng)
		pod := podOf("p", randomPodLabels(rng), owners[0])
		if rng.IntN(4) == 0 {
			pod.Annotations = map[string]string{podgrouper.MinMemberAnnotation: randomText(rng)}
		}
		grouper := podgrouper.NewGrouper(podgrouper.NewObjectOwners(owners...), clocktesting.NewFakePassiveClock(time.Now()), scheduling.NodePool{})
		grouping, err := func() (g podgrouper.Grouping, err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			return grouper.Group(context.Background(), pod)
		}()
		if err != nil {
			t.Fatalf("seed %d: %v\nchain %s", seed, err, describeChain(owners))
		}
		if grouping.PodGroup == nil {
			t.Fatalf("seed %d: no PodGroup\nchain %s", seed, describeChain(owners))
		}
		if msg := storable(grouping.PodGroup, grouping.SubGroup); msg != "" {
			t.Fatalf("seed %d: the API server would refuse PodGroup %s: %s\nchain %s", seed, grouping.PodGroup.Name, msg, describeChain(owners))
		}
	}
}

// storable is why the PodGroup CRD's validation would refuse the PodGroup, empty if it would not.
func storable(g *v2alpha2.PodGroup, podSubGroup string) string {
	if errs := validation.IsDNS1123Subdomain(g.Name); len(errs) > 0 {
		return "name: " + strings.Join(errs, "; ")
	}
	switch {
	case g.Spec.MinSubGroup == nil && g.Spec.MinMember < 1:
		return fmt.Sprintf("minMember %d below 1", g.Spec.MinMember)
	case g.Spec.MinSubGroup != nil && g.Spec.MinMember != 0:
		return "minMember and minSubGroup both set"
	}
	if len(g.Spec.SubGroups) > 128 {
		return fmt.Sprintf("%d sub-groups, above the CRD's 128", len(g.Spec.SubGroups))
	}
	children := map[string]int32{}
	names := map[string]bool{}
	for _, sg := range g.Spec.SubGroups {
		switch {
		case sg.Name == "" || len(sg.Name) > 63:
			return fmt.Sprintf("sub-group name %q", sg.Name)
		case names[sg.Name]:
			return "sub-group " + sg.Name + " twice"
		case sg.MinSubGroup == nil && sg.MinMember < 1:
			return fmt.Sprintf("sub-group %s of minMember %d", sg.Name, sg.MinMember)
		case sg.MinSubGroup != nil && sg.MinMember != 0:
			return "sub-group " + sg.Name + " with minMember and minSubGroup"
		}
		names[sg.Name] = true
		parent := ""
		if sg.Parent != nil {
			parent = *sg.Parent
		}
		children[parent]++
	}
	if g.Spec.MinSubGroup != nil && *g.Spec.MinSubGroup > children[""] {
		return fmt.Sprintf("minSubGroup %d above its %d top-level sub-groups", *g.Spec.MinSubGroup, children[""])
	}
	for _, sg := range g.Spec.SubGroups {
		if sg.MinSubGroup != nil && *sg.MinSubGroup > children[sg.Name] {
			return fmt.Sprintf("sub-group %s's minSubGroup %d above its %d children", sg.Name, *sg.MinSubGroup, children[sg.Name])
		}
	}
	if podSubGroup != "" && !names[podSubGroup] {
		return "the pod's sub-group " + podSubGroup + " is not among the PodGroup's"
	}
	return ""
}

// randomChain is a workload of a random kind at the top, with up to three owners of random
// kinds under it, each with fields shaken; nearest first, as Workload.Owners.
func randomChain(rng *rand.Rand) []*unstructured.Unstructured {
	kinds := testenv.Workloads("ns", "w")
	middles := []func(name string) *unstructured.Unstructured{
		func(name string) *unstructured.Unstructured {
			return workload("batch/v1", "Job", name, map[string]any{"parallelism": int64(3), "completions": int64(3)})
		},
		func(name string) *unstructured.Unstructured { return workload("apps/v1", "ReplicaSet", name, nil) },
		func(name string) *unstructured.Unstructured { return workload("apps/v1", "StatefulSet", name, nil) },
		func(name string) *unstructured.Unstructured { return workload("apps/v1", "Deployment", name, nil) },
		func(name string) *unstructured.Unstructured { return workload("v1", "Pod", name, nil) },
		func(name string) *unstructured.Unstructured { return testenv.JobSet("ns", name) },
		func(name string) *unstructured.Unstructured { return testenv.RayCluster("ns", name) },
		func(name string) *unstructured.Unstructured { return testenv.KnativeRevision("ns", name) },
	}
	top := kinds[rng.IntN(len(kinds))]
	top.SetUID(types.UID("uid-top"))
	chain := []*unstructured.Unstructured{top}
	for i := range rng.IntN(4) {
		next := middles[rng.IntN(len(middles))](fmt.Sprintf("mid-%d", i))
		controls(chain[0], next)
		chain = append([]*unstructured.Unstructured{next}, chain...)
	}
	for _, o := range chain {
		addKnownFields(rng, o)
		shake(rng, o.Object, 0)
	}
	return chain
}

// knownFields are fields the rules read that the smallest objects leave out.
var knownFields = [][]string{
	{"spec", "parallelism"}, {"spec", "completions"}, {"spec", "replicas"},
	{"spec", "elasticPolicy", "minReplicas"}, {"spec", "runPolicy", "schedulingPolicy", "minAvailable"},
	{"spec", "launcherCreationPolicy"}, {"spec", "startupPolicy", "startupPolicyOrder"}, {"spec", "startupPolicy"},
	{"spec", "leaderWorkerTemplate", "size"}, {"metadata", "annotations", "autoscaling.knative.dev/min-scale"},
	{"metadata", "annotations", podgrouper.BatchMinMemberAnnotation}, {"spec", "rayClusterSpec"},
}

func addKnownFields(rng *rand.Rand, o *unstructured.Unstructured) {
	for _, path := range knownFields {
		if rng.IntN(3) == 0 {
			value := randomValue(rng)
			if path[0] == "metadata" {
				value = randomText(rng) // annotations are strings, or the object is not one the API server returns
			}
			_ = unstructured.SetNestedField(o.Object, value, path...)
		}
	}
}

// shake replaces some leaves of a spec, and sometimes a whole map or list, with random values.
func shake(rng *rand.Rand, node map[string]any, depth int) {
	for key, value := range node {
		if depth == 0 && key != "spec" {
			continue // apiVersion, kind and metadata are the API server's to keep well-formed
		}
		switch v := value.(type) {
		case map[string]any:
			if rng.IntN(12) == 0 {
				node[key] = randomValue(rng)
			} else {
				shake(rng, v, depth+1)
			}
		case []any:
			for _, item := range v {
				if m, ok := item.(map[string]any); ok {
					shake(rng, m, depth+1)
				}
			}
			if rng.IntN(12) == 0 {
				node[key] = randomValue(rng)
			}
		default:
			if rng.IntN(4) == 0 {
				node[key] = randomValue(rng)
			}
		}
	}
}

func randomValue(rng *rand.Rand) any {
	switch rng.IntN(9) {
	case 0:
		return int64(-1)
	case 1:
		return int64(rng.IntN(6))
	case 2:
		return int64(1) << 40
	case 3:
		return 1.5
	case 4:
		return randomText(rng)
	case 5:
		return nil
	case 6:
		return map[string]any{"replicas": int64(rng.IntN(3)) - 1}
	case 7:
		return []any{map[string]any{"name": randomText(rng), "replicas": int64(2)}, "x"}
	default:
		return true
	}
}

func randomText(rng *rand.Rand) string {
	return []string{"", "0", "3", "-2", "x", "InOrder", "AnyOrder", "LeaderReady", "WaitForWorkersReady", strings.Repeat("long-", 20), "1.5"}[rng.IntN(11)]
}

func randomPodLabels(rng *rand.Rand) map[string]string {
	keys := []string{"jobset.sigs.k8s.io/replicatedjob-name", "jobset.sigs.k8s.io/job-index", "training.kubeflow.org/replica-type",
		"ray.io/node-type", "ray.io/group", "leaderworkerset.sigs.k8s.io/group-index", "leaderworkerset.sigs.k8s.io/worker-index",
		podgrouper.SparkAppLabel, scheduling.QueueLabel}
	labels := map[string]string{}
	for _, key := range keys {
		if rng.IntN(3) == 0 {
			labels[key] = randomText(rng)
		}
	}
	return labels
}

func describeChain(chain []*unstructured.Unstructured) string {
	var parts []string
	for _, o := range chain {
		parts = append(parts, fmt.Sprintf("%s %s %v", o.GetKind(), o.GetName(), o.Object["spec"]))
	}
	return strings.Join(parts, "\n  ← ")
}
