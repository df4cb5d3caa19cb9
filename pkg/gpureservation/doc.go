// Package gpureservation is the node's side of GPU sharing as the binder sees it: it keeps
// one reservation pod per shared device (GPU group), which makes NVIDIA's device plugin give
// that device to the reservation and to no other pod, learns the device's UUID from it, and
// writes the ConfigMaps through which a share pod's container sees that device and its
// portion. It names these objects as upstream KAI does, because users' images and tooling
// read them; it collects the reservation pods no share needs any more.
//
// The reservation pod's own program is cmd/kai-resource-reservation; the admission webhook
// that points a share pod's containers at the ConfigMaps is pkg/gpuwebhook.
package gpureservation
