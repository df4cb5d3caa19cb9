package gpureservation

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
)

// DefaultTimeout is how long a bind waits for a fresh reservation pod to report its device,
// as upstream waits: the pod must be started by the kubelet and its program run NVML.
const DefaultTimeout = 40 * time.Second

// Reserver makes and reads the reservation pods of shared devices for the binder.
type Reserver struct {
	Client client.Client
	// Clock times the wait for a device's UUID: the scheduler's.
	Clock clock.Clock
	// Image is the reservation program's image; ServiceAccount the account it runs as, which
	// may patch its own pod; RuntimeClass the pod's runtime class ("" for none), which must
	// be one under which the device plugin's devices are visible (NVIDIA's: "nvidia").
	Image, ServiceAccount, RuntimeClass string
	// CDI names the devices in the share pods' ConfigMaps by CDI name instead of UUID.
	CDI bool
	// Timeout bounds the wait for the UUID (DefaultTimeout when zero); Poll is how often the
	// pod is read meanwhile (a second when zero).
	Timeout, Poll time.Duration

	// uses are the binds counting on each group's reservation (see InUse).
	uses uses
}

// labelLag bounds how long after a bind the informers may still not show its share's label:
// for that long the bind's reservation counts as in use (InUse).
const labelLag = 10 * time.Second

// InUse reports whether a bind of this scheduler counts on group's reservation pod, or did
// within labelLag: the collector must not take it, though no pod it reads holds the group.
func (r *Reserver) InUse(group string) bool {
	return r.uses.recent(group, r.Clock.Now(), labelLag)
}

// Reserve makes sure group has its reservation pod on node and returns the UUID of the
// device the pod holds, waiting for a fresh pod to report it. created says whether this call
// made the pod, for the caller to take it back if the bind fails. A pod that failed, is going
// away, or reports nothing within the timeout fails the reservation (a pod this call made is
// then deleted): the bind fails and the share is placed again in a later cycle.
func (r *Reserver) Reserve(ctx context.Context, node, group string, tolerations []v1.Toleration) (uuid string, created bool, err error) {
	key := client.ObjectKey{Namespace: scheduling.ReservationNamespace, Name: PodName(node, group)}
	pod := &v1.Pod{}
	switch err := r.Client.Get(ctx, key, pod); {
	case apierrors.IsNotFound(err):
		fresh := r.Pod(node, group, tolerations)
		switch err := r.Client.Create(ctx, fresh); {
		case err == nil:
			created = true
		case !apierrors.IsAlreadyExists(err): // made meanwhile by another bind: wait for it too
			return "", false, fmt.Errorf("creating reservation pod %s for GPU group %s: %w", key, group, err)
		}
	case err != nil:
		return "", false, fmt.Errorf("reading reservation pod %s of GPU group %s: %w", key, group, err)
	}
	uuid, err = r.awaitDevice(ctx, key, node, group)
	// Another bind of the device may be reading the pod's UUID just as this one gives up.
	if err != nil && created && !r.uses.others(group) {
		if undo := r.deletePod(ctx, key); undo != nil {
			err = errors.Join(err, fmt.Errorf("deleting it again: %w", undo))
		}
	}
	return uuid, created, err
}

// awaitDevice reads the reservation pod until it reports its device's UUID.
func (r *Reserver) awaitDevice(ctx context.Context, key client.ObjectKey, node, group string) (string, error) {
	timeout, poll := r.Timeout, r.Poll
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if poll <= 0 {
		poll = time.Second
	}
	deadline := r.Clock.After(timeout)
	for {
		pod := &v1.Pod{}
		err := r.Client.Get(ctx, key, pod)
		switch {
		case apierrors.IsNotFound(err):
			// Not in the cache yet, or deleted meanwhile: keep reading until the deadline.
		case err != nil:
			return "", fmt.Errorf("reading reservation pod %s of GPU group %s: %w", key, group, err)
		case pod.Spec.NodeName != node:
			return "", fmt.Errorf("reservation pod %s of GPU group %s is on node %s, not %s", key, group, pod.Spec.NodeName, node)
		case pod.DeletionTimestamp != nil:
			return "", fmt.Errorf("reservation pod %s of GPU group %s is being deleted", key, group)
		case pod.Status.Phase == v1.PodFailed:
			return "", fmt.Errorf("reservation pod %s of GPU group %s failed: %s %s", key, group, pod.Status.Reason, pod.Status.Message)
		case stuck(pod) != "":
			// It will not start by itself: waiting out the timeout would only hold a worker.
			return "", fmt.Errorf("reservation pod %s of GPU group %s cannot start: %s", key, group, stuck(pod))
		case pod.Annotations[scheduling.ReservedGPUAnnotation] != "":
			return pod.Annotations[scheduling.ReservedGPUAnnotation], nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-deadline:
			return "", fmt.Errorf("reservation pod %s of GPU group %s did not report its device (annotation %s) within %s",
				key, group, scheduling.ReservedGPUAnnotation, timeout)
		case <-r.Clock.After(poll):
		}
	}
}

// stuckReasons are the reasons a container waits for which it does not start without someone
// changing something: a wrong image, a program that keeps failing, a runtime that refuses it.
var stuckReasons = map[string]bool{"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true,
	"CrashLoopBackOff": true, "CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true}

// stuck is why the reservation pod's container cannot start, "" when nothing says so.
func stuck(pod *v1.Pod) string {
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && stuckReasons[w.Reason] {
			return strings.TrimSpace(w.Reason + " " + w.Message)
		}
	}
	return ""
}

// Release deletes the reservation pod of group on node, as a failed bind's undo does when it
// made the pod and no other share holds the group.
func (r *Reserver) Release(ctx context.Context, node, group string) error {
	return r.deletePod(ctx, client.ObjectKey{Namespace: scheduling.ReservationNamespace, Name: PodName(node, group)})
}

func (r *Reserver) deletePod(ctx context.Context, key client.ObjectKey) error {
	pod := &v1.Pod{}
	pod.Namespace, pod.Name = key.Namespace, key.Name
	if err := r.Client.Delete(ctx, pod); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}
