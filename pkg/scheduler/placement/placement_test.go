package placement

import (
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

func placed(t *testing.T, spec v1.PodSpec) *model.PodInfo {
	t.Helper()
	pl, err := model.NewPlacement(&spec)
	if err != nil {
		t.Fatal(err)
	}
	return &model.PodInfo{Namespace: "ns", Name: "p", Job: "ns/j", Placement: pl}
}

func TestRefusalFollowsTaintsAndTolerations(t *testing.T) {
	inference := &model.NodeInfo{Name: "n1", Taints: []v1.Taint{{Key: "dedicated", Value: "inference", Effect: v1.TaintEffectNoSchedule}}}
	draining := &model.NodeInfo{Name: "n2", Taints: []v1.Taint{{Key: "maintenance", Effect: v1.TaintEffectNoExecute}}}
	preferAvoid := &model.NodeInfo{Name: "n3", Taints: []v1.Taint{{Key: "spot", Value: "true", Effect: v1.TaintEffectPreferNoSchedule}}}
	plain := &model.PodInfo{Name: "plain"}

	err := Refusal(plain, inference)
	if err == nil || err.Error() != "node(s) had untolerated taint {dedicated: inference}" {
		t.Fatalf("untolerated NoSchedule taint: %v", err)
	}
	if Refusal(plain, draining) == nil {
		t.Fatal("untolerated NoExecute taint accepted")
	}
	if err := Refusal(plain, preferAvoid); err != nil {
		t.Fatalf("PreferNoSchedule is a preference, not a filter: %v", err)
	}
	tolerating := placed(t, v1.PodSpec{Tolerations: []v1.Toleration{
		{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "inference", Effect: v1.TaintEffectNoSchedule},
		{Key: "maintenance", Operator: v1.TolerationOpExists},
	}})
	for _, n := range []*model.NodeInfo{inference, draining, preferAvoid} {
		if err := Refusal(tolerating, n); err != nil {
			t.Errorf("tolerating pod refused on %s: %v", n.Name, err)
		}
	}
	wrongValue := placed(t, v1.PodSpec{Tolerations: []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "training"}}})
	if Refusal(wrongValue, inference) == nil {
		t.Fatal("a toleration for another value accepted")
	}
}

func TestRefusalOfCordonedNodes(t *testing.T) {
	cordoned := &model.NodeInfo{Name: "n1", Unschedulable: true}
	if err := Refusal(&model.PodInfo{}, cordoned); !errors.Is(err, ErrNodeUnschedulable) {
		t.Fatalf("cordoned node: %v", err)
	}
	daemon := placed(t, v1.PodSpec{Tolerations: []v1.Toleration{{Key: v1.TaintNodeUnschedulable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}})
	if err := Refusal(daemon, cordoned); err != nil {
		t.Fatalf("a pod tolerating the unschedulable taint is refused, as kube-scheduler would not: %v", err)
	}
}

func TestRefusalFollowsNodeAffinityAndSelector(t *testing.T) {
	h100 := &model.NodeInfo{Name: "gpu-7", Labels: map[string]string{"gpu": "h100", "zone": "a"}}
	a100 := &model.NodeInfo{Name: "gpu-8", Labels: map[string]string{"gpu": "a100", "zone": "a"}}
	affinity := func(term v1.NodeSelectorTerm) *v1.Affinity {
		return &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{term}}}}
	}
	for _, tc := range []struct {
		name     string
		spec     v1.PodSpec
		onH, onA bool
	}{
		{"selector", v1.PodSpec{NodeSelector: map[string]string{"gpu": "h100"}}, true, false},
		{"matchExpressions In", v1.PodSpec{Affinity: affinity(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{
			{Key: "gpu", Operator: v1.NodeSelectorOpIn, Values: []string{"a100", "b200"}}}})}, false, true},
		{"matchExpressions NotIn", v1.PodSpec{Affinity: affinity(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{
			{Key: "gpu", Operator: v1.NodeSelectorOpNotIn, Values: []string{"a100"}}}})}, true, false},
		{"matchFields by name", v1.PodSpec{Affinity: affinity(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"gpu-8"}}}})}, false, true},
		{"selector and affinity both", v1.PodSpec{NodeSelector: map[string]string{"zone": "a"}, Affinity: affinity(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{
			{Key: "gpu", Operator: v1.NodeSelectorOpExists}}})}, true, true},
	} {
		pod := placed(t, tc.spec)
		if got := Refusal(pod, h100) == nil; got != tc.onH {
			t.Errorf("%s: on h100 node allowed=%v, want %v", tc.name, got, tc.onH)
		}
		err := Refusal(pod, a100)
		if got := err == nil; got != tc.onA {
			t.Errorf("%s: on a100 node allowed=%v, want %v", tc.name, got, tc.onA)
		}
		if err != nil && !errors.Is(err, ErrNodeAffinity) {
			t.Errorf("%s: reason %v, want kube-scheduler's", tc.name, err)
		}
	}
}

