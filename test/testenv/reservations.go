package testenv

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
)

// PlayReservationProgram plays, until ctx ends, the part of the reservation program
// (cmd/kai-resource-reservation) that no test node runs: every half-tenth of a second, it
// writes on each reservation pod without one the UUID of "its device", uuid(pod), as the
// program does once the device plugin gave it a GPU. While report returns false it writes
// nothing: a reservation that never reports its device.
func PlayReservationProgram(ctx context.Context, c client.Client, uuid func(*v1.Pod) string, report func() bool) {
	for ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
		if !report() {
			continue
		}
		pods := &v1.PodList{}
		if c.List(ctx, pods, client.InNamespace(scheduling.ReservationNamespace)) != nil {
			continue // the next round reads again
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.Annotations[scheduling.ReservedGPUAnnotation] != "" || p.DeletionTimestamp != nil {
				continue
			}
			patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, scheduling.ReservedGPUAnnotation, uuid(p))
			_ = c.Patch(ctx, p, client.RawPatch(types.MergePatchType, patch)) // a pod gone meanwhile needs none
		}
	}
}
