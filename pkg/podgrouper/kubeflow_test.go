package podgrouper_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/podgrouper"
)

// trainingSpec is a Kubeflow job's spec: field (pytorchReplicaSpecs) holding a replica spec
// per type with its replicas (nil: the field is absent).
func trainingSpec(field string, replicas map[string]any) map[string]any {
	specs := map[string]any{}
	for rtype, n := range replicas {
		spec := map[string]any{"template": map[string]any{"spec": map[string]any{}}}
		if n != nil {
			spec["replicas"] = n
		}
		specs[rtype] = spec
	}
	return map[string]any{field: specs}
}

// trainingPod is a pod of replica type rtype of job, labelled as the operators label it.
func trainingPod(job *unstructured.Unstructured, rtype string) *v1.Pod {
	return podOf(job.GetName()+"-"+rtype+"-0", map[string]string{"training.kubeflow.org/replica-type": rtype}, job)
}

// Each Kubeflow training kind is one gang of the replicas its operator starts:
// minAvailable may lower it but never raise it past the job's pods, a PyTorchJob splits it
// into master and worker sub-groups (an elastic one needing its minimum of workers), and an
// MPIJob whose launcher waits for its workers leaves the launcher out.
func TestKubeflowTrainingJobs(t *testing.T) {
	kubeflow := func(kind, name, field string, replicas map[string]any, extra map[string]any) *unstructured.Unstructured {
		spec := trainingSpec(field, replicas)
		for k, v := range extra {
			spec[k] = v
		}
		return workload("kubeflow.org/v1", kind, name, spec)
	}
	minAvailable := func(n int64) map[string]any {
		return map[string]any{"runPolicy": map[string]any{"schedulingPolicy": map[string]any{"minAvailable": n}}}
	}
	elastic := func(n int64) map[string]any {
		return map[string]any{"elasticPolicy": map[string]any{"minReplicas": n, "maxReplicas": int64(8)}}
	}
	pytorch := func(replicas map[string]any, extra map[string]any) *unstructured.Unstructured {
		return kubeflow("PyTorchJob", "torch", "pytorchReplicaSpecs", replicas, extra)
	}
	masterAndWorkers := map[string]any{"Master": int64(1), "Worker": int64(3)}
	split := func(master, worker int32) []v2alpha2.SubGroup {
		var groups []v2alpha2.SubGroup
		if master > 0 {
			groups = append(groups, v2alpha2.SubGroup{Name: "master", MinMember: master})
		}
		if worker > 0 {
			groups = append(groups, v2alpha2.SubGroup{Name: "worker", MinMember: worker})
		}
		return groups
	}
	mpi := func(apiVersion string, extra map[string]any) *unstructured.Unstructured {
		job := kubeflow("MPIJob", "pi", "mpiReplicaSpecs", map[string]any{"Launcher": int64(1), "Worker": int64(2)}, extra)
		job.SetAPIVersion(apiVersion)
		return job
	}
	waitForWorkers := map[string]any{"launcherCreationPolicy": "WaitForWorkersReady"}
	// The MPI operator v2 runs its launcher as a batch Job: Pod → Job → MPIJob.
	launcherPod := func(job *unstructured.Unstructured) (*v1.Pod, *unstructured.Unstructured) {
		launcher := workload("batch/v1", "Job", job.GetName()+"-launcher", map[string]any{"parallelism": int64(1)})
		controls(job, launcher)
		return podOf(launcher.GetName()+"-x", nil, launcher), launcher
	}
	annotated := func(job *unstructured.Unstructured, key, value string) *unstructured.Unstructured {
		job.SetAnnotations(map[string]string{key: value})
		return job
	}
	tf := kubeflow("TFJob", "tf", "tfReplicaSpecs", map[string]any{"Chief": int64(1), "PS": int64(2), "Worker": int64(4), "Evaluator": nil}, nil)

	type testCase struct {
		name    string
		pod     *v1.Pod
		objects []*unstructured.Unstructured
		want    expectedGang
	}
	podCase := func(name string, job *unstructured.Unstructured, rtype string, want expectedGang) testCase {
		return testCase{name: name, pod: trainingPod(job, rtype), objects: []*unstructured.Unstructured{job}, want: want}
	}
	launcherCase := func(name string, job *unstructured.Unstructured, want expectedGang) testCase {
		pod, launcher := launcherPod(job)
		return testCase{name: name, pod: pod, objects: []*unstructured.Unstructured{job, launcher}, want: want}
	}
	for _, tc := range []testCase{
		podCase("a PyTorchJob's master", pytorch(masterAndWorkers, nil), "master",
			expectedGang{group: "pg-torch-uid-torch", minMember: 4, subGroups: split(1, 3), subGroup: "master"}),
		podCase("a PyTorchJob's worker", pytorch(masterAndWorkers, nil), "worker",
			expectedGang{group: "pg-torch-uid-torch", minMember: 4, subGroups: split(1, 3), subGroup: "worker"}),
		podCase("a replica type without replicas has one", pytorch(map[string]any{"Master": nil, "Worker": int64(2)}, nil), "worker",
			expectedGang{group: "pg-torch-uid-torch", minMember: 3, subGroups: split(1, 2), subGroup: "worker"}),
		podCase("an elastic PyTorchJob starts with its fewest workers", pytorch(masterAndWorkers, elastic(1)), "worker",
			expectedGang{group: "pg-torch-uid-torch", minMember: 2, subGroups: split(1, 1), subGroup: "worker"}),
		podCase("an elastic minimum above the workers is held to them", pytorch(masterAndWorkers, elastic(6)), "worker",
			expectedGang{group: "pg-torch-uid-torch", minMember: 4, subGroups: split(1, 3), subGroup: "worker"}),
		podCase("an elastic job that may run without workers has no worker sub-group", pytorch(masterAndWorkers, elastic(0)), "worker",
			expectedGang{group: "pg-torch-uid-torch", minMember: 1, subGroups: split(1, 0)}),
		podCase("minAvailable counts the master first", pytorch(masterAndWorkers, minAvailable(2)), "worker",
			expectedGang{group: "pg-torch-uid-torch", minMember: 2, subGroups: split(1, 1), subGroup: "worker"}),
		podCase("minAvailable outweighs the elastic minimum", pytorch(masterAndWorkers, map[string]any{
			"elasticPolicy": elastic(1)["elasticPolicy"], "runPolicy": minAvailable(3)["runPolicy"]}), "worker",
			expectedGang{group: "pg-torch-uid-torch", minMember: 3, subGroups: split(1, 2), subGroup: "worker"}),
		podCase("minAvailable beyond the job's pods is held to them", pytorch(masterAndWorkers, minAvailable(10)), "master",
			expectedGang{group: "pg-torch-uid-torch", minMember: 4, subGroups: split(1, 3), subGroup: "master"}),
		podCase("min-member replaces a PyTorchJob's gang", annotated(pytorch(masterAndWorkers, nil), podgrouper.MinMemberAnnotation, "2"), "master",
			expectedGang{group: "pg-torch-uid-torch", minMember: 2, overridden: true}),
		podCase("batch-min-member is not a PyTorchJob's", annotated(pytorch(masterAndWorkers, nil), podgrouper.BatchMinMemberAnnotation, "2"), "master",
			expectedGang{group: "pg-torch-uid-torch", minMember: 4, subGroups: split(1, 3), subGroup: "master"}),
		podCase("a PyTorchJob's negative replicas", pytorch(map[string]any{"Master": int64(1), "Worker": int64(-3)}, nil), "worker",
			expectedGang{badField: "spec.pytorchReplicaSpecs.Worker.replicas"}),
		podCase("a PyTorchJob's negative elastic minimum", pytorch(masterAndWorkers, elastic(-1)), "worker",
			expectedGang{badField: "spec.elasticPolicy.minReplicas"}),

		podCase("a TFJob: all its replicas", tf, "worker", expectedGang{group: "pg-tf-uid-tf", minMember: 8}),
		podCase("a TFJob's minAvailable", kubeflow("TFJob", "tf", "tfReplicaSpecs", map[string]any{"Chief": int64(1), "Worker": int64(4)}, minAvailable(3)), "worker",
			expectedGang{group: "pg-tf-uid-tf", minMember: 3}),
		podCase("a TFJob's minAvailable of 0 is a gang of one", kubeflow("TFJob", "tf", "tfReplicaSpecs", map[string]any{"Worker": int64(4)}, minAvailable(0)), "worker",
			expectedGang{group: "pg-tf-uid-tf", minMember: 1}),
		podCase("a TFJob's negative replicas", kubeflow("TFJob", "tf", "tfReplicaSpecs", map[string]any{"PS": int64(-1), "Worker": int64(4)}, nil), "ps",
			expectedGang{badField: "spec.tfReplicaSpecs.PS.replicas"}),
		podCase("a TFJob's replicas that are no number", kubeflow("TFJob", "tf", "tfReplicaSpecs", map[string]any{"Worker": "four"}, nil), "worker",
			expectedGang{badField: "spec.tfReplicaSpecs.Worker.replicas"}),
		podCase("a TFJob's negative minAvailable", kubeflow("TFJob", "tf", "tfReplicaSpecs", map[string]any{"Worker": int64(4)}, minAvailable(-2)), "worker",
			expectedGang{badField: "spec.runPolicy.schedulingPolicy.minAvailable"}),
		podCase("an XGBoostJob", kubeflow("XGBoostJob", "xgb", "xgbReplicaSpecs", map[string]any{"Master": int64(1), "Worker": int64(2)}, nil), "worker",
			expectedGang{group: "pg-xgb-uid-xgb", minMember: 3}),
		podCase("an XGBoostJob's minAvailable", kubeflow("XGBoostJob", "xgb", "xgbReplicaSpecs", map[string]any{"Master": int64(1), "Worker": int64(2)}, minAvailable(2)), "worker",
			expectedGang{group: "pg-xgb-uid-xgb", minMember: 2}),
		podCase("an XGBoostJob's negative replicas", kubeflow("XGBoostJob", "xgb", "xgbReplicaSpecs", map[string]any{"Master": int64(-1)}, nil), "master",
			expectedGang{badField: "spec.xgbReplicaSpecs.Master.replicas"}),
		podCase("a JAXJob", kubeflow("JAXJob", "jax", "jaxReplicaSpecs", map[string]any{"Worker": int64(4)}, nil), "worker",
			expectedGang{group: "pg-jax-uid-jax", minMember: 4}),
		podCase("a JAXJob's minAvailable", kubeflow("JAXJob", "jax", "jaxReplicaSpecs", map[string]any{"Worker": int64(4)}, minAvailable(2)), "worker",
			expectedGang{group: "pg-jax-uid-jax", minMember: 2}),
		podCase("a JAXJob's negative replicas", kubeflow("JAXJob", "jax", "jaxReplicaSpecs", map[string]any{"Worker": int64(-4)}, nil), "worker",
			expectedGang{badField: "spec.jaxReplicaSpecs.Worker.replicas"}),
		podCase("a PaddleJob, elastic or not, is all its replicas", kubeflow("PaddleJob", "paddle", "paddleReplicaSpecs", map[string]any{"Master": int64(1), "Worker": int64(2)}, elastic(1)), "worker",
			expectedGang{group: "pg-paddle-uid-paddle", minMember: 3}),
		podCase("a PaddleJob's minAvailable", kubeflow("PaddleJob", "paddle", "paddleReplicaSpecs", map[string]any{"Master": int64(1), "Worker": int64(2)}, minAvailable(1)), "worker",
			expectedGang{group: "pg-paddle-uid-paddle", minMember: 1}),
		podCase("a PaddleJob's negative replicas", kubeflow("PaddleJob", "paddle", "paddleReplicaSpecs", map[string]any{"Worker": int64(-2)}, nil), "worker",
			expectedGang{badField: "spec.paddleReplicaSpecs.Worker.replicas"}),

		podCase("a training operator MPIJob: launcher and workers", mpi("kubeflow.org/v1", nil), "launcher",
			expectedGang{group: "pg-pi-uid-pi", minMember: 3}),
		podCase("an MPIJob v2's worker, launcher created at startup", mpi("kubeflow.org/v2beta1", map[string]any{"launcherCreationPolicy": "AtStartup"}), "worker",
			expectedGang{group: "pg-pi-uid-pi", minMember: 3}),
		launcherCase("an MPIJob v2's launcher, through its Job", mpi("kubeflow.org/v2beta1", nil),
			expectedGang{group: "pg-pi-uid-pi", minMember: 3}),
		podCase("an MPIJob whose launcher waits for its workers: the workers", mpi("kubeflow.org/v2beta1", waitForWorkers), "worker",
			expectedGang{group: "pg-pi-uid-pi", minMember: 2}),
		launcherCase("the launcher that waited joins the workers' PodGroup", mpi("kubeflow.org/v2beta1", waitForWorkers),
			expectedGang{group: "pg-pi-uid-pi", minMember: 2}),
		podCase("an MPIJob's minAvailable", mpi("kubeflow.org/v2beta1", minAvailable(2)), "worker",
			expectedGang{group: "pg-pi-uid-pi", minMember: 2}),
		podCase("a minAvailable counting a launcher that waits is held to the workers", mpi("kubeflow.org/v2beta1", map[string]any{
			"launcherCreationPolicy": "WaitForWorkersReady", "runPolicy": minAvailable(3)["runPolicy"]}), "worker",
			expectedGang{group: "pg-pi-uid-pi", minMember: 2}),
		podCase("an unknown launcherCreationPolicy", mpi("kubeflow.org/v2beta1", map[string]any{"launcherCreationPolicy": "Later"}), "worker",
			expectedGang{badField: "spec.launcherCreationPolicy"}),
		podCase("an MPIJob's negative replicas", kubeflow("MPIJob", "pi", "mpiReplicaSpecs", map[string]any{"Launcher": int64(1), "Worker": int64(-2)}, nil), "worker",
			expectedGang{badField: "spec.mpiReplicaSpecs.Worker.replicas"}),
	} {
		t.Run(tc.name, func(t *testing.T) { tc.want.check(t, tc.pod, tc.objects...) })
	}
}
