package podgrouper

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
)

var (
	jobSetKind   = schema.GroupKind{Group: "jobset.x-k8s.io", Kind: "JobSet"}
	trainJobKind = schema.GroupKind{Group: "trainer.kubeflow.org", Kind: "TrainJob"}
)

const (
	// The JobSet controller labels each of its Jobs, and their pods, with the replicated job
	// the Job is a replica of and the replica's index.
	jobSetReplicatedJobLabel = "jobset.sigs.k8s.io/replicatedjob-name"
	jobSetJobIndexLabel      = "jobset.sigs.k8s.io/job-index"
	// A PodGroup holds at most 128 sub-groups, each named in at most 63 characters (its CRD).
	jobSetMaxSubGroups    = 128
	jobSetMaxSubGroupName = 63
)

func init() {
	register(jobSet, jobSetKind)
	register(trainJob, trainJobKind)
}

// jobSet groups a JobSet into one PodGroup shaped like it: a sub-group per replicated job,
// ready when all its replicas (its Jobs) are, and under it a sub-group per replica,
// <rj>-replica-<i>, needing the gang of that Job's pods as for a batch Job (jobGang), since a
// Job never runs more pods than it has completions left and a
// larger gang would never start. kai.scheduler/batch-min-member may ask for another gang.
//
// The JobSet needs all its replicated jobs ready when the controller creates them together
// (AnyOrder). When it creates them one after another (startupPolicyOrder InOrder, or a
// replicated job that dependsOn another), only the first exists at the start, and a later one
// may be the only one with pods (its predecessor has completed), so the JobSet needs one
// ready: asking for more would wait forever for Jobs not made yet or already done. (Upstream
// reads only startupPolicyOrder, and so deadlocks a TrainJob whose runtime chains
// initializers with dependsOn.)
//
// A replicated job that runs no pods (no replicas, parallelism or completions 0) is left
// out, since a sub-group needs at least one pod. When a sub-group per replica would not fit
// in a PodGroup, each replicated job is one sub-group of all its replicas' pods instead: the
// same gang, as each Job makes its own pods.
func jobSet(w *Workload) (Gang, error) {
	return jobSetGang(w, w.Top())
}

// trainJob groups a Kubeflow Trainer TrainJob as the JobSet the trainer makes for it, whose
// gang it is; but the PodGroup stands for the TrainJob, which its user made and looks at.
// Without a JobSet above the pod, the TrainJob is one gang of one.
func trainJob(w *Workload) (Gang, error) {
	js := w.Nearest(jobSetKind)
	if js == nil {
		return Gang{Object: w.Top(), MinMember: 1, DefaultPriority: TrainPriority}, nil
	}
	gang, err := jobSetGang(w, js)
	if err != nil {
		return Gang{}, err
	}
	gang.Object = w.Top()
	return gang, nil
}

// jobSetReplicated is what the gang needs of one replicated job.
type jobSetReplicated struct {
	name string
	// replicas are its Jobs; pods, what each Job runs at once.
	replicas, pods int32
}

// jobSetGang is the gang of JobSet js (jobSet's comment says how), and w's pod's sub-group.
func jobSetGang(w *Workload, js *unstructured.Unstructured) (Gang, error) {
	gang := Gang{Object: js, MinMember: 1, DefaultPriority: TrainPriority, BatchMinMember: true}
	order := text(js, "spec", "startupPolicy", "startupPolicyOrder")
	if order != "" && order != "AnyOrder" && order != "InOrder" {
		return Gang{}, &FieldError{Object: js, Field: "spec.startupPolicy.startupPolicyOrder",
			Problem: fmt.Sprintf("is %q, not AnyOrder or InOrder", order)}
	}
	running, dependent, err := jobSetReplicatedJobs(js)
	if err != nil {
		return Gang{}, err
	}
	if len(running) == 0 {
		return gang, nil
	}
	if len(running) > jobSetMaxSubGroups {
		return Gang{}, &FieldError{Object: js, Field: "spec.replicatedJobs", Problem: fmt.Sprintf(
			"has %d replicated jobs that run pods, more than the %d sub-groups of a PodGroup", len(running), jobSetMaxSubGroups)}
	}
	subGroups := int64(len(running))
	for _, rj := range running {
		subGroups += int64(rj.replicas)
	}
	perReplica := subGroups <= jobSetMaxSubGroups

	need := int32(len(running))
	if order == "InOrder" || dependent {
		need = 1
	}
	gang.MinMember, gang.MinSubGroup = 0, &need
	for _, rj := range running {
		parent := jobSetSubGroupName(rj.name)
		if !perReplica {
			pods := int64(rj.replicas) * int64(rj.pods)
			if pods > 1<<30 {
				return Gang{}, &FieldError{Object: js, Field: "spec.replicatedJobs", Problem: fmt.Sprintf(
					"runs %d pods in replicated job %s, more than a gang can count", pods, rj.name)}
			}
			gang.SubGroups = append(gang.SubGroups, v2alpha2.SubGroup{Name: parent, MinMember: int32(pods)})
			continue
		}
		gang.SubGroups = append(gang.SubGroups, v2alpha2.SubGroup{Name: parent, MinSubGroup: ptr.To(rj.replicas)})
		for i := range rj.replicas {
			gang.SubGroups = append(gang.SubGroups, v2alpha2.SubGroup{
				Name: jobSetReplicaName(rj.name, i), MinMember: rj.pods, Parent: ptr.To(parent)})
		}
	}
	gang.SubGroup = jobSetPodSubGroup(w, running, perReplica)
	return gang, nil
}

