package placement

import (
	"errors"

	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// The reasons kube-scheduler's filters give for refusing a node, word for word.
var (
	ErrNodeUnschedulable = errors.New("node(s) were unschedulable")
	ErrNodeAffinity      = errors.New("node(s) didn't match Pod's node affinity/selector")
	ErrHostPorts         = errors.New("node(s) didn't have free ports for the requested pod ports")
)

// UntoleratedTaint is kube-scheduler's refusal of a node for a NoSchedule or NoExecute taint
// the pod does not tolerate. It holds only the taint, the node's own, so that refusing costs
// no allocation (an error of one pointer is stored in the interface as is); its words are
// formatted when read, which the node search does once per node and kind of pod.
type UntoleratedTaint struct{ Taint *v1.Taint }

func (e UntoleratedTaint) Error() string {
	// kube-scheduler's words, so that reasons count alike across nodes.
	return "node(s) had untolerated taint {" + e.Taint.Key + ": " + e.Taint.Value + "}"
}

// TooManyPods is kube-scheduler's reason for a node whose "pods" allocatable is used up.
const TooManyPods = "Too many pods"

// InsufficientReason is kube-scheduler's reason for a node that lacks a resource. It runs
// for every refused node of every search, so the fixed resources' reasons are built once;
// only an extended resource's reason is built when needed.
func InsufficientReason(name v1.ResourceName) string {
	for i, r := range model.FixedResources {
		if r.KubeName() == name {
			return insufficientFixed[i]
		}
	}
	return "Insufficient " + string(name)
}

var insufficientFixed = func() (reasons [len(model.FixedResources)]string) {
	for i, r := range model.FixedResources {
		reasons[i] = "Insufficient " + string(r.KubeName())
		if r == model.Pods {
			reasons[i] = TooManyPods
		}
	}
	return reasons
}()

// unschedulableTaint is the taint kube-scheduler's NodeUnschedulable filter asks a pod to
// tolerate before it goes onto a cordoned node (DaemonSet pods do).
var unschedulableTaint = v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}

// Refusal says why kube-scheduler's filters would refuse the pod on the node, in their
// words, or nil: the node is cordoned, a NoSchedule or NoExecute taint is not tolerated, the
// node selector or required node affinity does not match, a host port is taken. Resources
// are checked apart, against what the caller counts as free. It runs for every pod on every
// node, so it allocates nothing, whatever it answers.
func Refusal(pod *model.PodInfo, node *model.NodeInfo) error {
	pl := pod.Placement
	var tolerations []v1.Toleration
	if pl != nil {
		tolerations = pl.Tolerations
	}
	if node.Unschedulable && !tolerates(tolerations, &unschedulableTaint) {
		return ErrNodeUnschedulable
	}
	for i := range node.Taints {
		t := &node.Taints[i]
		if (t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute) && !tolerates(tolerations, t) {
			return UntoleratedTaint{t}
		}
	}
	if pl == nil {
		return nil
	}
	if err := pl.Invalid(); err != nil {
		return err
	}
	if ok, err := pl.Required().Match(node.Object()); err != nil {
		return err
	} else if !ok {
		return ErrNodeAffinity
	}
	if len(pl.HostPorts) > 0 && portTaken(pod, node) {
		return ErrHostPorts
	}
	return nil
}

// tolerates asks the Kubernetes helper; comparison operators (Gt, Lt) are honoured, since
// the API server only stores them where its feature gate allows them.
func tolerates(tolerations []v1.Toleration, taint *v1.Taint) bool {
	return corev1helpers.TolerationsTolerateTaint(klog.Background(), tolerations, taint, true)
}

// Preference scores what the pod prefers of the node, as kube-scheduler's NodeAffinity and
// TaintToleration scores do: the share of its preferred node-affinity weight that the node
// matches (0 to 1), and how many PreferNoSchedule taints of the node it does not tolerate.
func Preference(pod *model.PodInfo, node *model.NodeInfo) (affinity float64, untolerated int) {
	pl := pod.Placement
	var tolerations []v1.Toleration
	if pl != nil {
		tolerations = pl.Tolerations
		if preferred, weight := pl.Preferred(); preferred != nil && weight > 0 {
			affinity = float64(preferred.Score(node.Object())) / float64(weight)
		}
	}
	for i := range node.Taints {
		if t := &node.Taints[i]; t.Effect == v1.TaintEffectPreferNoSchedule && !tolerates(tolerations, t) {
			untolerated++
		}
	}
	return affinity, untolerated
}

// portTaken reports whether a port of the pod is bound by another pod holding the node: a
// pod of another scheduler, or one of ours that runs, was placed, is promised the node or is
// still terminating. The pod itself may already be there, promised the node.
func portTaken(pod *model.PodInfo, node *model.NodeInfo) bool {
	ports := pod.Placement.HostPorts
	if PortsConflict(ports, node.OtherPorts) {
		return true
	}
	for _, q := range node.Pods {
		if q != pod && q.Placement != nil && (q.Status.HoldsNodeResources() || q.Status == model.Pipelined) &&
			PortsConflict(ports, q.Placement.HostPorts) {
			return true
		}
	}
	return false
}

// PortsConflict reports whether two sets of host ports cannot be bound on one node: two
// pods cannot bind the same protocol and port on overlapping addresses (model.AnyIP overlaps
// every address).
func PortsConflict(a, b []model.HostPort) bool {
	for _, p := range a {
		for _, o := range b {
			if p.Port == o.Port && p.Protocol == o.Protocol && (p.IP == o.IP || p.IP == model.AnyIP || o.IP == model.AnyIP) {
				return true
			}
		}
	}
	return false
}

// The reasons a node refuses a pod's GPU shares (kube-scheduler has none: it does not know
// devices), worded as its reasons are, so that they count alike across nodes.
const (
	noDeviceForShare = "node(s) had no GPU device with room for the share"
	devicesTooSmall  = "node(s) had GPU devices with less memory than the share asks"
	gpuMemoryUnknown = "node(s) had no nvidia.com/gpu.memory label to measure a share asked in memory"
)

// ShareRefusal is why the node cannot take a share pod's shares out of free (the node's
// capacity for the pod) — withReleasing counting what releasing shares hold as room — or ""
// when it can.
func ShareRefusal(pod *model.PodInfo, node *model.NodeInfo, free model.Resources, withReleasing bool) string {
	if _, ok := node.SharePortion(pod.Share); !ok {
		if node.GPUMemoryMiB == 0 {
			return gpuMemoryUnknown
		}
		return devicesTooSmall
	}
	if !node.ShareFits(pod, free, withReleasing) {
		return noDeviceForShare
	}
	return ""
}
