package podgrouper

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
)

var (
	rayClusterKind = schema.GroupKind{Group: "ray.io", Kind: "RayCluster"}
	rayJobKind     = schema.GroupKind{Group: "ray.io", Kind: "RayJob"}
	rayServiceKind = schema.GroupKind{Group: "ray.io", Kind: "RayService"}
)

const (
	// rayPriorityLabel names a Ray workload's priority class, as upstream reads it.
	rayPriorityLabel = "ray.io/priority-class-name"
	// KubeRay labels each pod with its node type ("head" or "worker") and its group: the
	// worker group's name, "headgroup" on the head.
	rayNodeTypeLabel = "ray.io/node-type"
	rayGroupLabel    = "ray.io/group"
	rayHeadGroup     = "headgroup"
)

func init() { register(ray, rayClusterKind, rayJobKind, rayServiceKind) }

// ray groups a Ray cluster's pods into one gang: its head and the workers every worker group
// is sure to have, so that Ray starts with the cluster it was sized for. Each group is a
// sub-group (the head's "headgroup", a worker group's by its name), so no group can be left
// short while another takes its place in the count.
//
// A RayJob's PodGroup stands for the RayJob, which may make a new cluster on a retry; a
// RayService's for each of its RayClusters, since it runs the old and the new one side by
// side during an upgrade and each must start as a gang of its own. A RayJob's submitter pod
// (Pod → Job → RayJob, no RayCluster above it) joins the RayJob's PodGroup with the gang of
// the cluster the RayJob describes, so the PodGroup is the same whichever pod comes first; a
// RayJob that runs on an existing cluster (clusterSelector) describes none, and its
// submitter is a gang of one.
func ray(w *Workload) (Gang, error) {
	gang := Gang{Object: w.Top(), MinMember: 1, DefaultPriority: TrainPriority, PriorityLabels: []string{rayPriorityLabel}}
	cluster, spec := w.Nearest(rayClusterKind), []string{"spec"}
	if cluster == nil {
		if w.Top().GroupVersionKind().GroupKind() != rayJobKind {
			return gang, nil
		}
		cluster, spec = w.Top(), []string{"spec", "rayClusterSpec"}
		if described, found, _ := unstructured.NestedFieldNoCopy(cluster.Object, spec...); !found || described == nil {
			return gang, nil
		}
	}
	if w.Top().GroupVersionKind().GroupKind() == rayServiceKind {
		gang.Object = cluster
	}
	groups, err := rayWorkerGroups(cluster, spec)
	if err != nil {
		return Gang{}, err
	}
	gang.SubGroups = []v2alpha2.SubGroup{{Name: rayHeadGroup, MinMember: 1}}
	for _, g := range groups {
		gang.MinMember += g.MinMember
		// Two worker groups of one name (or one named like the head's) label their pods
		// alike, so they are one sub-group needing both shares.
		if i := slices.IndexFunc(gang.SubGroups, func(s v2alpha2.SubGroup) bool { return s.Name == g.Name }); i >= 0 {
			gang.SubGroups[i].MinMember += g.MinMember
		} else {
			gang.SubGroups = append(gang.SubGroups, g)
		}
	}
	gang.SubGroup = raySubGroup(w.Pod, gang.SubGroups)
	return gang, nil
}