// jobSetReplicatedJobs reads the replicated jobs that run pods, and whether any of them
// waits for another (dependsOn).
func jobSetReplicatedJobs(js *unstructured.Unstructured) (running []jobSetReplicated, dependent bool, err error) {
	value, _, _ := unstructured.NestedFieldNoCopy(js.Object, "spec", "replicatedJobs")
	items, ok := value.([]any)
	if value != nil && !ok {
		return nil, false, &FieldError{Object: js, Field: "spec.replicatedJobs", Problem: "is not a list"}
	}
	for i, item := range items {
		field := fmt.Sprintf("spec.replicatedJobs[%d]", i)
		spec, ok := item.(map[string]any)
		if !ok {
			return nil, false, &FieldError{Object: js, Field: field, Problem: "is not an object"}
		}
		rj := jobSetReplicated{}
		if rj.name, _ = spec["name"].(string); rj.name == "" {
			return nil, false, &FieldError{Object: js, Field: field + ".name", Problem: "is empty"}
		}
		var completions int32
		var set bool
		if rj.replicas, _, err = jobSetCount(js, field, spec, 1, "replicas"); err != nil {
			return nil, false, err
		}
		if rj.pods, _, err = jobSetCount(js, field, spec, 1, "template", "spec", "parallelism"); err != nil {
			return nil, false, err
		}
		if completions, set, err = jobSetCount(js, field, spec, 0, "template", "spec", "completions"); err != nil {
			return nil, false, err
		}
		if set && completions == 0 {
			rj.pods = 0
		}
		if rj.replicas > 0 && rj.pods > 0 {
			rj.pods = jobGang(rj.pods, completions, set)
			running = append(running, rj)
			if deps, _ := spec["dependsOn"].([]any); len(deps) > 0 {
				dependent = true
			}
		}
	}
	return running, dependent, nil
}

// jobSetCount is countOr of a field of the replicated job at field of js (set says whether
// it was there), an error naming js and the whole path.
func jobSetCount(js *unstructured.Unstructured, field string, spec map[string]any, fallback int32, path ...string) (int32, bool, error) {
	n, set, err := count(&unstructured.Unstructured{Object: spec}, path...)
	var bad *FieldError
	if errors.As(err, &bad) {
		bad.Object, bad.Field = js, field+"."+bad.Field
	}
	if !set {
		n = fallback
	}
	return n, set, err
}

// jobSetPodSubGroup is the sub-group of the pod's replica, by the labels of the pod (else of
// its Job); empty for a pod of no replica the gang counts (a replica scaled away).
func jobSetPodSubGroup(w *Workload, running []jobSetReplicated, perReplica bool) string {
	label := func(key string) string {
		if value, ok := w.Pod.Labels[key]; ok {
			return value
		}
		if job := w.Nearest(jobKind); job != nil {
			return job.GetLabels()[key]
		}
		return ""
	}
	name := label(jobSetReplicatedJobLabel)
	for _, rj := range running {
		if rj.name != name {
			continue
		}
		if !perReplica {
			return jobSetSubGroupName(rj.name)
		}
		i, err := strconv.ParseInt(label(jobSetJobIndexLabel), 10, 32)
		if err != nil || i < 0 || i >= int64(rj.replicas) {
			return ""
		}
		return jobSetReplicaName(rj.name, int32(i))
	}
	return ""
}

func jobSetReplicaName(rj string, i int32) string {
	return jobSetSubGroupName(fmt.Sprintf("%s-replica-%d", rj, i))
}

// jobSetSubGroupName is name as a sub-group's: cut to 63 characters when longer, the cut
// ending in a hash of the whole name so that long names stay apart.
func jobSetSubGroupName(name string) string {
	if len(name) <= jobSetMaxSubGroupName {
		return name
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	suffix := fmt.Sprintf("-%08x", h.Sum32())
	return name[:jobSetMaxSubGroupName-len(suffix)] + suffix
}
