package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/gpureservation"
	"github.com/kai-minruntime/kai-scheduler/pkg/gpuwebhook"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
	"github.com/kai-minruntime/kai-scheduler/test/testenv"
)

var _ = Describe("GPU sharing on the node", func() {
	// Upstream KAI's e2e with the node's side on: 2×N shares of 0.7 on N single-GPU nodes.
	It("reserves each shared device once, tells each share its device, and frees the device when its share goes", func() {
		const nodes = 3
		readyForReservations(func() bool { return true })
		createNamespace("onnode")
		create(builders.MakeQueue("onnode-queue").GPUQuota(-1).Obj())
		for i := range nodes {
			createShareNode(fmt.Sprintf("onnode-node-%d", i), 1)
		}
		opts := schedulerOptions("")
		opts.GPUSharing.Enabled, opts.GPUSharing.ReservationImage = true, "example.com/kai-resource-reservation:e2e"
		opts.GPUSharing.WebhookPort = 0 // the pods are prepared below as the webhook would
		opts.GPUSharing.CollectInterval, opts.GPUSharing.ReservationGrace = 200*time.Millisecond, 5*time.Second
		DeferCleanup(startScheduler(opts))
		jobs := make([]string, 2*nodes)
		for i := range jobs {
			jobs[i] = fmt.Sprintf("onnode-%d", i)
			createJob(builders.MakePodGroup("onnode", jobs[i]).Queue("onnode-queue"), 1, 0,
				asShare(scheduling.GPUFractionAnnotation, "0.7"), preparedByWebhook)
		}
		boundOf := func() int {
			n := 0
			for _, job := range jobs {
				n += boundPods("onnode", job)()
			}
			return n
		}
		Eventually(boundOf).Should(Equal(nodes))

		By("one reservation pod per shared device, on the device's node")
		reservations := func() map[string]v1.Pod {
			pods := &v1.PodList{}
			Expect(k8sClient.List(suiteCtx, pods, client.InNamespace(scheduling.ReservationNamespace))).To(Succeed())
			byGroup := map[string]v1.Pod{}
			for _, p := range pods.Items {
				if p.DeletionTimestamp != nil || !strings.HasPrefix(p.Spec.NodeName, "onnode-") {
					continue // going, or another spec's
				}
				byGroup[p.Labels[scheduling.GPUGroupLabel]] = p
			}
			return byGroup
		}
		Eventually(func() int { return len(reservations()) }).Should(Equal(nodes))
		byGroup := reservations()
		Consistently(func() int { return len(reservations()) }, time.Second).Should(Equal(nodes), "never a second reservation of a device")

		By("each bound share's ConfigMaps name its device's UUID, and a waiting share has none")
		uuids := map[string]bool{}
		var bound *v1.Pod
		for _, job := range jobs {
			pod := getPod("onnode", job+"-0")
			name := gpureservation.ConfigMapName(pod.Annotations[scheduling.SharedGPUConfigMapAnnotation], 0, false)
			cm := &v1.ConfigMap{}
			err := k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: "onnode", Name: name}, cm)
			if pod.Spec.NodeName == "" {
				Expect(client.IgnoreNotFound(err)).To(Succeed())
				Expect(err).To(HaveOccurred(), "waiting share %s has no ConfigMap", pod.Name)
				continue
			}
			Expect(err).NotTo(HaveOccurred())
			group := pod.Labels[scheduling.GPUGroupLabel]
			reservation, ok := byGroup[group]
			Expect(ok).To(BeTrue(), "share %s's device %s is reserved", pod.Name, group)
			Expect(reservation.Spec.NodeName).To(Equal(pod.Spec.NodeName))
			Expect(cm.Data).To(HaveKeyWithValue(scheduling.VisibleDevicesKey, reservation.Annotations[scheduling.ReservedGPUAnnotation]))
			Expect(cm.Data).To(HaveKeyWithValue(scheduling.GPUPortionKey, "0.70"))
			Expect(pod.Annotations).To(HaveKeyWithValue(scheduling.ReceivedResourceTypeAnnotation, "Fraction"))
			uuids[cm.Data[scheduling.VisibleDevicesKey]] = true
			bound = pod
		}
		Expect(uuids).To(HaveLen(nodes), "one device UUID per GPU group")

		By("the share's deletion frees its device: its reservation goes and a waiting share takes the device")
		group := bound.Labels[scheduling.GPUGroupLabel]
		zero := int64(0)
		Expect(k8sClient.Delete(suiteCtx, bound, &client.DeleteOptions{GracePeriodSeconds: &zero})).To(Succeed())
		Eventually(func() bool { _, held := reservations()[group]; return held }).Should(BeFalse())
		Eventually(boundOf).Should(Equal(nodes), "a waiting share is placed on the freed device")
	})
})