func TestInvalidAffinityMatchesNoNodeAndSaysWhy(t *testing.T) {
	spec := v1.PodSpec{Affinity: &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "gpu", Operator: "Near"}}}}}}}}
	pl, err := model.NewPlacement(&spec)
	if err == nil || pl == nil {
		t.Fatalf("an unparsable affinity gave no error (%v) or no placement", err)
	}
	if got := Refusal(&model.PodInfo{Placement: pl}, &model.NodeInfo{Name: "n"}); got == nil {
		t.Fatal("a node accepted a pod whose affinity cannot be read")
	}
}

func TestHostPortsConflict(t *testing.T) {
	node := &model.NodeInfo{Name: "n1", OtherPorts: []model.HostPort{{Protocol: v1.ProtocolTCP, IP: "0.0.0.0", Port: 8080}}}
	port := func(p int32, proto v1.Protocol) v1.PodSpec {
		return v1.PodSpec{Containers: []v1.Container{{Ports: []v1.ContainerPort{{ContainerPort: 80, HostPort: p, Protocol: proto}}}}}
	}
	if err := Refusal(placed(t, port(8080, "")), node); !errors.Is(err, ErrHostPorts) {
		t.Fatalf("a taken TCP port: %v", err)
	}
	if err := Refusal(placed(t, port(8080, v1.ProtocolUDP)), node); err != nil {
		t.Fatalf("UDP 8080 is free: %v", err)
	}
	ours := placed(t, port(9090, ""))
	ours.Status, ours.NodeName = model.Running, "n1"
	node.Pods = append(node.Pods, ours)
	if err := Refusal(placed(t, port(9090, "")), node); !errors.Is(err, ErrHostPorts) {
		t.Fatalf("a port our own running pod binds: %v", err)
	}
	ours.Status = model.Succeeded
	if err := Refusal(placed(t, port(9090, "")), node); err != nil {
		t.Fatalf("a finished pod's port is free: %v", err)
	}
}

func TestPreferenceScoresAffinityAndPreferNoSchedule(t *testing.T) {
	spot := &model.NodeInfo{Name: "n1", Labels: map[string]string{"zone": "a"}, Taints: []v1.Taint{{Key: "spot", Effect: v1.TaintEffectPreferNoSchedule}}}
	pod := placed(t, v1.PodSpec{Affinity: &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{
		{Weight: 30, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"a"}}}}},
		{Weight: 70, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"b"}}}}},
	}}}})
	affinity, untolerated := Preference(pod, spot)
	if affinity != 0.3 || untolerated != 1 {
		t.Fatalf("affinity %v untolerated %d, want 0.3 and 1", affinity, untolerated)
	}
}

// Refusal runs for every pod on every node: neither a match nor a refusal may allocate.
func TestRefusalAllocatesNothing(t *testing.T) {
	node := &model.NodeInfo{Name: "n1", Labels: map[string]string{"gpu": "h100"},
		Taints: []v1.Taint{{Key: "dedicated", Value: "inference", Effect: v1.TaintEffectNoSchedule}}}
	tolerating := placed(t, v1.PodSpec{NodeSelector: map[string]string{"gpu": "h100"},
		Tolerations: []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpExists}}})
	plain := &model.PodInfo{}
	wrongLabel := placed(t, v1.PodSpec{NodeSelector: map[string]string{"gpu": "a100"},
		Tolerations: []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpExists}}})
	for name, pod := range map[string]*model.PodInfo{"match": tolerating, "taint": plain, "selector": wrongLabel} {
		if allocs := testing.AllocsPerRun(100, func() { _ = Refusal(pod, node) }); allocs != 0 {
			t.Errorf("%s: %v allocations per check, want 0", name, allocs)
		}
	}
}

// The reasons of the fixed resources are kube-scheduler's words and cost nothing to give.
func TestInsufficientReasons(t *testing.T) {
	for name, want := range map[v1.ResourceName]string{v1.ResourceCPU: "Insufficient cpu", model.GPUResourceName: "Insufficient nvidia.com/gpu",
		v1.ResourcePods: "Too many pods", "example.com/fpga": "Insufficient example.com/fpga"} {
		if got := InsufficientReason(name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = InsufficientReason(model.GPUResourceName) }); allocs != 0 {
		t.Fatalf("%v allocations for a fixed resource's reason", allocs)
	}
}
