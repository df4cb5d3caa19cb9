package testenv

import (
	"context"
	"fmt"
	"k8s.io/apimachinery/pkg/util/wait"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// CreateNode registers a node with the given GPUs, 64 CPUs and 512Gi of memory. KWOK, where
// it runs, reports the node Ready and keeps its lease.
func CreateNode(ctx context.Context, c kubernetes.Interface, name string, gpus int64) error {
	node := builders.MakeNode(name).Allocatable(v1.ResourceCPU, "64").Allocatable(v1.ResourceMemory, "512Gi").MaxPods(110).GPUs(gpus).Obj()
	// The capacity comes with the node, as a kubelet registers its node (the API server keeps
	// a new node's status): KWOK may act on the node the moment it exists, and would otherwise
	// fill in its own capacity, without GPUs, and make a later status write conflict.
	node.Status.Capacity = node.Status.Allocatable
	_, err := c.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("creating node %s: %w", name, err)
	}
	// The API server's TaintNodesByCondition admission taints every new node not-ready; on a
	// cluster the node lifecycle controller lifts the taint once the kubelet reports Ready.
	// There is no such controller here (nor in KWOK), so the node does it for itself, or no
	// pod without the toleration could go there — the scheduler honours taints as
	// kube-scheduler does. KWOK writes the node's status meanwhile: on a conflict, read again.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		current.Spec.Taints = slices.DeleteFunc(current.Spec.Taints, func(t v1.Taint) bool { return t.Key == v1.TaintNodeNotReady })
		_, err = c.CoreV1().Nodes().Update(ctx, current, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("lifting the not-ready taint of node %s: %w", name, err)
	}
	return nil
}

// nodeReadyTimeout bounds WaitNodeReady: KWOK takes a node on within a second on a 2-core
// machine, even while a suite runs beside it.
const nodeReadyTimeout = 30 * time.Second

// WaitNodeReady waits until KWOK has taken the node on, which it shows by reporting it Ready:
// KWOK starts only the pods of nodes it has met, so a pod bound to a node it has not met yet
// may never start (as on a cluster whose kubelet has not registered). Callers wait, as a user
// waits for a new node to be Ready. Only for a control plane that runs KWOK; it gives up after
// nodeReadyTimeout.
func WaitNodeReady(ctx context.Context, c kubernetes.Interface, name string) error {
	ctx, cancel := context.WithTimeout(ctx, nodeReadyTimeout)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		node, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil // not there yet, or a moment's error: ask again
		}
		for _, cond := range node.Status.Conditions {
			if cond.Type == v1.NodeReady {
				return cond.Status == v1.ConditionTrue, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("node %s never became Ready (is KWOK running?): %w", name, err)
	}
	return nil
}
