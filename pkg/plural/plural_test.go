package plural_test

import (
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/plural"
)

func TestCountIsSingularForOneOnly(t *testing.T) {
	for n, want := range map[int]string{0: "0 leaves", 1: "1 leaf", 2: "2 leaves", -1: "-1 leaves"} {
		if got := plural.Count(n, "leaf", "leaves"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
