package testenv

import (
	"context"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Kubelet plays the nodes of a test cluster, which envtest does not run: bound pods start
// running (with a start time, as a kubelet reports it) and pods being deleted go away.
type Kubelet struct {
	Client kubernetes.Interface
	// Period is how often it looks at pods.
	Period time.Duration
}

// Run acts on pods until ctx ends.
func (k *Kubelet) Run(ctx context.Context) {
	ticker := time.NewTicker(k.Period)
	defer ticker.Stop()
	for {
		k.sync(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

func (k *Kubelet) sync(ctx context.Context) {
	pods, err := k.Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		switch {
		case pod.DeletionTimestamp != nil:
			zero := int64(0)
			_ = k.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		case pod.Spec.NodeName != "" && pod.Status.Phase == v1.PodPending || pod.Spec.NodeName != "" && pod.Status.Phase == "":
			now := metav1.Now()
			pod.Status.Phase, pod.Status.StartTime = v1.PodRunning, &now
			pod.Status.Conditions = append(pod.Status.Conditions, v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: now})
			_, _ = k.Client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		}
	}
}

// CreateNode registers a node with the given GPUs, 64 CPUs and 512Gi of memory.
func CreateNode(ctx context.Context, c kubernetes.Interface, name string, gpus int64) error {
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	created, err := c.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("creating node %s: %w", name, err)
	}
	capacity := v1.ResourceList{
		v1.ResourceCPU: resource.MustParse("64"), v1.ResourceMemory: resource.MustParse("512Gi"),
		v1.ResourcePods: resource.MustParse("110"), "nvidia.com/gpu": *resource.NewQuantity(gpus, resource.DecimalSI),
	}
	created.Status.Capacity, created.Status.Allocatable = capacity, capacity
	created.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}
	updated, err := c.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("reporting node %s ready: %w", name, err)
	}
	// The API server's TaintNodesByCondition admission taints every new node not-ready; on a
	// cluster the node lifecycle controller lifts the taint once the kubelet reports Ready.
	// There is no such controller here, so the node does it for itself, or no pod without
	// the toleration could go there — the scheduler honours taints as kube-scheduler does.
	updated.Spec.Taints = slices.DeleteFunc(updated.Spec.Taints, func(t v1.Taint) bool { return t.Key == v1.TaintNodeNotReady })
	if _, err := c.CoreV1().Nodes().Update(ctx, updated, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("lifting the not-ready taint of node %s: %w", name, err)
	}
	return nil
}
