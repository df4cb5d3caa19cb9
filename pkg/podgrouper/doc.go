// Package podgrouper lets users submit ordinary workloads: for every pod of this scheduler
// without a pod-group-name annotation it finds the pod's workload (its owners, read once per
// workload, as unstructured objects), applies the rule of the workload's kind (a file per
// kind: the gang, sub-groups, which object the PodGroup stands for — a Job, a JobSet, a
// LeaderWorkerSet's group, a Knative Revision…), makes that PodGroup exist with what the user
// set on the workload (queue, priority, preemptibility, windows, topology), and annotates the
// pod with it. A workload it cannot read or use is reported on the pod, which is then grouped
// on its own.
package podgrouper
