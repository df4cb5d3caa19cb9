package property

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// Where pods may go. The scenario model keeps nodes and jobs in its own terms; Object and
// PodObject turn them into the Kubernetes objects that ScenarioYAML renders and the oracle
// judges with, so the manifests and the judgement read one description. The rules themselves
// (refusal) are Kubernetes' published helpers, the reference kube-scheduler uses, never the
// scheduler's code.

// Resource names and labels the scenarios use.
const (
	gpuResource  v1.ResourceName = "nvidia.com/gpu"
	fpgaResource v1.ResourceName = "example.com/fpga"
	zoneLabel                    = "zone"
	dedicatedKey                 = "dedicated"
)

// placementZones and dedicatedValues are the zone labels and dedicated=<value> taints drawn;
// few, so that jobs and nodes often meet.
var (
	placementZones  = []string{"a", "b", "c"}
	dedicatedValues = []string{"infer", "batch"}
	taintEffects    = []v1.TaintEffect{v1.TaintEffectNoSchedule, v1.TaintEffectNoExecute}
)

// Object is the node as kai-sim reads it.
func (n *Node) Object() *v1.Node {
	maxPods := n.MaxPods
	if maxPods == 0 {
		maxPods = input.DefaultMaxPods
	}
	node := builders.MakeNode(n.Name).Allocatable(v1.ResourceCPU, "64").Allocatable(v1.ResourceMemory, "512Gi").
		GPUs(int64(n.GPUs)).MaxPods(int64(maxPods))
	for _, t := range n.Taints {
		node.Taint(t)
	}
	if n.FPGAs > 0 {
		node.Allocatable(fpgaResource, strconv.Itoa(n.FPGAs))
	}
	if n.Zone != "" {
		node.Label(zoneLabel, n.Zone)
	}
	if n.GPUMemory != "" {
		node.Label(gpuMemoryLabel, n.GPUMemory)
	}
	for _, label := range slices.Sorted(maps.Keys(n.TopologyLabels)) {
		node.Label(label, n.TopologyLabels[label])
	}
	return node.Obj()
}

// PodObject is pod p of the job as kai-sim reads it: every pod of a job asks the same, whole
// GPUs or, by annotations, a share of a GPU (then no nvidia.com/gpu).
func (j *Job) PodObject(p Pod) *v1.Pod {
	pod := builders.MakePod("default", p.Name).PodGroup(j.Name).Image("w").TerminationGracePeriod(int64(p.Grace)).
		Request(v1.ResourceCPU, "1").Request(v1.ResourceMemory, "1Gi")
	if j.Share == nil {
		pod.Request(gpuResource, strconv.Itoa(j.GPUs))
	} else {
		for key, value := range j.Share.annotations() {
			pod.Annotation(key, value)
		}
	}
	for _, t := range j.Tolerations {
		pod.Toleration(t)
	}
	if j.FPGAs > 0 {
		pod.Request(fpgaResource, strconv.Itoa(j.FPGAs))
	}
	if p.SubGroup != "" {
		pod.Label("kai.scheduler/subgroup-name", p.SubGroup)
	}
	if j.DelayAs == delayPodAnnotation {
		pod.Annotation(delayAnnotation, j.PreemptionDelay.String())
	}
	if p.FailAfter > 0 {
		pod.Annotation(input.FailAfterAnnotation, p.FailAfter.String())
	}
	switch {
	case len(j.Zones) == 0:
	case j.ZoneBySelector:
		pod.NodeSelector(zoneLabel, j.Zones[0])
	default:
		pod.RequiredNodeAffinityIn(zoneLabel, j.Zones...)
	}
	return pod.Obj()
}

// refusal says why kube-scheduler's rules keep pod off node regardless of what else runs
// there — a NoSchedule or NoExecute taint it does not tolerate, or a node selector or
// required node affinity the node does not match — or "" when they let it go there.
func refusal(pod *v1.Pod, node *v1.Node) string {
	blocking := func(t *v1.Taint) bool {
		return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
	}
	if taint, found := corev1helpers.FindMatchingUntoleratedTaint(logr.Discard(), node.Spec.Taints, pod.Spec.Tolerations, blocking, true); found {
		tolerations := "none"
		if len(pod.Spec.Tolerations) > 0 {
			tolerations = flow(pod.Spec.Tolerations)
		}
		return fmt.Sprintf("untolerated taint %s (the pod's tolerations: %s)", taint.ToString(), tolerations)
	}
	if match, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); err != nil || !match {
		var asked []string
		if len(pod.Spec.NodeSelector) > 0 {
			asked = append(asked, "node selector "+flow(pod.Spec.NodeSelector))
		}
		if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			asked = append(asked, "required node affinity "+flow(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution))
		}
		why := fmt.Sprintf("node labels %s do not match the pod's %s", flow(node.Labels), strings.Join(asked, " and "))
		if err != nil {
			why += ": " + err.Error()
		}
		return why
	}
	return ""
}

// podRequests is what a pod takes from its node, summed as kube-scheduler sums it.
func podRequests(pod *v1.Pod) v1.ResourceList {
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
}

// podsFit is how many copies of pod the empty node holds by resources and pod count, taints
// and affinity aside.
func podsFit(node *v1.Node, pod *v1.Pod) int {
	allocatable := node.Status.Allocatable
	n := allocatable.Pods().Value()
	for name, q := range podRequests(pod) {
		if q.IsZero() {
			continue // a resource not asked for always fits
		}
		have := allocatable[name]
		n = min(n, have.MilliValue()/q.MilliValue())
	}
	return int(n)
}

// dedicatedTaint draws a dedicated=<value> taint that keeps pods off unless tolerated.
func dedicatedTaint(r *rand.Rand) v1.Taint {
	return v1.Taint{Key: dedicatedKey, Value: dedicatedValues[r.IntN(len(dedicatedValues))], Effect: taintEffects[r.IntN(len(taintEffects))]}
}

// tolerationOf draws one of the ways to tolerate taint: any value of its key, its value with
// any effect, or its value and effect exactly. Each also tolerates some other taints, and the
// exact one not the same value with the other effect, so the scheduler's reading of each
// form is exercised.
func tolerationOf(r *rand.Rand, taint v1.Taint) v1.Toleration {
	switch r.IntN(3) {
	case 0:
		return v1.Toleration{Key: taint.Key, Operator: v1.TolerationOpExists}
	case 1:
		return v1.Toleration{Key: taint.Key, Operator: v1.TolerationOpEqual, Value: taint.Value}
	default:
		return v1.Toleration{Key: taint.Key, Operator: v1.TolerationOpEqual, Value: taint.Value, Effect: taint.Effect}
	}
}
