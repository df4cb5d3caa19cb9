// Package podgrouper lets users submit ordinary workloads: for every pod of this scheduler
// without a pod-group-name annotation it creates (or reuses) one PodGroup per top owner — a
// batch Job, or the pod itself — and annotates the pod with it.
package podgrouper
