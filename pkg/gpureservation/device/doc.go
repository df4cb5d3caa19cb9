// Package device is the program of a GPU reservation pod, the pod the scheduler places on
// each shared GPU so that NVIDIA's device plugin gives that device to it and to no other pod.
//
// It owns three steps, in this order:
//   - FindDevice asks NVML, through the narrow NVML interface, for the one device the device
//     plugin gave the container, and returns its UUID;
//   - Announce writes that UUID to the pod's own annotation run.ai/reserve_for_gpu_index
//     (scheduling.ReservedGPUAnnotation), where the scheduler reads which device the share
//     pods of the GPU group are to use;
//   - Reserve runs both, the device first, then holds the device until the pod is terminated.
//
// The device is found before the cluster is contacted, so that on a node without the NVIDIA
// driver the error a user reads in the pod's log is about the GPU, not about the API server.
//
// GoNVML adapts github.com/NVIDIA/go-nvml, which needs cgo (it dlopens libnvidia-ml.so.1 at
// Init). Built with CGO_ENABLED=0 the package still compiles, so that the module builds and
// vets anywhere, but GoNVML's Init then fails with an error saying the binary cannot use NVML.
package device
