// Command kai-resource-reservation is the program of a GPU reservation pod: the pod the
// scheduler places, in namespace kai-resource-reservation and requesting nvidia.com/gpu: 1,
// on each GPU it shares, so that NVIDIA's device plugin gives that device to it alone.
//
// It finds the one device it was given (NVML), writes the device's UUID to its own pod's
// annotation run.ai/reserve_for_gpu_index, and holds the device until SIGTERM or SIGINT. It
// learns its pod from POD_NAME and POD_NAMESPACE (downward API) and reaches the API server
// with the in-cluster configuration. On any error it prints one line and exits 1. See
// package device.
//
// It needs cgo (go-nvml dlopens libnvidia-ml.so.1): built with CGO_ENABLED=0 it only says so.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/kai-minruntime/kai-scheduler/pkg/gpureservation/device"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	code := run(ctx, os.Getenv, os.Stderr)
	stop()
	os.Exit(code)
}

// run reserves the device until ctx is done and returns the exit code.
func run(ctx context.Context, getenv func(string) string, stderr io.Writer) int {
	pod, err := device.PodFromEnv(getenv)
	if err == nil {
		err = device.Reserve(ctx, pod, device.GoNVML{}, inCluster, klog.NewKlogr())
	}
	if err != nil {
		fmt.Fprintf(stderr, "kai-resource-reservation: %v\n", err)
		return 1
	}
	return 0
}

// inCluster is the pods API of the cluster the pod runs in; only the core/v1 client, which
// keeps the binary small.
func inCluster() (corev1client.PodsGetter, error) {
	config, err := rest.InClusterConfig()
	if err != nil {
		return nil, err
	}
	config.UserAgent = device.FieldManager
	return corev1client.NewForConfig(config)
}
