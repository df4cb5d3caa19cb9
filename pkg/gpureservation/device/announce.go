package device

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
)

// FieldManager names this program in the pod's managedFields.
const FieldManager = "kai-resource-reservation"

// Announce writes the device's UUID to the reservation pod's own annotation
// scheduling.ReservedGPUAnnotation, where the scheduler learns which device the pod holds.
// A merge patch touches that one annotation and nothing else of the pod, so it needs no read
// first and cannot lose a concurrent change to another field.
func Announce(ctx context.Context, pods corev1client.PodsGetter, pod Pod, uuid string) error {
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{
			"annotations": map[string]string{scheduling.ReservedGPUAnnotation: uuid},
		},
	})
	if err != nil {
		return err
	}
	_, err = pods.Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: FieldManager})
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("annotating pod %s with GPU %s: the pod does not exist "+
			"(POD_NAME and POD_NAMESPACE must name this pod, from the downward API)", pod, uuid)
	case err != nil:
		return fmt.Errorf("annotating pod %s with %s=%s: %w", pod, scheduling.ReservedGPUAnnotation, uuid, err)
	}
	return nil
}
