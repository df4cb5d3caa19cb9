package device

// NVML is the part of NVIDIA's management library the reservation pod uses. It is ours, not
// go-nvml's (whose interface has hundreds of methods), so that FindDevice is tested with a
// small mock and reads the same with or without cgo.
//
// Errors carry NVML's own message (nvml.ErrorString), which a user can search for.
//
//go:generate ../../../bin/mockgen -source=nvml.go -destination=mock_nvml_test.go -package=device_test
type NVML interface {
	// Init loads libnvidia-ml and initializes it; Shutdown must follow a successful Init.
	Init() error
	Shutdown() error
	// DeviceCount is how many devices the process sees: in a container, those the device
	// plugin gave it.
	DeviceCount() (int, error)
	// DeviceUUID is the UUID (GPU-xxxxxxxx-...) of the device at index i < DeviceCount.
	DeviceUUID(i int) (string, error)
}
