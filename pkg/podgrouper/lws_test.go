package podgrouper_test

import (
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
)

// lwsGroup is the group of that index of a LeaderWorkerSet as its controller makes it: the
// leader pod of the leader StatefulSet, and a worker of the worker StatefulSet the leader pod
// owns. labels, when not nil, gives a pod's labels by worker index instead of the
// controller's; owners are all the objects above the two pods.
func lwsGroup(lws *unstructured.Unstructured, index int, labels func(worker int) map[string]string) (leader, worker *v1.Pod, owners []*unstructured.Unstructured) {
	if labels == nil {
		labels = func(worker int) map[string]string {
			return map[string]string{"leaderworkerset.sigs.k8s.io/group-index": strconv.Itoa(index),
				"leaderworkerset.sigs.k8s.io/worker-index": strconv.Itoa(worker)}
		}
	}
	leaderSet := workload("apps/v1", "StatefulSet", lws.GetName(), nil)
	controls(lws, leaderSet)
	leaderName := lws.GetName() + "-" + strconv.Itoa(index)
	leader = podOf(leaderName, labels(0), leaderSet)
	leaderObject := workload("v1", "Pod", leaderName, nil)
	leaderObject.SetLabels(leader.Labels)
	controls(leaderSet, leaderObject)
	workerSet := workload("apps/v1", "StatefulSet", leaderName, nil)
	controls(leaderObject, workerSet)
	worker = podOf(leaderName+"-1", labels(1), workerSet)
	return leader, worker, []*unstructured.Unstructured{lws, leaderSet, leaderObject, workerSet}
}

func lwsObject(name string, spec map[string]any) *unstructured.Unstructured {
	return workload("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", name, spec)
}

// Each group of a LeaderWorkerSet is a PodGroup of its own, pg-<lws>-<uid>-group-<index>, of
// the group's size in sub-groups leader and workers; with startupPolicy LeaderReady, or
// exclusive placement, the gang is the leader alone, since the workers come only after it.
func TestLeaderWorkerSetGang(t *testing.T) {
	size := func(n int64, policy string) map[string]any {
		return map[string]any{"replicas": int64(3), "startupPolicy": policy, "leaderWorkerTemplate": map[string]any{"size": n}}
	}
	shape := []v2alpha2.SubGroup{{Name: "leader", MinMember: 1}, {Name: "workers", MinMember: 3}}
	leader, worker, owners := lwsGroup(lwsObject("llm", size(4, "LeaderCreated")), 2, nil)
	soloLeader, _, soloOwners := lwsGroup(lwsObject("solo", map[string]any{"leaderWorkerTemplate": map[string]any{}}), 0, nil)
	readyLeader, readyWorker, readyOwners := lwsGroup(lwsObject("ready", size(4, "LeaderReady")), 1, nil)
	exclusive := lwsObject("excl", size(4, "LeaderCreated"))
	exclusive.SetAnnotations(map[string]string{"leaderworkerset.sigs.k8s.io/exclusive-topology": "cloud.google.com/gke-nodepool"})
	exclusiveLeader, _, exclusiveOwners := lwsGroup(exclusive, 0, nil)
	byChain := func(int) map[string]string {
		return map[string]string{"leaderworkerset.sigs.k8s.io/group-index": "5"}
	}
	chainLeader, chainWorker, chainOwners := lwsGroup(lwsObject("chain", size(2, "")), 5, byChain)
	unindexed, _, unindexedOwners := lwsGroup(lwsObject("noindex", size(2, "")), 0, func(int) map[string]string { return nil })
	badIndex, _, badIndexOwners := lwsGroup(lwsObject("badindex", size(2, "")), 0, func(int) map[string]string {
		return map[string]string{"leaderworkerset.sigs.k8s.io/group-index": "one", "leaderworkerset.sigs.k8s.io/worker-index": "0"}
	})
	_, zeroWorker, zeroOwners := lwsGroup(lwsObject("zero", size(0, "")), 0, nil)
	_, textWorker, textOwners := lwsGroup(lwsObject("text", map[string]any{"leaderWorkerTemplate": map[string]any{"size": "four"}}), 0, nil)

	checkKindCases(t, []kindCase{
		{name: "the leader", pod: leader, objects: owners,
			group: "pg-llm-uid-llm-group-2", minMember: 4, subGroups: shape, subGroup: "leader", priority: "train"},
		{name: "a worker, through the leader pod that owns its StatefulSet", pod: worker, objects: owners,
			group: "pg-llm-uid-llm-group-2", minMember: 4, subGroups: shape, subGroup: "workers", priority: "train"},
		{name: "size defaults to 1: a leader and no workers", pod: soloLeader, objects: soloOwners,
			group: "pg-solo-uid-solo-group-0", minMember: 1, subGroups: []v2alpha2.SubGroup{{Name: "leader", MinMember: 1}}, subGroup: "leader", priority: "train"},
		{name: "LeaderReady: the leader alone", pod: readyLeader, objects: readyOwners,
			group: "pg-ready-uid-ready-group-1", minMember: 1, priority: "train"},
		{name: "LeaderReady: a worker joins it", pod: readyWorker, objects: readyOwners,
			group: "pg-ready-uid-ready-group-1", minMember: 1, priority: "train"},
		{name: "exclusive placement: the leader alone, whose node the workers wait for", pod: exclusiveLeader, objects: exclusiveOwners,
			group: "pg-excl-uid-excl-group-0", minMember: 1, priority: "train"},
		{name: "without a worker index, a leader by its chain", pod: chainLeader, objects: chainOwners,
			group: "pg-chain-uid-chain-group-5", minMember: 2, subGroups: []v2alpha2.SubGroup{{Name: "leader", MinMember: 1}, {Name: "workers", MinMember: 1}},
			subGroup: "leader", priority: "train"},
		{name: "without a worker index, a worker by its chain", pod: chainWorker, objects: chainOwners,
			group: "pg-chain-uid-chain-group-5", minMember: 2, subGroups: []v2alpha2.SubGroup{{Name: "leader", MinMember: 1}, {Name: "workers", MinMember: 1}},
			subGroup: "workers", priority: "train"},
		kindAlone(kindCase{name: "a pod without a group index", pod: unindexed, objects: unindexedOwners},
			"metadata.labels[leaderworkerset.sigs.k8s.io/group-index] is missing"),
		kindAlone(kindCase{name: "a group index that is no number", pod: badIndex, objects: badIndexOwners},
			"metadata.labels[leaderworkerset.sigs.k8s.io/group-index] is \"one\""),
		kindAlone(kindCase{name: "a size of 0", pod: zeroWorker, objects: zeroOwners}, "spec.leaderWorkerTemplate.size is 0"),
		kindAlone(kindCase{name: "a size that is no number", pod: textWorker, objects: textOwners}, "spec.leaderWorkerTemplate.size"),
	})
}
