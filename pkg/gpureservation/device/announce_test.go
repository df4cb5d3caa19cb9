package device_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/gpureservation/device"
)

// reservationPod is a reservation pod as the scheduler makes it, before it is annotated.
func reservationPod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name:        name,
		Namespace:   scheduling.ReservationNamespace,
		Labels:      map[string]string{scheduling.ReservationAppLabel: scheduling.ReservationApp, scheduling.GPUGroupLabel: "g1"},
		Annotations: map[string]string{scheduling.DoNotDisruptAnnotation: "true"},
	}}
}

var _ = Describe("Announce", func() {
	ctx := context.Background()
	pod := device.Pod{Namespace: scheduling.ReservationNamespace, Name: "gpu-reservation-node1-abcde"}

	It("adds the device's UUID as the reserved-GPU annotation of the named pod, and changes nothing else", func() {
		other := reservationPod("gpu-reservation-node1-fghij")
		clients := fake.NewClientset(reservationPod(pod.Name), other)

		Expect(device.Announce(ctx, clients.CoreV1(), pod, gpuUUID)).To(Succeed())

		got, err := clients.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		want := reservationPod(pod.Name)
		want.Annotations[scheduling.ReservedGPUAnnotation] = gpuUUID
		Expect(got.ObjectMeta.Labels).To(Equal(want.Labels))
		Expect(got.ObjectMeta.Annotations).To(Equal(want.Annotations))
		Expect(got.Annotations).To(HaveKeyWithValue("run.ai/reserve_for_gpu_index", gpuUUID),
			"the annotation's name is upstream KAI's contract")

		untouched, err := clients.CoreV1().Pods(pod.Namespace).Get(ctx, other.Name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(untouched.Annotations).To(Equal(other.Annotations))
	})

	It("sends one merge patch of the annotation alone", func() {
		clients := fake.NewClientset(reservationPod(pod.Name))

		Expect(device.Announce(ctx, clients.CoreV1(), pod, gpuUUID)).To(Succeed())

		Expect(clients.Actions()).To(HaveLen(1))
		patch, ok := clients.Actions()[0].(k8stesting.PatchAction)
		Expect(ok).To(BeTrue(), "the one request is a patch, not a get and an update")
		Expect(patch.GetNamespace()).To(Equal(pod.Namespace))
		Expect(patch.GetName()).To(Equal(pod.Name))
		Expect(patch.GetSubresource()).To(BeEmpty())
		Expect(patch.GetPatchType()).To(Equal(types.MergePatchType))
		Expect(patch.GetPatch()).To(MatchJSON(`{"metadata":{"annotations":{"run.ai/reserve_for_gpu_index":"` + gpuUUID + `"}}}`))
	})

	It("says the pod does not exist, and which one, when POD_NAME names no pod", func() {
		clients := fake.NewClientset()

		err := device.Announce(ctx, clients.CoreV1(), pod, gpuUUID)
		Expect(err).To(MatchError("annotating pod kai-resource-reservation/gpu-reservation-node1-abcde with GPU " +
			gpuUUID + ": the pod does not exist (POD_NAME and POD_NAMESPACE must name this pod, from the downward API)"))
	})
})
