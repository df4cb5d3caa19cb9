package podgrouper

import (
	"fmt"
	"strconv"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
)

var leaderWorkerSetKind = schema.GroupKind{Group: "leaderworkerset.x-k8s.io", Kind: "LeaderWorkerSet"}

// Labels the LeaderWorkerSet controller puts on every pod of a group.
const (
	lwsGroupIndexLabel  = "leaderworkerset.sigs.k8s.io/group-index"
	lwsWorkerIndexLabel = "leaderworkerset.sigs.k8s.io/worker-index" // "0" on the leader
)

func init() { register(leaderWorkerSet, leaderWorkerSetKind) }

// lwsExclusiveTopologyAnnotation places each group alone in a topology domain; the controller
// then makes a group's workers once its leader is placed.
const lwsExclusiveTopologyAnnotation = "leaderworkerset.sigs.k8s.io/exclusive-topology"

// leaderWorkerSet groups each group of a LeaderWorkerSet (a leader and size-1 workers, which
// serve one model replica together) into a PodGroup of its own, pg-<lws>-<uid>-group-<index>:
// a group is useless unless all its pods run, while the groups come and go on their own
// (scaling, rolling updates replace one group at a time). The gang is the group's size, in
// sub-groups "leader" (1) and "workers" (size-1, none when size is 1).
//
// With startupPolicy LeaderReady the controller makes the workers only once the leader is
// ready, and with exclusive placement (the exclusive-topology annotation) only once the leader
// has a node, so a gang of the whole group would wait for pods that wait for it: the gang is
// then the leader alone, and the workers join the PodGroup as they come, each scheduled on
// its own.
//
// The default priority is train, as upstream's. A LeaderWorkerSet mostly serves (multi-host
// inference), so inference would often fit better, but a workload that names no priority
// class must not change class by moving to this scheduler; the cluster's per-kind defaults
// can say inference.
//
// A pod without a group index cannot be put in its group's PodGroup (the controller always
// labels them, so its labels were changed): it is a field problem, and the pod runs alone.
func leaderWorkerSet(w *Workload) (Gang, error) {
	lws := w.Top()
	index, err := lwsGroupIndex(w.Pod)
	if err != nil {
		return Gang{}, err
	}
	size, err := countOr(lws, 1, "spec", "leaderWorkerTemplate", "size")
	if err != nil {
		return Gang{}, err
	}
	if size < 1 {
		return Gang{}, &FieldError{Object: lws, Field: "spec.leaderWorkerTemplate.size", Problem: "is 0, but a group has at least its leader"}
	}
	gang := Gang{Object: lws, NameSuffix: fmt.Sprintf("-group-%d", index), MinMember: size, DefaultPriority: TrainPriority}
	if text(lws, "spec", "startupPolicy") == "LeaderReady" || lws.GetAnnotations()[lwsExclusiveTopologyAnnotation] != "" {
		gang.MinMember = 1
		return gang, nil
	}
	gang.SubGroups = []v2alpha2.SubGroup{{Name: "leader", MinMember: 1}}
	if size > 1 {
		gang.SubGroups = append(gang.SubGroups, v2alpha2.SubGroup{Name: "workers", MinMember: size - 1})
	}
	gang.SubGroup = "workers"
	if lwsLeader(w) {
		gang.SubGroup = "leader"
	}
	return gang, nil
}

// lwsGroupIndex is the pod's group index label, a whole number.
func lwsGroupIndex(pod *v1.Pod) (uint64, error) {
	value, ok := pod.Labels[lwsGroupIndexLabel]
	problem := "is missing, so the pod's group is unknown"
	if ok {
		index, err := strconv.ParseUint(value, 10, 32)
		if err == nil {
			return index, nil
		}
		problem = fmt.Sprintf("is %q, not a group index", value)
	}
	return 0, &FieldError{Object: podObject(pod), Field: "metadata.labels[" + lwsGroupIndexLabel + "]", Problem: problem}
}

// lwsLeader says whether the pod is its group's leader: worker index 0, or, unlabelled, a pod
// no other pod owns (a worker's StatefulSet is owned by its leader pod).
func lwsLeader(w *Workload) bool {
	if index, ok := w.Pod.Labels[lwsWorkerIndexLabel]; ok {
		return index == "0"
	}
	return w.Nearest(podKind) == nil
}