var _ = Describe("GPU sharing on the node, across a restart", func() {
	It("leaves one reservation per device when the scheduler stops in the middle of a bind", func() {
		var reporting atomic.Bool // the reservation program has not started yet
		readyForReservations(reporting.Load)
		createNamespace("midbind")
		create(builders.MakeQueue("midbind-queue").GPUQuota(-1).Obj())
		createShareNode("midbind-node", 1)
		opts := schedulerOptions("")
		opts.GPUSharing.Enabled, opts.GPUSharing.ReservationImage = true, "example.com/kai-resource-reservation:e2e"
		opts.GPUSharing.WebhookPort = 0
		opts.GPUSharing.CollectInterval, opts.GPUSharing.ReservationGrace = 200*time.Millisecond, 2*time.Second
		stop := startScheduler(opts)
		createJob(builders.MakePodGroup("midbind", "infer").Queue("midbind-queue"), 1, 0,
			asShare(scheduling.GPUFractionAnnotation, "0.5"), preparedByWebhook)
		reservationsOnNode := func() []string {
			pods := &v1.PodList{}
			Expect(k8sClient.List(suiteCtx, pods, client.InNamespace(scheduling.ReservationNamespace))).To(Succeed())
			var groups []string
			for _, p := range pods.Items {
				if p.Spec.NodeName == "midbind-node" && p.DeletionTimestamp == nil {
					groups = append(groups, p.Labels[scheduling.GPUGroupLabel])
				}
			}
			return groups
		}
		Eventually(reservationsOnNode).Should(HaveLen(1), "the bind made the device's reservation and waits for its UUID")
		stop() // as a rollout or a crash would, while the bind waits

		By("the scheduler started anew binds the share onto one reservation, and leaves none beside it")
		reporting.Store(true)
		DeferCleanup(startScheduler(opts))
		Eventually(boundPods("midbind", "infer")).Should(Equal(1))
		share := getPod("midbind", "infer-0")
		Eventually(reservationsOnNode).Should(ConsistOf(share.Labels[scheduling.GPUGroupLabel]))
		Consistently(reservationsOnNode, 2*time.Second).Should(HaveLen(1))
	})
})

// preparedByWebhook gives a share pod what the admission webhook gives it (the chart serves
// it; its own spec is in test/integration/gpuwebhook).
func preparedByWebhook(p *builders.PodWrapper) {
	prepared, err := gpuwebhook.Mutate(p.Obj(), gpuwebhook.Options{})
	Expect(err).NotTo(HaveOccurred())
	Expect(prepared).NotTo(BeNil())
	p.Pod = *prepared
}

// readyForReservations makes what the chart installs for reservation pods — their namespace,
// service account and runtime class — and plays the reservation program's part: it writes,
// on each reservation pod, the UUID of "its device", as the program does once the device
// plugin gave it one (kwok runs no program).
func readyForReservations(report func() bool) {
	createNamespace(scheduling.ReservationNamespace)
	Expect(client.IgnoreAlreadyExists(k8sClient.Create(suiteCtx, &v1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Namespace: scheduling.ReservationNamespace, Name: "kai-resource-reservation"}}))).To(Succeed())
	Expect(client.IgnoreAlreadyExists(k8sClient.Create(suiteCtx, &nodev1.RuntimeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "nvidia"}, Handler: "nvidia"}))).To(Succeed())
	ctx, stop := context.WithCancel(suiteCtx)
	DeferCleanup(stop)
	go testenv.PlayReservationProgram(ctx, k8sClient, func(p *v1.Pod) string { return "GPU-" + string(p.UID) }, report)
}
