package gpureservation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// CDIDevice is the CDI name of an NVIDIA device by UUID, for clusters whose container runtime
// takes devices by CDI name rather than through NVIDIA_VISIBLE_DEVICES's UUIDs.
func CDIDevice(uuid string) string { return "k8s.device-plugin.nvidia.com/gpu=" + uuid }

// Portion is GPU_PORTION's value for a share of portion MilliGPU: the part of each device,
// in hundredths ("0.50"), as upstream writes it.
func Portion(portion int64) string {
	return strconv.FormatFloat(float64(portion)/model.MilliGPU, 'f', 2, 64)
}

// ConfigMaps are the ConfigMaps of a share pod, which its target container reads (see
// TargetContainer and the webhook): the devices it was given, by UUID (or CDI name when
// cdi), and the portion of each. Both are owned by the pod, so that they go with it. It
// returns nil when the pod was not given a ConfigMap prefix: no webhook pointed its
// containers at any, and there is nothing to write.
func ConfigMaps(pod *v1.Pod, uuids []string, portion int64, cdi bool) ([]*v1.ConfigMap, error) {
	prefix := pod.Annotations[scheduling.SharedGPUConfigMapAnnotation]
	if prefix == "" {
		return nil, nil
	}
	index, init, err := TargetContainer(pod)
	if err != nil {
		return nil, err
	}
	devices := uuids
	if cdi {
		devices = make([]string, len(uuids))
		for i, id := range uuids {
			devices[i] = CDIDevice(id)
		}
	}
	data := map[string]string{scheduling.VisibleDevicesKey: strings.Join(devices, ","), scheduling.GPUPortionKey: Portion(portion)}
	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID}
	name := ConfigMapName(prefix, index, init)
	var maps []*v1.ConfigMap
	for _, n := range []string{name, EnvConfigMapName(name)} {
		maps = append(maps, &v1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: pod.Namespace, OwnerReferences: []metav1.OwnerReference{owner}},
			Data:       data,
		})
	}
	return maps, nil
}

// WriteConfigMaps creates the ConfigMaps, or overwrites those left by an earlier attempt to
// bind the same pod. The overwrite is a patch, not a read and an update: a read through the
// scheduler's cached client would start an informer of every ConfigMap in the cluster.
func WriteConfigMaps(ctx context.Context, c client.Client, maps []*v1.ConfigMap) error {
	for _, cm := range maps {
		err := c.Create(ctx, cm.DeepCopy())
		if apierrors.IsAlreadyExists(err) {
			var patch []byte
			if patch, err = json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": cm.OwnerReferences}, "data": cm.Data}); err == nil {
				err = c.Patch(ctx, cm.DeepCopy(), client.RawPatch(types.MergePatchType, patch))
			}
		}
		if err != nil {
			return fmt.Errorf("writing ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err)
		}
	}
	return nil
}

// DeleteConfigMaps deletes the ConfigMaps, those already gone counting as deleted.
func DeleteConfigMaps(ctx context.Context, c client.Client, maps []*v1.ConfigMap) error {
	var errs []error
	for _, cm := range maps {
		if err := c.Delete(ctx, cm.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err))
		}
	}
	return errors.Join(errs...)
}
