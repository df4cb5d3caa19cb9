package device_test

import (
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/mock/gomock"

	"github.com/kai-minruntime/kai-scheduler/pkg/gpureservation/device"
)

const gpuUUID = "GPU-2f1c3a9e-7b4d-4e0a-9c61-5d8f0b7e3a12"

var _ = Describe("FindDevice", func() {
	var nvml *MockNVML

	BeforeEach(func() {
		// The controller fails the spec on any call not expected below, and at the end on any
		// expected call not made: "Shutdown is called" is checked by every spec that expects it.
		nvml = NewMockNVML(gomock.NewController(GinkgoT()))
	})

	// initialized expects a successful Init and, after it, the Shutdown it obliges.
	initialized := func() {
		initCall := nvml.EXPECT().Init().Return(nil)
		nvml.EXPECT().Shutdown().Return(nil).After(initCall)
	}

	It("returns the UUID of the one device the container sees, and shuts NVML down", func() {
		initialized()
		nvml.EXPECT().DeviceCount().Return(1, nil)
		nvml.EXPECT().DeviceUUID(0).Return(gpuUUID, nil)

		Expect(device.FindDevice(nvml)).To(Equal(gpuUUID))
	})

	It("says no GPU is visible when the device plugin gave the container none", func() {
		initialized()
		nvml.EXPECT().DeviceCount().Return(0, nil)

		_, err := device.FindDevice(nvml)
		Expect(err).To(MatchError("no GPU is visible to the container: the device plugin gave it none " +
			"(is the pod's runtime class nvidia, and does it request nvidia.com/gpu: 1?)"))
	})

	It("says how many GPUs it sees when it sees several: a reservation must see exactly one", func() {
		initialized()
		nvml.EXPECT().DeviceCount().Return(8, nil)

		_, err := device.FindDevice(nvml)
		Expect(err).To(MatchError("8 GPUs are visible to the container, but a reservation must see exactly one, " +
			"the device it holds (a privileged container, or NVIDIA_VISIBLE_DEVICES=all in its image, sees every " +
			"device of the node)"))
	})

	It("reports NVML's message when Init fails (libnvidia-ml missing), and does not shut down what never started", func() {
		nvml.EXPECT().Init().Return(errors.New("ERROR_LIBRARY_NOT_FOUND"))
		// No Shutdown expected: the mock fails the spec if FindDevice calls it.

		_, err := device.FindDevice(nvml)
		Expect(err).To(MatchError("initializing NVML: ERROR_LIBRARY_NOT_FOUND"))
	})

	It("reports NVML's message when counting the devices fails", func() {
		initialized()
		nvml.EXPECT().DeviceCount().Return(0, errors.New("ERROR_DRIVER_NOT_LOADED"))

		_, err := device.FindDevice(nvml)
		Expect(err).To(MatchError("counting the GPUs visible to the container: ERROR_DRIVER_NOT_LOADED"))
	})

	It("reports NVML's message when reading the device's UUID fails", func() {
		initialized()
		nvml.EXPECT().DeviceCount().Return(1, nil)
		nvml.EXPECT().DeviceUUID(0).Return("", errors.New("ERROR_GPU_IS_LOST"))

		_, err := device.FindDevice(nvml)
		Expect(err).To(MatchError("reading the UUID of the container's GPU: ERROR_GPU_IS_LOST"))
	})

	It("adds a failed Shutdown to the error of a failed search", func() {
		initCall := nvml.EXPECT().Init().Return(nil)
		nvml.EXPECT().DeviceCount().Return(0, errors.New("ERROR_UNKNOWN"))
		nvml.EXPECT().Shutdown().Return(errors.New("ERROR_UNINITIALIZED")).After(initCall)

		_, err := device.FindDevice(nvml)
		Expect(err).To(MatchError("counting the GPUs visible to the container: ERROR_UNKNOWN\n" +
			"shutting down NVML: ERROR_UNINITIALIZED"))
	})

	It("still returns the UUID when only Shutdown fails: the device is found", func() {
		initCall := nvml.EXPECT().Init().Return(nil)
		nvml.EXPECT().DeviceCount().Return(1, nil)
		nvml.EXPECT().DeviceUUID(0).Return(gpuUUID, nil)
		nvml.EXPECT().Shutdown().Return(errors.New("ERROR_UNKNOWN")).After(initCall)

		Expect(device.FindDevice(nvml)).To(Equal(gpuUUID))
	})
})
