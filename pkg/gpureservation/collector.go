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
}

// Collect deletes the reservation pods older than Grace whose GPU group no pod holds (a pod
// not finished, whether running, bound or waiting with the group as a promise), and returns
// their names. It never deletes one a share still holds: a share runs only on the device its
// reservation keeps.
func (c *Collector) Collect(ctx context.Context) ([]string, error) {
	reservations := &v1.PodList{}
	if err := c.Client.List(ctx, reservations, client.InNamespace(scheduling.ReservationNamespace),
		client.MatchingLabels{scheduling.ReservationAppLabel: scheduling.ReservationApp}); err != nil {
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
		group := pod.Labels[scheduling.GPUGroupLabel]
		if len(held[group]) > 0 || pod.DeletionTimestamp != nil || c.Clock.Since(pod.CreationTimestamp.Time) < c.Grace {
			continue
		}
		// Guarded by the UID: a pod made anew under the name since the list is not this one.
		err := c.Client.Delete(ctx, pod, client.Preconditions{UID: &pod.UID})
		switch {
		case err == nil:
			deleted = append(deleted, pod.Name)
		case !apierrors.IsNotFound(err) && !apierrors.IsConflict(err):
			errs = append(errs, fmt.Errorf("deleting reservation pod %s of GPU group %s: %w", pod.Name, group, err))
		}
	}
	slices.Sort(deleted)
	return deleted, errors.Join(errs...)
}

// holders lists, per GPU group, the unfinished pods outside the reservation namespace whose
// labels name it (running, bound, or waiting with the group as a promise).
func holders(ctx context.Context, c client.Client) (map[string][]types.UID, error) {
	pods := &v1.PodList{}
	if err := c.List(ctx, pods); err != nil {
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
