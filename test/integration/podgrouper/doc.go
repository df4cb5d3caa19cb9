// Package podgrouper measures the pod grouper against a real API server: how many pods it
// groups per second, and that the pods of one workload read its owners once between them.
package podgrouper
