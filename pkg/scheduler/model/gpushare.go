package model

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
)

// GPUShare is the part of a GPU device a pod asks for with upstream KAI's GPU-sharing
// annotations: a fraction of each of Devices devices, or MemoryMiB of each.
type GPUShare struct {
	// Fraction is the share of one device, 0 < Fraction < 1; zero when the share is memory.
	Fraction float64
	// MemoryMiB is the memory of one device the pod asks for; zero when it is a fraction.
	MemoryMiB int64
	// Devices is how many devices each give the share (gpu-fraction-num-devices, default 1).
	Devices int32
}

// ParseGPUShare reads a pod's GPU-sharing annotations: nil without any (three map lookups, on
// every pod the scheduler reads). A request upstream refuses is an error
// naming the annotation: a fraction outside (0, 1) or not a number, a fraction and memory
// together, a share beside whole GPUs, memory that is not a positive number of MiB, a
// number of devices that is not a positive whole number, or one without a share to give.
// Such a pod is not scheduled: placed by its other requests, it would run without the GPU it
// asked for.
func ParseGPUShare(pod *v1.Pod) (*GPUShare, error) {
	annotations := pod.Annotations
	fraction, hasFraction := annotations[scheduling.GPUFractionAnnotation]
	memory, hasMemory := annotations[scheduling.GPUMemoryAnnotation]
	devices, hasDevices := annotations[scheduling.GPUFractionNumDevicesAnnotation]
	switch {
	case !hasFraction && !hasMemory && !hasDevices:
		return nil, nil
	case hasFraction && hasMemory:
		return nil, fmt.Errorf("annotations %s and %s ask for a share twice: give one", scheduling.GPUFractionAnnotation, scheduling.GPUMemoryAnnotation)
	case !hasFraction && !hasMemory:
		return nil, fmt.Errorf("annotation %s=%q asks for a share of each of that many devices, but no %s or %s says the share",
			scheduling.GPUFractionNumDevicesAnnotation, devices, scheduling.GPUFractionAnnotation, scheduling.GPUMemoryAnnotation)
	case asksWholeGPUs(pod):
		key := scheduling.GPUFractionAnnotation
		if hasMemory {
			key = scheduling.GPUMemoryAnnotation
		}
		return nil, fmt.Errorf("annotation %s asks for a share of a GPU, and the pod also requests whole %s: ask for one or the other", key, GPUResourceName)
	}
	share := &GPUShare{Devices: 1}
	if hasFraction {
		f, err := strconv.ParseFloat(strings.TrimSpace(fraction), 64)
		if err != nil || math.IsNaN(f) || f <= 0 || f >= 1 {
			return nil, fmt.Errorf("annotation %s=%q: want a share of one device between 0 and 1 (0.5: half), exclusive", scheduling.GPUFractionAnnotation, fraction)
		}
		share.Fraction = f
	} else {
		mib, err := strconv.ParseInt(strings.TrimSpace(memory), 10, 64)
		if err != nil || mib <= 0 {
			return nil, fmt.Errorf("annotation %s=%q: want a positive whole number of MiB of one device", scheduling.GPUMemoryAnnotation, memory)
		}
		share.MemoryMiB = mib
	}
	if hasDevices {
		n, err := strconv.ParseInt(strings.TrimSpace(devices), 10, 32)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("annotation %s=%q: want a positive whole number of devices", scheduling.GPUFractionNumDevicesAnnotation, devices)
		}
		share.Devices = int32(n)
	}
	return share, nil
}

// asksWholeGPUs says whether a container of the pod requests or limits whole GPUs (a limit
// alone is the request, once the API server defaults it).
func asksWholeGPUs(pod *v1.Pod) bool {
	for _, containers := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range containers {
			for _, list := range []v1.ResourceList{c.Resources.Requests, c.Resources.Limits} {
				if q, ok := list[GPUResourceName]; ok && !q.IsZero() {
					return true
				}
			}
		}
	}
	return false
}

// GPUGroupsOf reads the GPU groups a pod's labels name (scheduling.GPUGroupLabel): one for a
// share of one device, one per device for shares of several, sorted; nil without any.
func GPUGroupsOf(pod *v1.Pod) []string {
	var groups []string
	for key, value := range pod.Labels {
		if id, ok := strings.CutPrefix(key, scheduling.GPUGroupLabel+"/"); ok && id != "" && value == id {
			groups = append(groups, id)
		}
	}
	if len(groups) == 0 {
		if id := pod.Labels[scheduling.GPUGroupLabel]; id != "" {
			return []string{id}
		}
		return nil
	}
	slices.Sort(groups)
	return groups
}

// GPUGroupLabels are the labels naming a pod's GPU groups, as GPUGroupsOf reads them back:
// scheduling.GPUGroupLabel for one group, one label per group for several.
func GPUGroupLabels(groups []string) map[string]string {
	labels := make(map[string]string, len(groups))
	if len(groups) == 1 {
		labels[scheduling.GPUGroupLabel] = groups[0]
		return labels
	}
	for _, id := range groups {
		labels[scheduling.GPUGroupLabel+"/"+id] = id
	}
	return labels
}

// OwnGPUGroups are the groups a share of devices devices placed on node without any (by
// another scheduler, or its label removed) is taken to hold: devices of its own, named as
// the scheduler would name the fresh ones (NewGPUGroupID), so every reader names them alike.
func OwnGPUGroups(node, podUID string, devices int32) []string {
	groups := make([]string, devices)
	for i := range groups {
		groups[i] = NewGPUGroupID(node, podUID, i)
	}
	return groups
}

// GPUMemoryMiB reads a node's memory per GPU device from its labels
// (scheduling.GPUMemoryLabel): MiB, or bytes from 1,048,576 up, floored to a multiple of 100
// MiB as upstream floors it; 0 when the label is missing or unreadable.
func GPUMemoryMiB(labels map[string]string) int64 {
	v, err := strconv.ParseInt(strings.TrimSpace(labels[scheduling.GPUMemoryLabel]), 10, 64)
	if err != nil || v <= 0 {
		return 0
	}
	if v >= 1<<20 {
		v >>= 20
	}
	return v / 100 * 100
}
