// Package gpuwebhook checks the GPU-sharing admission webhook as users meet it: installed on a
// real kube-apiserver (failurePolicy Fail, the CREATE of pods), a share pod created through the
// API server comes back given its ConfigMaps, a malformed one is refused with a message naming
// the annotation, and a plain pod is stored as it was sent.
package gpuwebhook
