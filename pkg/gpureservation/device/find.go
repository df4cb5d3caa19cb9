package device

import (
	"errors"
	"fmt"
)

// FindDevice returns the UUID of the one GPU the device plugin gave this container. A
// reservation pod requests exactly one nvidia.com/gpu, so any other count means the pod is
// not what the scheduler made, or the node does not isolate devices, and holding "a" device
// would be a lie: it is an error.
//
// Shutdown follows every successful Init. Its own failure fails the search only when the
// search failed already (joined to that error): once the UUID is known, a library left
// loaded in a process that only waits harms nothing.
func FindDevice(n NVML) (uuid string, err error) {
	if err := n.Init(); err != nil {
		return "", fmt.Errorf("initializing NVML: %w", err)
	}
	defer func() {
		if shutdownErr := n.Shutdown(); shutdownErr != nil && err != nil {
			err = errors.Join(err, fmt.Errorf("shutting down NVML: %w", shutdownErr))
		}
	}()

	count, err := n.DeviceCount()
	if err != nil {
		return "", fmt.Errorf("counting the GPUs visible to the container: %w", err)
	}
	switch {
	case count == 0:
		return "", errors.New("no GPU is visible to the container: the device plugin gave it none " +
			"(is the pod's runtime class nvidia, and does it request nvidia.com/gpu: 1?)")
	case count > 1:
		return "", fmt.Errorf("%d GPUs are visible to the container, but a reservation must see exactly one, "+
			"the device it holds (a privileged container, or NVIDIA_VISIBLE_DEVICES=all in its image, sees every "+
			"device of the node)", count)
	}

	uuid, err = n.DeviceUUID(0)
	if err != nil {
		return "", fmt.Errorf("reading the UUID of the container's GPU: %w", err)
	}
	return uuid, nil
}
