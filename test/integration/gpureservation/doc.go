// Package gpureservation tests, against a real kube-apiserver, what the binder does on the
// node's side of GPU sharing: the reservation pod of each shared device, the share pod's
// ConfigMaps, and that a failed bind or a stopped scheduler leaves none of them behind. The
// test plays the reservation program's part (cmd/kai-resource-reservation): it writes a
// device UUID on each reservation pod, as the program does once the device plugin gave it
// its device.
package gpureservation
