package gpureservation

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/gpureservation"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/apiwriter"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/store"
)

// binder is the scheduler's effects with GPU sharing on the node, a reservation waited for at
// most timeout.
func binder(timeout time.Duration) *apiwriter.Effects {
	return &apiwriter.Effects{Client: c, Clock: clock.RealClock{}, Overlay: store.NewOverlay(clock.RealClock{}),
		Reservations: &gpureservation.Reserver{Client: c, Clock: clock.RealClock{}, Image: "example.com/kai-resource-reservation:test",
			RuntimeClass: "nvidia", Timeout: timeout, Poll: 100 * time.Millisecond}}
}

// sharePod creates a pod asking for fraction of a GPU, as the webhook leaves it (its
// ConfigMap prefix), on node if not empty, and returns it as the scheduler sees it once
// placed on group.
func sharePod(name, fraction, node, group string) *model.PodInfo {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, Annotations: map[string]string{
			scheduling.GPUFractionAnnotation: fraction, scheduling.SharedGPUConfigMapAnnotation: name + "-abcdefg-shared-gpu"}},
		Spec: v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "main", Image: "example.com/train"}},
			Tolerations: []v1.Toleration{{Key: "gpu", Operator: v1.TolerationOpExists}}},
	}
	Expect(c.Create(ctx, pod)).To(Succeed())
	share, err := model.ParseGPUShare(pod)
	Expect(err).NotTo(HaveOccurred())
	return &model.PodInfo{Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID), Job: model.NewJobID("team", name),
		Share: share, GPUGroups: []string{group}}
}

func reservationsOf(group string) []v1.Pod {
	pods := &v1.PodList{}
	Expect(c.List(ctx, pods, client.InNamespace(scheduling.ReservationNamespace), client.MatchingLabels{scheduling.GPUGroupLabel: group})).To(Succeed())
	return pods.Items
}

func configMap(name string) (*v1.ConfigMap, error) {
	cm := &v1.ConfigMap{}
	return cm, c.Get(ctx, client.ObjectKey{Namespace: "team", Name: name}, cm)
}

func podNamed(name string) *v1.Pod {
	pod := &v1.Pod{}
	Expect(c.Get(ctx, client.ObjectKey{Namespace: "team", Name: name}, pod)).To(Succeed())
	return pod
}

