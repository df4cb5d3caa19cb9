package device_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kai-minruntime/kai-scheduler/pkg/gpureservation/device"
)

// The real library, on whatever machine runs the tests: most have no NVIDIA driver, and
// that is the case worth proving, since a reservation pod on a node without one must report
// it, not crash.
var _ = Describe("GoNVML", func() {
	It("reports a missing NVML as an error that says what is missing", func() {
		nvml := device.GoNVML{}
		if err := nvml.Init(); err == nil {
			Expect(nvml.Shutdown()).To(Succeed())
			Skip("this machine has a working NVML")
		}

		_, err := device.FindDevice(nvml)
		Expect(err).To(Or(
			// Built with cgo: go-nvml could not dlopen the library.
			MatchError(HavePrefix("initializing NVML: ERROR_LIBRARY_NOT_FOUND: libnvidia-ml.so.1 could not be loaded")),
			// Built without cgo: the stand-in says why it cannot work.
			MatchError(ContainSubstring("built with CGO_ENABLED=0 and cannot load NVML")),
		))
	})
})
