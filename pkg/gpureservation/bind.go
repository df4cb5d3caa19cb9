package gpureservation

import (
	"context"
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// Prepared is what Prepare did for one share pod's bind, for Undo to take back.
type Prepared struct {
	node string
	uid  types.UID
	// groups are those the bind acquired (see uses), released by Finish.
	groups []string
	// created are the groups whose reservation pods this bind made.
	created []string
	maps    []*v1.ConfigMap
}

// Prepare readies the node for a share pod about to be bound there, before its Binding: the
// reservation pod of each of the pod's groups, and the pod's ConfigMaps naming the devices
// they reported. On failure nothing it made is left (see Undo). After a success the caller
// binds, undoes if that fails, and calls Finish.
func (r *Reserver) Prepare(ctx context.Context, share *model.PodInfo, node string) (*Prepared, error) {
	pod := &v1.Pod{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: share.Namespace, Name: share.Name}, pod); err != nil {
		return nil, fmt.Errorf("reading the pod: %w", err)
	}
	if string(pod.UID) != share.UID {
		return nil, fmt.Errorf("the pod was recreated (UID %s, not %s)", pod.UID, share.UID)
	}
	if pod.Spec.NodeName != "" {
		// Bound already (by a bind whose answer was lost): its ConfigMaps are not to be rewritten.
		return nil, fmt.Errorf("the pod is bound to %s already", pod.Spec.NodeName)
	}
	portion, err := r.portion(ctx, share, node)
	if err != nil {
		return nil, err
	}
	p := &Prepared{node: node, uid: pod.UID, groups: share.GPUGroups}
	for _, group := range p.groups {
		r.uses.acquire(group)
	}
	fail := func(err error) (*Prepared, error) {
		err = errors.Join(err, r.Undo(ctx, p))
		r.Finish(p)
		return nil, err
	}
	uuids := make([]string, 0, len(share.GPUGroups))
	for _, group := range share.GPUGroups {
		uuid, created, err := r.Reserve(ctx, node, group, pod.Spec.Tolerations)
		if created && err == nil {
			p.created = append(p.created, group)
		}
		if err != nil {
			return fail(err)
		}
		uuids = append(uuids, uuid)
	}
	maps, err := ConfigMaps(pod, uuids, portion, r.CDI)
	if err == nil {
		p.maps = maps
		err = WriteConfigMaps(ctx, r.Client, maps)
	}
	if err != nil {
		return fail(err)
	}
	return p, nil
}

// Finish ends what Prepare began, once the bind is done or undone: the reservations it
// counted on are no longer in use by it (see InUse).
func (r *Reserver) Finish(p *Prepared) {
	for _, group := range p.groups {
		r.uses.release(group, r.Clock.Now())
	}
}

// portion is what each of the share's devices gives it, in MilliGPU: a share asked in memory
// is a portion of the node's devices' memory.
func (r *Reserver) portion(ctx context.Context, share *model.PodInfo, node string) (int64, error) {
	var deviceMiB int64
	if share.Share.MemoryMiB > 0 {
		n := &v1.Node{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: node}, n); err != nil {
			return 0, fmt.Errorf("reading node %s for its GPUs' memory: %w", node, err)
		}
		deviceMiB = model.GPUMemoryMiB(n.Labels)
	}
	portion, ok := model.SharePortionOn(share.Share, deviceMiB)
	if !ok {
		return 0, fmt.Errorf("node %s's GPUs have less memory than the %d MiB asked", node, share.Share.MemoryMiB)
	}
	return portion, nil
}

// Undo takes back what Prepare did, after the bind failed: the pod's ConfigMaps, and the
// reservation pods it made that no other share holds meanwhile (one that does keeps its
// device for it). What Undo cannot delete, the Collector does later.
func (r *Reserver) Undo(ctx context.Context, p *Prepared) error {
	errs := []error{DeleteConfigMaps(ctx, r.Client, p.maps)}
	if len(p.created) > 0 {
		held, err := holders(ctx, r.Client)
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		for _, group := range p.created {
			// Another share holds the device, or another bind is about to label one with it.
			if r.uses.others(group) || slices.ContainsFunc(held[group], func(uid types.UID) bool { return uid != p.uid }) {
				continue
			}
			if err := r.Release(ctx, p.node, group); err != nil {
				errs = append(errs, fmt.Errorf("deleting the reservation pod of GPU group %s: %w", group, err))
			}
		}
	}
	return errors.Join(errs...)
}
