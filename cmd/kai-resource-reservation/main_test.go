package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/kai-minruntime/kai-scheduler/pkg/gpureservation/device"
)

// The binary's contract on a machine like the one running the tests (no cluster, and most
// often no NVIDIA driver): one line on stderr and exit 1, with the first problem a user must
// fix.
func TestRunReportsTheFirstProblemInOneLine(t *testing.T) {
	for name, tc := range map[string]struct {
		env  map[string]string
		want string
	}{
		"no downward API": {
			env:  map[string]string{},
			want: "kai-resource-reservation: environment variable POD_NAME and POD_NAMESPACE not set",
		},
		"pod named, no GPU: the device's error comes before the cluster's": {
			env:  map[string]string{"POD_NAME": "r1", "POD_NAMESPACE": "kai-resource-reservation"},
			want: "kai-resource-reservation: initializing NVML: ",
		},
	} {
		t.Run(name, func(t *testing.T) {
			if _, named := tc.env["POD_NAME"]; named && nvmlWorks() {
				t.Skip("this machine has a working NVML: the run would go on to the cluster")
			}
			var stderr bytes.Buffer
			code := run(context.Background(), func(k string) string { return tc.env[k] }, &stderr)
			out := stderr.String()
			if code != 1 || !strings.HasPrefix(out, tc.want) || strings.Count(out, "\n") != 1 {
				t.Errorf("run() = %d with stderr %q; want 1 and one line starting %q", code, out, tc.want)
			}
		})
	}
}

func nvmlWorks() bool {
	nvml := device.GoNVML{}
	if nvml.Init() != nil {
		return false
	}
	_ = nvml.Shutdown()
	return true
}
