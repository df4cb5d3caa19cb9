package victims

import (
	"testing"
	"unsafe"
)

// TestUnitStaysSmall pins the layout unit's comment promises: every cycle lists a unit or
// more per running preemptible job.
func TestUnitStaysSmall(t *testing.T) {
	if got := unsafe.Sizeof(unit{}); got > 64 {
		t.Errorf("unit is %d bytes, want at most 64", got)
	}
}
