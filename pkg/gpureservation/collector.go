package gpureservation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// Collector deletes the reservation pods that no share needs: the last share of their device
// left, or a bind made one and never labelled its share (it failed, or the scheduler stopped
// in the middle). A device held by such a pod is lost to every other pod until it goes.
type Collector struct {
	Client client.Client
	Clock  clock.Clock
	// Grace is how old a reservation pod without a share must be to be collected: longer
	// than a bind waits for the pod's device (DefaultTimeout), since the share is labelled
	// only once the pod reported it.
	Grace time.Duration
	// Interval is how often Start collects.
	Interval time.Duration
	// InUse reports whether a bind of this scheduler counts on a group's reservation though no
	// pod shows it yet (Reserver.InUse); nil: none does.
	InUse func(group string) bool
	// OwnsNode reports whether a node is this scheduler's (its node pool's); nil: every node.
	// Each pool's scheduler collects only its own nodes' reservations, whose binds it knows.
	OwnsNode func(node string) bool
}

// Collect deletes, on this scheduler's nodes, the reservation pods no share needs and returns
// their names: those older than Grace whose GPU group no pod holds (a pod not finished,
// whether running, bound or waiting with the group as a promise) and no bind of this
// scheduler counts on; and those that failed, whoever holds them — a failed one holds no
// device, and the next share bound there makes it anew. It never deletes a live one a share
// holds: a share runs only on the device its reservation keeps.
func (c *Collector) Collect(ctx context.Context) ([]string, error) {
	reservations := &v1.PodList{}
	if err := c.Client.List(ctx, reservations, client.InNamespace(scheduling.ReservationNamespace),
		client.MatchingLabels{scheduling.ReservationAppLabel: scheduling.ReservationApp}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing reservation pods: %w", err)
	}
	if len(reservations.Items) == 0 {
		return nil, nil
	}
	held, err := holders(ctx, c.Client)
	if err != nil {
		return nil, err
	}
	var deleted []string
	var errs []error
	for i := range reservations.Items {
		pod := &reservations.Items[i]
		if !c.collects(pod, held) {
			continue
		}
		// Guarded by the UID: a pod made anew under the name since the list is not this one.
		uid := pod.UID
		err := c.Client.Delete(ctx, pod.DeepCopy(), client.Preconditions{UID: &uid})
		switch {
		case err == nil:
			deleted = append(deleted, pod.Name)
		case !apierrors.IsNotFound(err) && !apierrors.IsConflict(err):
			errs = append(errs, fmt.Errorf("deleting reservation pod %s of GPU group %s: %w", pod.Name, pod.Labels[scheduling.GPUGroupLabel], err))
		}
	}
	slices.Sort(deleted)
	return deleted, errors.Join(errs...)
}

// collects says whether Collect deletes the reservation pod.
func (c *Collector) collects(pod *v1.Pod, held map[string][]types.UID) bool {
	group := pod.Labels[scheduling.GPUGroupLabel]
	switch {
	case pod.DeletionTimestamp != nil || (c.OwnsNode != nil && !c.OwnsNode(pod.Spec.NodeName)):
		return false
	case pod.Status.Phase == v1.PodFailed:
		return true
	}
	return len(held[group]) == 0 && (c.InUse == nil || !c.InUse(group)) && c.Clock.Since(pod.CreationTimestamp.Time) >= c.Grace
}

// holders lists, per GPU group, the unfinished pods outside the reservation namespace whose
// labels name it (running, bound, or waiting with the group as a promise).
func holders(ctx context.Context, c client.Client) (map[string][]types.UID, error) {
	pods := &v1.PodList{}
	if err := c.List(ctx, pods, client.UnsafeDisableDeepCopy); err != nil { // only read
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	held := map[string][]types.UID{}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.Namespace == scheduling.ReservationNamespace || pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
			continue
		}
		for _, group := range model.GPUGroupsOf(pod) {
			held[group] = append(held[group], pod.UID)
		}
	}
	return held, nil
}

// Start collects every Interval until ctx ends; a failed round is tried again at the next.
func (c *Collector) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("gpu-reservations")
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.Clock.After(c.Interval):
		}
		deleted, err := c.Collect(ctx)
		if len(deleted) > 0 {
			logger.Info("deleted reservation pods no GPU share holds", "pods", deleted)
		}
		if err != nil {
			logger.Error(err, "collecting reservation pods; tried again at the next round")
		}
	}
}

// NeedLeaderElection: only the leader deletes.
func (c *Collector) NeedLeaderElection() bool { return true }