// rayWorkerGroups are the worker groups of the cluster spec at path spec of o that need pods,
// each as a sub-group needing its share: minReplicas when set above 0 (the autoscaler never
// goes below it, and may not keep more) or when the cluster autoscales
// (enableInTreeAutoscaling: the autoscaler may take the group down to minReplicas, and a gang
// of more would then be stale, evicted, and never met again), else replicas (as the CRD
// defaults them: 0), at most
// maxReplicas (the operator never makes more), times numOfHosts (pods per replica, default
// 1). A suspended group, or one of 0 replicas, has no pods (the operator deletes them), so it
// needs none and is left out: a sub-group needs at least one pod, and counting pods that are
// never made would keep the whole cluster from starting.
func rayWorkerGroups(o *unstructured.Unstructured, spec []string) ([]v2alpha2.SubGroup, error) {
	path := append(slices.Clone(spec), "workerGroupSpecs")
	field := strings.Join(path, ".")
	value, found, _ := unstructured.NestedFieldNoCopy(o.Object, path...)
	if !found || value == nil {
		return nil, nil
	}
	list, ok := value.([]any)
	if !ok {
		return nil, &FieldError{Object: o, Field: field, Problem: "is not a list of worker groups"}
	}
	autoscaled, _, _ := unstructured.NestedBool(o.Object, append(slices.Clone(spec), "enableInTreeAutoscaling")...)
	var groups []v2alpha2.SubGroup
	for i, item := range list {
		at := fmt.Sprintf("%s[%d]", field, i)
		group, ok := item.(map[string]any)
		if !ok {
			return nil, &FieldError{Object: o, Field: at, Problem: "is not a worker group"}
		}
		share, err := rayShare(o, at, &unstructured.Unstructured{Object: group}, autoscaled)
		if err != nil {
			return nil, err
		}
		if share == 0 {
			continue
		}
		name, _ := group["groupName"].(string)
		switch {
		case name == "":
			return nil, &FieldError{Object: o, Field: at + ".groupName", Problem: "is empty, but it names the group's pods' sub-group"}
		case len(name) > 63:
			return nil, &FieldError{Object: o, Field: at + ".groupName", Problem: "is longer than 63 characters, the longest a sub-group's name may be"}
		}
		groups = append(groups, v2alpha2.SubGroup{Name: name, MinMember: share})
	}
	return groups, nil
}

// rayShare is the pods one worker group (group, at path at of o) is sure to have; see
// rayWorkerGroups.
func rayShare(o *unstructured.Unstructured, at string, group *unstructured.Unstructured, autoscaled bool) (int32, error) {
	// A FieldError of the group's fields names o and the field's whole path.
	named := func(err error) error {
		var fe *FieldError
		if errors.As(err, &fe) {
			fe.Object, fe.Field = o, at+"."+fe.Field
		}
		return err
	}
	if suspended, _, _ := unstructured.NestedBool(group.Object, "suspend"); suspended {
		return 0, nil
	}
	replicas, err := countOr(group, 0, "minReplicas")
	if err != nil {
		return 0, named(err)
	}
	if replicas == 0 && !autoscaled {
		if replicas, err = countOr(group, 0, "replicas"); err != nil {
			return 0, named(err)
		}
	}
	if most, set, err := rayMaxReplicas(group); err != nil {
		return 0, named(err)
	} else if set {
		replicas = min(replicas, most)
	}
	hosts, err := countOr(group, 1, "numOfHosts")
	if err != nil {
		return 0, named(err)
	}
	if int64(replicas)*int64(hosts) > 1<<30 {
		return 0, named(&FieldError{Object: group, Field: "numOfHosts", Problem: fmt.Sprintf("is %d, too many pods for %d replicas", hosts, replicas)})
	}
	return replicas * hosts, nil
}

// rayMaxReplicas reads maxReplicas, which the CRD defaults to 2^31-1 for "no limit": beyond
// what count accepts, so it is read here. set is false when it is absent or no limit.
func rayMaxReplicas(group *unstructured.Unstructured) (most int32, set bool, err error) {
	value, found, _ := unstructured.NestedFieldNoCopy(group.Object, "maxReplicas")
	if !found || value == nil {
		return 0, false, nil
	}
	whole, isWhole := wholeNumber(value)
	if !isWhole {
		whole = -1
	}
	if whole < 0 {
		return 0, false, &FieldError{Object: group, Field: "maxReplicas", Problem: fmt.Sprintf("is %v, not a number of replicas", value)}
	}
	if whole > 1<<30 {
		return 0, false, nil
	}
	return int32(whole), true, nil
}

// raySubGroup is the sub-group of a Ray pod by KubeRay's labels; none when the pod's group
// needs no pods (suspended, or scaled to 0 when the pods were counted) or the pod is not
// labelled.
func raySubGroup(pod *v1.Pod, groups []v2alpha2.SubGroup) string {
	name := pod.Labels[rayGroupLabel]
	if pod.Labels[rayNodeTypeLabel] == "head" {
		name = rayHeadGroup
	}
	if slices.ContainsFunc(groups, func(g v2alpha2.SubGroup) bool { return g.Name == name }) {
		return name
	}
	return ""
}
