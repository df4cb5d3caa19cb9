package gpuwebhook

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

const (
	// sharedGPUSuffix ends every ConfigMap prefix, as upstream names them.
	sharedGPUSuffix = "-shared-gpu"
	// fallbackBase names the ConfigMaps of a pod that gives nothing usable to name them after.
	fallbackBase = "pod"
)

// configMapPrefix is the value of the shared-gpu-configmap annotation:
// <base>-<random>-shared-gpu, with the base shortened so that the prefix followed by the
// longest suffix the binder adds to it (longestSuffix characters) is still a valid
// ConfigMap name, a DNS-1123 subdomain of at most 253 characters.
func configMapPrefix(pod *v1.Pod, random string, longestSuffix int) string {
	tail := "-" + random + sharedGPUSuffix
	return dnsSafe(nameBase(pod), validation.DNS1123SubdomainMaxLength-len(tail)-longestSuffix) + tail
}

// nameBase is what a pod's ConfigMaps are named after: its first owner (so the ConfigMaps
// of a workload's pods read as the workload's), else the pod; a pod named by the API server
// has only its generateName at admission, which is used without its trailing '-'.
func nameBase(pod *v1.Pod) string {
	if len(pod.OwnerReferences) > 0 && pod.OwnerReferences[0].Name != "" {
		return pod.OwnerReferences[0].Name
	}
	if pod.Name != "" {
		return pod.Name
	}
	return strings.TrimSuffix(pod.GenerateName, "-")
}

// dnsSafe makes base usable at the start of a DNS-1123 subdomain of at most limit
// characters: lower-cased, any other character than a letter, digit, '-' or '.' made '-',
// cut to limit, without a '-' or '.' at either end. Dots are kept where they make a valid
// name (an owner named "llama-3.1" keeps its name), and made '-' where they do not ("a.-b").
func dnsSafe(base string, limit int) string {
	safe := strings.Map(func(r rune) rune {
		if isLowerAlphanumeric(r) || r == '-' || r == '.' {
			return r
		}
		return '-'
	}, strings.ToLower(base))
	safe = strings.Trim(safe[:min(len(safe), max(limit, 0))], "-.")
	if len(validation.IsDNS1123Subdomain(safe)) > 0 {
		safe = strings.ReplaceAll(safe, ".", "-")
	}
	if safe == "" {
		return fallbackBase
	}
	return safe
}

func isLowerAlphanumeric(r rune) bool {
	return ('a' <= r && r <= 'z') || ('0' <= r && r <= '9')
}
