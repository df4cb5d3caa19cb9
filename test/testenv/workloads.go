package testenv

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// The workloads below are the smallest objects of each workload kind that the kind's real CRD
// accepts (see hack/workloadcrds; an API server started with StartWith(Options{WorkloadCRDs:
// true}) has them): one replica of one role, one container, the container names their
// operators use. No operator runs in envtest: a test that wants pods creates them itself,
// owned by these objects. Each function returns a new object, namespace and name set, for a
// test to adjust before creating it.

// image is every container's image: nothing pulls it.
const image = "busybox:1.36"

// PyTorchJob is a kubeflow.org/v1 PyTorchJob of one Master.
func PyTorchJob(namespace, name string) *unstructured.Unstructured {
	return workload(namespace, name, `
apiVersion: kubeflow.org/v1
kind: PyTorchJob
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: pytorch
            image: $IMAGE
`)
}

// TFJob is a kubeflow.org/v1 TFJob of one Worker.
func TFJob(namespace, name string) *unstructured.Unstructured {
	return workload(namespace, name, `
apiVersion: kubeflow.org/v1
kind: TFJob
spec:
  tfReplicaSpecs:
    Worker:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: tensorflow
            image: $IMAGE
`)
}

// XGBoostJob is a kubeflow.org/v1 XGBoostJob of one Master.
func XGBoostJob(namespace, name string) *unstructured.Unstructured {
	return workload(namespace, name, `
apiVersion: kubeflow.org/v1
kind: XGBoostJob
spec:
  xgbReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: xgboost
            image: $IMAGE
`)
}

// JAXJob is a kubeflow.org/v1 JAXJob of one Worker.
func JAXJob(namespace, name string) *unstructured.Unstructured {
	return workload(namespace, name, `
apiVersion: kubeflow.org/v1
kind: JAXJob
spec:
  jaxReplicaSpecs:
    Worker:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: jax
            image: $IMAGE
`)
}

// MPIJob is a kubeflow.org/v2beta1 MPIJob (the MPI operator v2's) of a Launcher and one
// Worker, an MPIJob's smallest useful shape.
func MPIJob(namespace, name string) *unstructured.Unstructured {
	return workload(namespace, name, `
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
spec:
  slotsPerWorker: 1
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - name: launcher
            image: $IMAGE
    Worker:
      replicas: 1
      template:
        spec:
          containers:
          - name: worker
            image: $IMAGE
`)
}

// TrainJob is a trainer.kubeflow.org/v1alpha1 TrainJob of one node, naming the
// ClusterTrainingRuntime torch-distributed (which need not exist: no webhook checks it).
func TrainJob(namespace, name string) *unstructured.Unstructured {
	return workload(namespace, name, `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    numNodes: 1
`)
}

// rayClusterSpec is a RayCluster's spec (also a RayJob's rayClusterSpec and a RayService's
// rayClusterConfig): a head and one group of one worker. Indented for its place in each.
const rayClusterSpec = `
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-head
            image: $IMAGE
    workerGroupSpecs:
    - groupName: workers
      replicas: 1
      minReplicas: 1
      maxReplicas: 1
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-worker
            image: $IMAGE
`

// RayCluster is a ray.io/v1 RayCluster of a head and one worker.
func RayCluster(namespace, name string) *unstructured.Unstructured {
	return workload(namespace, name, `
apiVersion: ray.io/v1
kind: RayCluster
spec:`+strings.ReplaceAll(rayClusterSpec, "\n    ", "\n  "))
}

// RayJob is a ray.io/v1 RayJob running its entrypoint on a cluster of a head and one worker.
func RayJob(namespace, name string) *unstructured.Unstructured {
	return workload(namespace, name, `
apiVersion: ray.io/v1
kind: RayJob
spec:
  entrypoint: python -c "print(1)"
  rayClusterSpec:`+rayClusterSpec)
}

// RayService is a ray.io/v1 RayService on a cluster of a head and one worker.
func RayService(namespace, name string) *unstructured.Unstructured {
	return workload(namespace, name, `
apiVersion: ray.io/v1
kind: RayService
spec:
  rayClusterConfig:`+rayClusterSpec)
}

