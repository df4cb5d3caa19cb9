package device_test

import (
	"context"
	"errors"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/mock/gomock"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/gpureservation/device"
)

var _ = Describe("PodFromEnv", func() {
	env := func(vars map[string]string) func(string) string {
		return func(name string) string { return vars[name] }
	}

	It("reads the pod's name and namespace", func() {
		Expect(device.PodFromEnv(env(map[string]string{"POD_NAME": "r1", "POD_NAMESPACE": "kai-resource-reservation"}))).
			To(Equal(device.Pod{Namespace: "kai-resource-reservation", Name: "r1"}))
	})

	DescribeTable("names the missing variables",
		func(vars map[string]string, want string) {
			_, err := device.PodFromEnv(env(vars))
			Expect(err).To(MatchError(want))
		},
		Entry("POD_NAME", map[string]string{"POD_NAMESPACE": "ns"},
			"environment variable POD_NAME not set: the pod's spec must set it from the downward API (metadata.name, metadata.namespace)"),
		Entry("POD_NAMESPACE", map[string]string{"POD_NAME": "r1"},
			"environment variable POD_NAMESPACE not set: the pod's spec must set it from the downward API (metadata.name, metadata.namespace)"),
		Entry("both", map[string]string{},
			"environment variable POD_NAME and POD_NAMESPACE not set: the pod's spec must set it from the downward API (metadata.name, metadata.namespace)"),
	)
})

var _ = Describe("Reserve", func() {
	pod := device.Pod{Namespace: scheduling.ReservationNamespace, Name: "gpu-reservation-node1-abcde"}
	var nvml *MockNVML

	BeforeEach(func() {
		nvml = NewMockNVML(gomock.NewController(GinkgoT()))
	})

	It("reports the device's error without contacting the cluster, on a node without a usable GPU", func() {
		nvml.EXPECT().Init().Return(errors.New("ERROR_LIBRARY_NOT_FOUND"))
		connect := func() (corev1client.PodsGetter, error) {
			Fail("the cluster was contacted before a device was found")
			return nil, nil
		}

		err := device.Reserve(context.Background(), pod, nvml, connect, logr.Discard())
		Expect(err).To(MatchError("initializing NVML: ERROR_LIBRARY_NOT_FOUND"))
	})

	It("says which device it could not announce when the cluster is out of reach", func() {
		initCall := nvml.EXPECT().Init().Return(nil)
		nvml.EXPECT().DeviceCount().Return(1, nil)
		nvml.EXPECT().DeviceUUID(0).Return(gpuUUID, nil)
		nvml.EXPECT().Shutdown().Return(nil).After(initCall)
		connect := func() (corev1client.PodsGetter, error) {
			return nil, errors.New("unable to load in-cluster configuration")
		}

		err := device.Reserve(context.Background(), pod, nvml, connect, logr.Discard())
		Expect(err).To(MatchError("connecting to the cluster to announce GPU " + gpuUUID +
			": unable to load in-cluster configuration"))
	})

	It("announces the device on the pod, holds it until terminated, then returns nil", func() {
		initCall := nvml.EXPECT().Init().Return(nil)
		nvml.EXPECT().DeviceCount().Return(1, nil)
		nvml.EXPECT().DeviceUUID(0).Return(gpuUUID, nil)
		nvml.EXPECT().Shutdown().Return(nil).After(initCall)
		clients := fake.NewClientset(reservationPod(pod.Name))
		connect := func() (corev1client.PodsGetter, error) { return clients.CoreV1(), nil }

		ctx, terminate := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- device.Reserve(ctx, pod, nvml, connect, logr.Discard()) }()

		Eventually(func(g Gomega) {
			got, err := clients.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got.Annotations).To(HaveKeyWithValue(scheduling.ReservedGPUAnnotation, gpuUUID))
		}).Should(Succeed())
		Consistently(done, 100*time.Millisecond).ShouldNot(Receive(), "it holds the device while the pod runs")

		terminate()
		Eventually(done).Should(Receive(BeNil()))
	})
})
