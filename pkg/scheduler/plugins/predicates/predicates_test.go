package predicates

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

func TestScorePrefersMatchingAffinityAndAvoidsPreferNoSchedule(t *testing.T) {
	spec := v1.PodSpec{Affinity: &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{
		{Weight: 10, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"a"}}}}},
	}}}}
	placement, err := model.NewPlacement(&spec)
	if err != nil {
		t.Fatal(err)
	}
	pod := &model.PodInfo{Placement: placement}
	zoneA := &model.NodeInfo{Name: "a", Labels: map[string]string{"zone": "a"}}
	zoneB := &model.NodeInfo{Name: "b", Labels: map[string]string{"zone": "b"}}
	spotA := &model.NodeInfo{Name: "spot-a", Labels: map[string]string{"zone": "a"},
		Taints: []v1.Taint{{Key: "spot", Effect: v1.TaintEffectPreferNoSchedule}}}
	a, b, spot := Score(pod, zoneA), Score(pod, zoneB), Score(pod, spotA)
	if !(a > b) || !(spot < b) {
		t.Fatalf("scores a=%v b=%v spot-a=%v: want the preferred zone first and the spot node last", a, b, spot)
	}
	// Preferences outweigh packing: nodeplacement scores at most 11.
	if a-b <= 11 {
		t.Fatalf("a matched preference adds %v, no more than packing can", a-b)
	}
	if got := Score(&model.PodInfo{}, zoneA); got != 0 {
		t.Fatalf("a pod without preferences on a node without taints scores %v", got)
	}
}