// JobSet is a jobset.x-k8s.io/v1alpha2 JobSet of one replicated Job of one pod.
func JobSet(namespace, name string) *unstructured.Unstructured {
	return workload(namespace, name, `
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
spec:
  replicatedJobs:
  - name: workers
    replicas: 1
    template:
      spec:
        parallelism: 1
        completions: 1
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: worker
              image: $IMAGE
`)
}

// LeaderWorkerSet is a leaderworkerset.x-k8s.io/v1 LeaderWorkerSet of one group of two pods,
// a leader and a worker from the same template.
func LeaderWorkerSet(namespace, name string) *unstructured.Unstructured {
	return workload(namespace, name, `
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      spec:
        containers:
        - name: worker
          image: $IMAGE
`)
}

// Notebook is a kubeflow.org/v1 Notebook; its container is named after it, as the Notebook
// controller expects.
func Notebook(namespace, name string) *unstructured.Unstructured {
	return workload(namespace, name, `
apiVersion: kubeflow.org/v1
kind: Notebook
spec:
  template:
    spec:
      containers:
      - name: $NAME
        image: $IMAGE
`)
}

// KnativeService is a serving.knative.dev/v1 Service of one container.
func KnativeService(namespace, name string) *unstructured.Unstructured {
	return workload(namespace, name, `
apiVersion: serving.knative.dev/v1
kind: Service
spec:
  template:
    spec:
      containers:
      - image: $IMAGE
`)
}

// KnativeConfiguration is a serving.knative.dev/v1 Configuration of one container.
func KnativeConfiguration(namespace, name string) *unstructured.Unstructured {
	return workload(namespace, name, `
apiVersion: serving.knative.dev/v1
kind: Configuration
spec:
  template:
    spec:
      containers:
      - image: $IMAGE
`)
}

// KnativeRevision is a serving.knative.dev/v1 Revision of one container.
func KnativeRevision(namespace, name string) *unstructured.Unstructured {
	return workload(namespace, name, `
apiVersion: serving.knative.dev/v1
kind: Revision
spec:
  containers:
  - image: $IMAGE
`)
}

// ArgoWorkflow is an argoproj.io/v1alpha1 Workflow of one container step: a wrapper, whose
// pods the pod grouper groups by what it wraps.
func ArgoWorkflow(namespace, name string) *unstructured.Unstructured {
	return workload(namespace, name, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
spec:
  entrypoint: main
  templates:
  - name: main
    container:
      image: $IMAGE
      command: [echo, done]
`)
}

// Workloads is one object of every kind above, each named name.
func Workloads(namespace, name string) []*unstructured.Unstructured {
	var all []*unstructured.Unstructured
	for _, newWorkload := range []func(namespace, name string) *unstructured.Unstructured{
		PyTorchJob, TFJob, XGBoostJob, JAXJob, MPIJob, TrainJob,
		RayCluster, RayJob, RayService, JobSet, LeaderWorkerSet, Notebook,
		KnativeService, KnativeConfiguration, KnativeRevision, ArgoWorkflow,
	} {
		all = append(all, newWorkload(namespace, name))
	}
	return all
}

// workload parses a manifest, $NAME and $IMAGE replaced, and sets its namespace and name.
func workload(namespace, name, manifest string) *unstructured.Unstructured {
	manifest = strings.NewReplacer("$NAME", name, "$IMAGE", image).Replace(manifest)
	o := &unstructured.Unstructured{}
	// Through JSON into Unstructured, so that whole numbers are int64, as read from the API server.
	data, err := yaml.YAMLToJSON([]byte(manifest))
	if err == nil {
		err = o.UnmarshalJSON(data)
	}
	if err != nil {
		panic(fmt.Sprintf("testenv: a workload manifest does not parse: %v\n%s", err, manifest))
	}
	o.SetNamespace(namespace)
	o.SetName(name)
	return o
}
