//go:build cgo

package device

import (
	"errors"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// GoNVML is NVML through github.com/NVIDIA/go-nvml, the library the process loads from the
// node's driver (mounted into the container by the NVIDIA container runtime).
type GoNVML struct{}

var _ NVML = GoNVML{}

func (GoNVML) Init() error {
	ret := nvml.Init()
	if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
		// go-nvml drops dlopen's message: say which library is missing and who provides it.
		return fmt.Errorf("%s: libnvidia-ml.so.1 could not be loaded; the NVIDIA container runtime mounts it "+
			"into containers that are given a GPU (is the NVIDIA driver installed on the node, and the pod's "+
			"runtime class nvidia?)", nvml.ErrorString(ret))
	}
	return asError(ret)
}

func (GoNVML) Shutdown() error {
	return asError(nvml.Shutdown())
}

func (GoNVML) DeviceCount() (int, error) {
	count, ret := nvml.DeviceGetCount()
	return count, asError(ret)
}

func (GoNVML) DeviceUUID(i int) (string, error) {
	handle, ret := nvml.DeviceGetHandleByIndex(i)
	if err := asError(ret); err != nil {
		return "", fmt.Errorf("getting the handle of device %d: %w", i, err)
	}
	uuid, ret := handle.GetUUID()
	return uuid, asError(ret)
}

// asError is nil for SUCCESS and otherwise NVML's message for the code.
func asError(ret nvml.Return) error {
	if ret == nvml.SUCCESS {
		return nil
	}
	return errors.New(nvml.ErrorString(ret))
}