var _ = Describe("Binding a GPU share", func() {
	It("reserves its device with one reservation pod per device, writes its ConfigMaps, and only then binds it", func() {
		first := sharePod("infer-1", "0.5", "", "group-a")
		Expect(binder(20*time.Second).Bind(ctx, first, "node-a")).To(Succeed())

		By("the reservation pod, as upstream makes it")
		reservations := reservationsOf("group-a")
		Expect(reservations).To(HaveLen(1))
		r := reservations[0]
		Expect(r.Name).To(Equal(gpureservation.PodName("node-a", "group-a")))
		Expect(r.Labels).To(HaveKeyWithValue(scheduling.ReservationAppLabel, scheduling.ReservationApp))
		Expect(r.Annotations).To(HaveKeyWithValue(scheduling.DoNotDisruptAnnotation, "true"))
		Expect(r.Spec.NodeName).To(Equal("node-a"))
		Expect(*r.Spec.RuntimeClassName).To(Equal("nvidia"))
		Expect(r.Spec.Tolerations).To(ContainElement(HaveField("Key", "gpu")), "it goes where the share may go")
		Expect(r.Spec.Containers[0].Resources.Limits).To(HaveKeyWithValue(model.GPUResourceName, resource.MustParse("1")))

		By("the share's ConfigMaps name the device the reservation reported, and its portion")
		for _, name := range []string{"infer-1-abcdefg-shared-gpu-0", "infer-1-abcdefg-shared-gpu-0-evar"} {
			cm, err := configMap(name)
			Expect(err).NotTo(HaveOccurred())
			Expect(cm.Data).To(Equal(map[string]string{"NVIDIA_VISIBLE_DEVICES": "GPU-group-a", "GPU_PORTION": "0.50"}))
			Expect(cm.OwnerReferences).To(ConsistOf(HaveField("UID", BeEquivalentTo(first.UID))), "they go with the pod")
		}
		pod := podNamed("infer-1")
		Expect(pod.Spec.NodeName).To(Equal("node-a"))
		Expect(pod.Labels).To(HaveKeyWithValue(scheduling.GPUGroupLabel, "group-a"))
		Expect(pod.Annotations).To(HaveKeyWithValue(scheduling.ReceivedResourceTypeAnnotation, "Fraction"))

		By("a scheduler started anew finds the reservation rather than making a second")
		uuid, created, err := binder(20*time.Second).Reservations.Reserve(ctx, "node-a", "group-a", nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(created).To(BeFalse())
		Expect(uuid).To(Equal("GPU-group-a"))

		By("a second share of the device uses the same reservation")
		second := sharePod("infer-2", "0.3", "", "group-a")
		Expect(binder(20*time.Second).Bind(ctx, second, "node-a")).To(Succeed())
		cm, err := configMap("infer-2-abcdefg-shared-gpu-0")
		Expect(err).NotTo(HaveOccurred())
		Expect(cm.Data).To(Equal(map[string]string{"NVIDIA_VISIBLE_DEVICES": "GPU-group-a", "GPU_PORTION": "0.30"}))
	})

	It("overwrites the ConfigMaps an earlier, interrupted bind of the pod left", func() {
		share := sharePod("infer-6", "0.25", "", "group-f")
		stale := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "infer-6-abcdefg-shared-gpu-0"},
			Data: map[string]string{"NVIDIA_VISIBLE_DEVICES": "GPU-elsewhere", "GPU_PORTION": "0.50"}}
		Expect(c.Create(ctx, stale)).To(Succeed())
		Expect(binder(20*time.Second).Bind(ctx, share, "node-b")).To(Succeed())
		cm, err := configMap("infer-6-abcdefg-shared-gpu-0")
		Expect(err).NotTo(HaveOccurred())
		Expect(cm.Data).To(Equal(map[string]string{"NVIDIA_VISIBLE_DEVICES": "GPU-group-f", "GPU_PORTION": "0.25"}))
		Expect(cm.OwnerReferences).To(ConsistOf(HaveField("UID", BeEquivalentTo(share.UID))))
	})

	It("fails, leaving nothing behind, when the reservation never reports its device", func() {
		devicesReported.Store(false)
		DeferCleanup(func() { devicesReported.Store(true) })
		share := sharePod("infer-3", "0.5", "", "group-b")
		err := binder(time.Second).Bind(ctx, share, "node-b")
		Expect(err).To(MatchError(ContainSubstring("did not report its device (annotation run.ai/reserve_for_gpu_index) within 1s")))
		Expect(reservationsOf("group-b")).To(BeEmpty(), "the reservation pod it made is deleted")
		_, err = configMap("infer-3-abcdefg-shared-gpu-0")
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no ConfigMap was written")
		pod := podNamed("infer-3")
		Expect(pod.Spec.NodeName).To(BeEmpty())
		Expect(pod.Labels).NotTo(HaveKey(scheduling.GPUGroupLabel))
	})

	It("takes back the ConfigMaps, the labels and the reservation pod it made when the Binding fails", func() {
		share := sharePod("infer-4", "0.5", "node-a", "group-c") // bound already: the API server refuses another Binding
		err := binder(20*time.Second).Bind(ctx, share, "node-b")
		Expect(err).To(MatchError(ContainSubstring("binding team/infer-4 to node-b")))
		Eventually(func() []v1.Pod { return reservationsOf("group-c") }).Should(BeEmpty())
		for _, name := range []string{"infer-4-abcdefg-shared-gpu-0", "infer-4-abcdefg-shared-gpu-0-evar"} {
			_, err := configMap(name)
			Expect(apierrors.IsNotFound(err)).To(BeTrue(), name)
		}
		pod := podNamed("infer-4")
		Expect(pod.Labels).NotTo(HaveKey(scheduling.GPUGroupLabel))
		Expect(pod.Annotations).NotTo(HaveKey(scheduling.ReceivedResourceTypeAnnotation))
	})
})

var _ = Describe("Collecting reservation pods", func() {
	It("deletes those no share holds once past the grace, as a scheduler stopped mid-bind leaves them, and no other", func() {
		held := sharePod("infer-5", "0.5", "", "group-d")
		Expect(binder(20*time.Second).Bind(ctx, held, "node-b")).To(Succeed())
		// A bind that stopped after reserving: the reservation is made, its share never labelled.
		reserver := binder(20 * time.Second).Reservations
		_, created, err := reserver.Reserve(ctx, "node-b", "group-e", nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(created).To(BeTrue())

		young := &gpureservation.Collector{Client: c, Clock: clocktesting.NewFakeClock(time.Now()), Grace: 90 * time.Second}
		deleted, err := young.Collect(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(deleted).To(BeEmpty(), "a bind may still be waiting for a young one's device")

		later := &gpureservation.Collector{Client: c, Clock: clocktesting.NewFakeClock(time.Now().Add(2 * time.Minute)), Grace: 90 * time.Second}
		deleted, err = later.Collect(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(deleted).To(ConsistOf(gpureservation.PodName("node-b", "group-e")))
		Expect(reservationsOf("group-d")).To(HaveLen(1), "a share still holds its device")

		By("once its last share is gone, its device's reservation goes too")
		Expect(c.Delete(ctx, podNamed("infer-5"), client.GracePeriodSeconds(0))).To(Succeed())
		Eventually(func() []string {
			deleted, err := later.Collect(ctx)
			Expect(err).NotTo(HaveOccurred())
			return deleted
		}).Should(ContainElement(gpureservation.PodName("node-b", "group-d")))
	})
})
