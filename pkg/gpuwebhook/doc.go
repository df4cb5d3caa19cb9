// Package gpuwebhook owns the mutating admission webhook of GPU sharing: at the creation of
// a pod asking for part of a GPU (the gpu-fraction, gpu-memory and gpu-fraction-num-devices
// annotations, read by model.ParseGPUShare), it prepares the pod to find, once bound, the
// device and portion the binder writes into ConfigMaps. The contract is upstream KAI's, which
// users' images rely on:
//
//   - the annotation runai/shared-gpu-configmap names the ConfigMaps' prefix,
//     <owner or pod name>-<7 random characters>-shared-gpu (a pod named by generateName
//     alone uses generateName without its trailing '-'), a valid DNS-1123 subdomain with
//     room for the suffixes below;
//   - the container given the share (gpu-fraction-container-name, default the first) is
//     number i of spec.containers, whose ConfigMaps are <prefix>-<i>, or number i of
//     spec.initContainers, whose ConfigMaps are <prefix>-i<i>;
//   - that container gets NVIDIA_VISIBLE_DEVICES and GPU_PORTION from the keys of the same
//     name in ConfigMap <prefix>-<i>, the whole of ConfigMap <prefix>-<i>-evar as
//     environment, and ConfigMap <prefix>-<i> mounted read-only at MountPath (/etc/kai/gpu-share,
//     one file per key) through the pod volume VolumeName (kai-gpu-share);
//   - a pod without a runtime class gets the configured one (default "nvidia"), whose
//     container runtime hook hands the device to the container.
//
// A malformed share request, or a gpu-fraction-container-name naming no container of the
// pod, is refused with a message naming the annotation. A pod that already carries
// runai/shared-gpu-configmap is not changed again (the API server may call a webhook twice),
// and a pod without share annotations is not changed at all. Only the creation of pods is
// looked at: a pod's environment and volumes cannot change afterwards, so there is nothing an
// update could be given.
//
// Mutate is the whole rule, a pure function on a pod; Handler serves it to the API server
// and Register mounts it at WebhookPath on a controller-runtime webhook server.
package gpuwebhook
