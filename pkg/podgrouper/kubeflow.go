package podgrouper

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
)

// The Kubeflow training operator's kinds (kubeflow.org/v1) and the MPI operator's MPIJob
// (kubeflow.org/v2beta1; the training operator's v1 MPIJob is the same kind, read alike).
var (
	pyTorchJobKind = schema.GroupKind{Group: "kubeflow.org", Kind: "PyTorchJob"}
	tfJobKind      = schema.GroupKind{Group: "kubeflow.org", Kind: "TFJob"}
	xgboostJobKind = schema.GroupKind{Group: "kubeflow.org", Kind: "XGBoostJob"}
	jaxJobKind     = schema.GroupKind{Group: "kubeflow.org", Kind: "JAXJob"}
	paddleJobKind  = schema.GroupKind{Group: "kubeflow.org", Kind: "PaddleJob"}
	mpiJobKind     = schema.GroupKind{Group: "kubeflow.org", Kind: "MPIJob"}
)

// kubeflowReplicaSpecs is each kind's field of replica specs, spec.<field>.<type>.replicas.
var kubeflowReplicaSpecs = map[schema.GroupKind]string{
	pyTorchJobKind: "pytorchReplicaSpecs",
	tfJobKind:      "tfReplicaSpecs",
	xgboostJobKind: "xgbReplicaSpecs",
	jaxJobKind:     "jaxReplicaSpecs",
	paddleJobKind:  "paddleReplicaSpecs",
	mpiJobKind:     "mpiReplicaSpecs",
}

// The operators label each pod with its replica type, lower-cased ("master").
const kubeflowReplicaTypeLabel = "training.kubeflow.org/replica-type"

func init() {
	register(pyTorchJob, pyTorchJobKind)
	register(mpiJob, mpiJobKind)
	register(trainingJob, tfJobKind, xgboostJobKind, jaxJobKind, paddleJobKind)
}

// trainingJob groups a TFJob, XGBoostJob, JAXJob or PaddleJob into one gang of all its
// replicas (each replica type present has 1 unless it says), which the operator creates at
// once and which train together: a parameter server or a chief is no use without its
// workers. spec.runPolicy.schedulingPolicy.minAvailable, the gang its user asked the
// operator for, replaces it, but never beyond the pods the operator creates: such a gang
// would never start, and all the pods together is the most the user can have meant.
//
// They get no sub-groups: without minAvailable the gang is every pod, which already holds
// each replica type to its count, and a minAvailable names pods, not how to split them among
// the types, so a split would be a guess. A PaddleJob's elasticPolicy is not read (nor is it
// upstream): the operator creates all its replicas, so the gang of all of them can start.
func trainingJob(w *Workload) (Gang, error) {
	job := w.Top()
	replicas, err := kubeflowReplicas(job)
	if err != nil {
		return Gang{}, err
	}
	all := kubeflowSum(replicas)
	gang, err := kubeflowMinAvailable(job, all, all)
	if err != nil {
		return Gang{}, err
	}
	return Gang{Object: job, MinMember: max(gang, 1), DefaultPriority: TrainPriority}, nil
}

// pyTorchJob groups a PyTorchJob into one gang of its master and workers, a sub-group each
// ("master", "worker", as the pods' replica-type label), so that the gang cannot be made of
// workers alone: the workers meet at the master, which must run. An elastic job
// (spec.elasticPolicy.minReplicas) starts with that many workers; minAvailable, when set,
// replaces the gang (held to the job's pods, as for the other kinds), counting the master
// first. A sub-group that would need no pods is left out.
func pyTorchJob(w *Workload) (Gang, error) {
	job := w.Top()
	replicas, err := kubeflowReplicas(job)
	if err != nil {
		return Gang{}, err
	}
	masters, workers := replicas["Master"], replicas["Worker"]
	all := kubeflowSum(replicas)
	gang := all
	minWorkers, elastic, err := count(job, "spec", "elasticPolicy", "minReplicas")
	if err != nil {
		return Gang{}, err
	}
	if elastic {
		gang = all - workers + min(minWorkers, workers)
	}
	if gang, err = kubeflowMinAvailable(job, gang, all); err != nil {
		return Gang{}, err
	}
	masters = min(masters, gang)
	workers = min(workers, gang-masters)

	result := Gang{Object: job, MinMember: max(gang, 1), DefaultPriority: TrainPriority}
	for _, sg := range []v2alpha2.SubGroup{{Name: "master", MinMember: masters}, {Name: "worker", MinMember: workers}} {
		if sg.MinMember > 0 {
			result.SubGroups = append(result.SubGroups, sg)
			if strings.ToLower(w.Pod.Labels[kubeflowReplicaTypeLabel]) == sg.Name {
				result.SubGroup = sg.Name
			}
		}
	}
	return result, nil
}

// mpiJob groups an MPIJob into one gang of its launcher and workers, as the other kinds; but
// the MPI operator's launcherCreationPolicy WaitForWorkersReady creates the launcher only once
// the workers run, so then the gang is the workers alone (a gang waiting for the launcher
// would wait forever), and minAvailable is held to them. No sub-groups, for trainingJob's
// reasons.
func mpiJob(w *Workload) (Gang, error) {
	job := w.Top()
	policy := text(job, "spec", "launcherCreationPolicy")
	if policy != "" && policy != "AtStartup" && policy != "WaitForWorkersReady" {
		return Gang{}, &FieldError{Object: job, Field: "spec.launcherCreationPolicy",
			Problem: fmt.Sprintf("is %q, not AtStartup or WaitForWorkersReady", policy)}
	}
	replicas, err := kubeflowReplicas(job)
	if err != nil {
		return Gang{}, err
	}
	startable := kubeflowSum(replicas)
	if policy == "WaitForWorkersReady" {
		startable -= replicas["Launcher"]
	}
	gang, err := kubeflowMinAvailable(job, startable, startable)
	if err != nil {
		return Gang{}, err
	}
	return Gang{Object: job, MinMember: max(gang, 1), DefaultPriority: TrainPriority}, nil
}

// kubeflowReplicas reads the replicas of each replica type in the job's replica specs, 1
// when a type present does not say, as the operators default it.
func kubeflowReplicas(job *unstructured.Unstructured) (map[string]int32, error) {
	field := kubeflowReplicaSpecs[job.GroupVersionKind().GroupKind()]
	specs, _, _ := unstructured.NestedFieldNoCopy(job.Object, "spec", field)
	types, _ := specs.(map[string]any)
	replicas := make(map[string]int32, len(types))
	for _, rtype := range slices.Sorted(maps.Keys(types)) {
		n, err := countOr(job, 1, "spec", field, rtype, "replicas")
		if err != nil {
			return nil, err
		}
		replicas[rtype] = n
	}
	return replicas, nil
}

// kubeflowSum is the pods of all replica types, held to what a gang can count.
func kubeflowSum(replicas map[string]int32) int32 {
	var sum int64
	for _, n := range replicas {
		sum += int64(n)
	}
	return int32(min(sum, 1<<30))
}

// kubeflowMinAvailable is the gang spec.runPolicy.schedulingPolicy.minAvailable asks for, at
// most startable, the pods the operator creates at the start; gang when it is not set.
func kubeflowMinAvailable(job *unstructured.Unstructured, gang, startable int32) (int32, error) {
	n, set, err := count(job, "spec", "runPolicy", "schedulingPolicy", "minAvailable")
	if err != nil || !set {
		return gang, err
	}
	return min(n, startable), nil
}
