//go:build !cgo

package device

import "errors"

// GoNVML, in a binary built without cgo, cannot reach NVML: go-nvml's bindings are cgo (it
// does not compile with CGO_ENABLED=0). This stand-in keeps the module building everywhere
// (a machine without a C compiler builds with cgo off) and makes such a binary fail at once,
// saying why, instead of a reservation pod that never finds its device for no stated reason.
type GoNVML struct{}

var _ NVML = GoNVML{}

var errNoCgo = errors.New("this kai-resource-reservation binary was built with CGO_ENABLED=0 and cannot load NVML; " +
	"build it with cgo (CGO_ENABLED=1 and a C compiler for the target platform)")

func (GoNVML) Init() error               { return errNoCgo }
func (GoNVML) Shutdown() error           { return errNoCgo }
func (GoNVML) DeviceCount() (int, error) { return 0, errNoCgo }
func (GoNVML) DeviceUUID(int) (string, error) {
	return "", errNoCgo
}
