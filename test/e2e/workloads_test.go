package e2e

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
	"github.com/kai-minruntime/kai-scheduler/test/testenv"
)

// workloadMinRuntime is the reclaim min-runtime every spec below runs with, the scheduler
// configuration's default (workloadConfig): short, so that a spec waits for it a second or two.
const workloadMinRuntime = 2 * time.Second

// workloadConfig is the built-in configuration with a default reclaim min-runtime of
// workloadMinRuntime.
var workloadConfig = fmt.Sprintf(`actions: "allocate, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: proportion
  - name: minruntime
    arguments: {defaultReclaimMinRuntime: %s}
  - name: predicates
  - name: nodeplacement
`, workloadMinRuntime)

// Each kind's workload is made as its controller would make it (no operator runs here): its
// top owner, the objects between it and the pods, and the pods, with the same controller
// owner references and the labels the controllers set. Every pod asks for one GPU. The
// serving kinds (Deployment, Knative, Notebook) default to a priority class of 100 or more,
// which is not preemptible and so may not borrow over its queue's quota: they are labelled
// kai.scheduler/preemptibility=preemptible, as a user lending them out would.
var _ = Describe("Workloads of every kind", Label("workloads"), func() {
	DescribeTable("get the PodGroup upstream makes, bind as their gang or not at all, and are reclaimed (a gang whole) only after their min-runtime",
		func(short string, pods int, build func(w *workload) want) { playWorkload(short, pods, build) },

		Entry("batch Job: a gang of its parallelism", "job", 3, func(w *workload) want {
			job := w.top(batchJob(w.ns, "sweep", 3))
			w.pods(3, "sweep", job, "")
			return want{owner: job, minMember: 3, priority: "train"}
		}),
		Entry("CronJob: each Job a gang of its parallelism, in the CronJob's queue", "cron", 2, func(w *workload) want {
			cron := w.top(w.manifest("nightly", `
apiVersion: batch/v1
kind: CronJob
spec:
  schedule: "0 0 1 1 *"
  jobTemplate:
    spec:
      parallelism: 2
      template:
        spec:
          restartPolicy: Never
          containers: [{name: main, image: busybox}]
`))
			job := w.owned(batchJob(w.ns, "nightly-29000000", 2), cron)
			w.pods(2, "nightly-29000000", job, "")
			return want{owner: job, minMember: 2, priority: "train"}
		}),
		Entry("JobSet: a sub-group per replicated job and per replica, all replicated jobs ready", "jobset", 3, func(w *workload) want {
			js := w.top(w.manifest("mesh", `
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
spec:
  replicatedJobs:
  - name: leader
    replicas: 1
    template: {spec: {parallelism: 1, completions: 1, template: {spec: {restartPolicy: Never, containers: [{name: main, image: busybox}]}}}}
  - name: workers
    replicas: 2
    template: {spec: {parallelism: 1, completions: 1, template: {spec: {restartPolicy: Never, containers: [{name: main, image: busybox}]}}}}
`))
			w.jobSetJob(js, "leader", 0, 1)
			w.jobSetJob(js, "workers", 0, 1)
			w.jobSetJob(js, "workers", 1, 1)
			return want{owner: js, minSubGroup: ptr.To[int32](2), priority: "train", subGroups: []v2alpha2.SubGroup{
				{Name: "leader", MinSubGroup: ptr.To[int32](1)},
				{Name: "leader-replica-0", MinMember: 1, Parent: ptr.To("leader")},
				{Name: "workers", MinSubGroup: ptr.To[int32](2)},
				{Name: "workers-replica-0", MinMember: 1, Parent: ptr.To("workers")},
				{Name: "workers-replica-1", MinMember: 1, Parent: ptr.To("workers")},
			}}
		}),
		Entry("TrainJob: the gang of the JobSet the trainer makes, standing for the TrainJob", "trainjob", 2, func(w *workload) want {
			tj := testenv.TrainJob(w.ns, "finetune")
			Expect(unstructured.SetNestedField(tj.Object, int64(2), "spec", "trainer", "numNodes")).To(Succeed())
			tj = w.top(tj)
			js := w.owned(w.manifest("finetune", `
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
spec:
  replicatedJobs:
  - name: node
    replicas: 1
    template: {spec: {parallelism: 2, completions: 2, template: {spec: {restartPolicy: Never, containers: [{name: node, image: busybox}]}}}}
`), tj)
			w.jobSetJob(js, "node", 0, 2)
			return want{owner: tj, minSubGroup: ptr.To[int32](1), priority: "train", subGroups: []v2alpha2.SubGroup{
				{Name: "node", MinSubGroup: ptr.To[int32](1)},
				{Name: "node-replica-0", MinMember: 2, Parent: ptr.To("node")},
			}}
		}),
		Entry("PyTorchJob: master and workers, a sub-group each", "pytorch", 3, func(w *workload) want {
			job := testenv.PyTorchJob(w.ns, "ddp")
			setReplicas(job, 2, "pytorchReplicaSpecs", "Worker", "pytorch")
			job = w.top(job)
			w.kubeflowPods(job, "master", 1, "master")
			w.kubeflowPods(job, "worker", 2, "worker")
			return want{owner: job, minMember: 3, priority: "train", subGroups: []v2alpha2.SubGroup{
				{Name: "master", MinMember: 1}, {Name: "worker", MinMember: 2}}}
		}),
		Entry("TFJob: one gang of all its replicas", "tf", 3, func(w *workload) want {
			job := testenv.TFJob(w.ns, "estimator")
			setReplicas(job, 2, "tfReplicaSpecs", "Worker", "tensorflow")
			setReplicas(job, 1, "tfReplicaSpecs", "PS", "tensorflow")
			job = w.top(job)
			w.kubeflowPods(job, "ps", 1, "")
			w.kubeflowPods(job, "worker", 2, "")
			return want{owner: job, minMember: 3, priority: "train"}
		}),
		Entry("XGBoostJob: one gang of all its replicas", "xgb", 2, func(w *workload) want {
			job := testenv.XGBoostJob(w.ns, "boost")
			setReplicas(job, 1, "xgbReplicaSpecs", "Worker", "xgboost")
			job = w.top(job)
			w.kubeflowPods(job, "master", 1, "")
			w.kubeflowPods(job, "worker", 1, "")
			return want{owner: job, minMember: 2, priority: "train"}
		}),
		Entry("JAXJob: one gang of all its replicas", "jax", 2, func(w *workload) want {
			job := testenv.JAXJob(w.ns, "pjit")
			setReplicas(job, 2, "jaxReplicaSpecs", "Worker", "jax")
			job = w.top(job)
			w.kubeflowPods(job, "worker", 2, "")
			return want{owner: job, minMember: 2, priority: "train"}
		}),
		Entry("MPIJob v2beta1: launcher and workers, created at startup", "mpi", 3, func(w *workload) want {
			job := testenv.MPIJob(w.ns, "allreduce")
			setReplicas(job, 2, "mpiReplicaSpecs", "Worker", "worker")
			job = w.top(job)
			w.kubeflowPods(job, "launcher", 1, "")
			w.kubeflowPods(job, "worker", 2, "")
			return want{owner: job, minMember: 3, priority: "train"}
		}),
		Entry("RayCluster: the head and the workers, a sub-group per group", "raycluster", 3, func(w *workload) want {
			cluster := testenv.RayCluster(w.ns, "ray")
			setRayWorkers(cluster, 2, "spec")
			cluster = w.top(cluster)
			w.rayPods(cluster, 2)
			return want{owner: cluster, minMember: 3, priority: "train", subGroups: raySubGroups}
		}),
		Entry("RayJob: its cluster's gang, standing for the RayJob", "rayjob", 3, func(w *workload) want {
			job := testenv.RayJob(w.ns, "batch")
			setRayWorkers(job, 2, "spec", "rayClusterSpec")
			job = w.top(job)
			cluster := w.owned(rayClusterOf(job, "batch-raycluster-h8x2q", "spec", "rayClusterSpec"), job)
			w.rayPods(cluster, 2)
			return want{owner: job, minMember: 3, priority: "train", subGroups: raySubGroups}
		}),
		Entry("RayService: a gang per RayCluster it runs", "rayservice", 3, func(w *workload) want {
			svc := testenv.RayService(w.ns, "serve")
			setRayWorkers(svc, 2, "spec", "rayClusterConfig")
			svc = w.top(svc)
			cluster := w.owned(rayClusterOf(svc, "serve-raycluster-q7v4k", "spec", "rayClusterConfig"), svc)
			w.rayPods(cluster, 2)
			return want{owner: cluster, minMember: 3, priority: "train", subGroups: raySubGroups}
		}),
		Entry("LeaderWorkerSet: a gang per group, its leader and workers", "lws", 3, func(w *workload) want {
			lws := testenv.LeaderWorkerSet(w.ns, "llm")
			Expect(unstructured.SetNestedField(lws.Object, int64(3), "spec", "leaderWorkerTemplate", "size")).To(Succeed())
			lws = w.top(lws)
			lwsLabels := func(worker int) map[string]string {
				return map[string]string{"leaderworkerset.sigs.k8s.io/name": "llm",
					"leaderworkerset.sigs.k8s.io/group-index": "0", "leaderworkerset.sigs.k8s.io/worker-index": fmt.Sprint(worker)}
			}
			leaders := w.owned(statefulSet(w.ns, "llm", 1), lws)
			leader := w.pod("llm-0", leaders, "leader", lwsLabels(0))
			workers := w.owned(statefulSet(w.ns, "llm-0", 2), leader)
			w.pod("llm-0-1", workers, "workers", lwsLabels(1))
			w.pod("llm-0-2", workers, "workers", lwsLabels(2))
			return want{owner: lws, suffix: "-group-0", minMember: 3, priority: "train", subGroups: []v2alpha2.SubGroup{
				{Name: "leader", MinMember: 1}, {Name: "workers", MinMember: 2}}}
		}),
		Entry("Deployment: one PodGroup of gang one across its ReplicaSets, at inference", "deploy", 3, func(w *workload) want {
			deploy := w.top(w.manifest("api", `
apiVersion: apps/v1
kind: Deployment
metadata:
  labels: {kai.scheduler/preemptibility: preemptible}
spec:
  replicas: 3
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: main, image: busybox}]}
`))
			rs := w.owned(replicaSet(w.ns, "api-7d9f8b6c5d", 3), deploy)
			w.pods(3, "api-7d9f8b6c5d", rs, "")
			return want{owner: deploy, minMember: 1, priority: "inference", preemptible: true, gangOfOne: true}
		}),
		Entry("StatefulSet: one PodGroup of gang one", "sts", 3, func(w *workload) want {
			sts := w.top(statefulSet(w.ns, "shard", 3))
			w.pods(3, "shard", sts, "")
			return want{owner: sts, minMember: 1, priority: "train", gangOfOne: true}
		}),
		Entry("Notebook: its one pod, at build priority", "notebook", 1, func(w *workload) want {
			nb := testenv.Notebook(w.ns, "lab")
			nb.SetLabels(map[string]string{scheduling.PreemptibilityLabel: "preemptible"})
			nb = w.top(nb)
			sts := w.owned(statefulSet(w.ns, "lab", 1), nb)
			w.pod("lab-0", sts, "", map[string]string{"notebook-name": "lab", "statefulset": "lab"})
			return want{owner: nb, minMember: 1, priority: "build", preemptible: true, gangOfOne: true}
		}),
		Entry("Knative Service: a gang per Revision, of its min-scale, at inference", "knative", 2, func(w *workload) want {
			minScale := map[string]string{"autoscaling.knative.dev/min-scale": "2"}
			svc := testenv.KnativeService(w.ns, "predict")
			svc.SetLabels(map[string]string{scheduling.PreemptibilityLabel: "preemptible"})
			Expect(unstructured.SetNestedStringMap(svc.Object, minScale, "spec", "template", "metadata", "annotations")).To(Succeed())
			svc = w.top(svc)
			service := map[string]string{"serving.knative.dev/service": "predict"}
			config := testenv.KnativeConfiguration(w.ns, "predict")
			config.SetLabels(service)
			config = w.owned(config, svc)
			revision := testenv.KnativeRevision(w.ns, "predict-00001")
			revision.SetLabels(map[string]string{"serving.knative.dev/service": "predict", "serving.knative.dev/configuration": "predict"})
			revision.SetAnnotations(minScale)
			revision = w.owned(revision, config)
			deploy := w.owned(w.manifest("predict-00001-deployment", `
apiVersion: apps/v1
kind: Deployment
spec:
  replicas: 2
  selector: {matchLabels: {serving.knative.dev/revision: predict-00001}}
  template:
    metadata: {labels: {serving.knative.dev/revision: predict-00001}}
    spec: {containers: [{name: user-container, image: busybox}]}
`), revision)
			rs := w.owned(replicaSet(w.ns, "predict-00001-deployment-5c8d7f9b4", 2), deploy)
			w.pods(2, "predict-00001-deployment-5c8d7f9b4", rs, "")
			return want{owner: revision, minMember: 2, priority: "inference", preemptible: true}
		}),
		Entry("Spark: the driver and its executors, by the application's selector", "spark", 3, func(w *workload) want {
			app := "spark-5f2c1e8a9b7d4c3e"
			labels := func(role string) map[string]string {
				return map[string]string{"spark-app-selector": app, "spark-role": role, scheduling.QueueLabel: w.queue}
			}
			driver := w.pod("pi-driver", nil, "", labels("driver"))
			w.pod("pi-exec-1", driver, "", labels("executor"))
			w.pod("pi-exec-2", driver, "", labels("executor"))
			return want{owner: driver, name: app, minMember: 1, priority: "train", gangOfOne: true}
		}),
		Entry("Argo Workflow: grouped by the Job it wraps, in the Job's queue", "argo", 2, func(w *workload) want {
			wf := create(testenv.ArgoWorkflow(w.ns, "pipeline"))
			job := w.owned(w.queued(batchJob(w.ns, "pipeline-train", 2)), wf)
			w.pods(2, "pipeline-train", job, "")
			return want{owner: job, minMember: 2, priority: "train"}
		}),
		// As upstream copies a skipped Workflow's labels onto the workload it wraps, a
		// Workflow labelled with a queue puts its Job there.
		Entry("Argo Workflow: in the queue its Workflow is labelled with, as upstream", "argo-labels", 2, func(w *workload) want {
			wf := w.top(testenv.ArgoWorkflow(w.ns, "pipeline"))
			job := w.owned(batchJob(w.ns, "pipeline-train", 2), wf)
			w.pods(2, "pipeline-train", job, "")
			return want{owner: job, minMember: 2, priority: "train"}
		}),
	)
})

// want is the PodGroup a kind's workload must get.
type want struct {
	// owner is the object the PodGroup stands for (its owner), named pg-<owner>-<uid><suffix>
	// unless name is set.
	owner        client.Object
	suffix, name string
	minMember    int32
	minSubGroup  *int32
	subGroups    []v2alpha2.SubGroup
	priority     string
	preemptible  bool
	// gangOfOne: each pod runs on its own (a PodGroup of gang one for all the workload's
	// pods), so the workload is reclaimed pod by pod (see playWorkload).
	gangOfOne bool
}

func (w want) group() string {
	if w.name != "" {
		return w.name
	}
	return "pg-" + w.owner.GetName() + "-" + string(w.owner.GetUID()) + w.suffix
}

// workload makes one kind's workload in namespace ns, for queue: its objects, and its pods
// with the sub-group each must be labelled with.
type workload struct {
	ns, queue string
	subGroups map[string]string // pod name → sub-group
	order     []string          // pod names, as created
}

// manifest parses an object of the workload's namespace, named name.
func (w *workload) manifest(name, manifest string) *unstructured.Unstructured {
	data, err := yaml.YAMLToJSON([]byte(manifest))
	Expect(err).NotTo(HaveOccurred())
	o := &unstructured.Unstructured{}
	Expect(o.UnmarshalJSON(data)).To(Succeed())
	o.SetNamespace(w.ns)
	o.SetName(name)
	return o
}

// top creates the workload's top owner, labelled with its queue, and returns it as created.
func (w *workload) top(o *unstructured.Unstructured) *unstructured.Unstructured {
	return create(w.queued(o))
}

// queued labels o with the workload's queue.
func (w *workload) queued(o *unstructured.Unstructured) *unstructured.Unstructured {
	labels := o.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[scheduling.QueueLabel] = w.queue
	o.SetLabels(labels)
	return o
}

// owned creates o controlled by owner, as owner's controller makes it.
func (w *workload) owned(o *unstructured.Unstructured, owner client.Object) *unstructured.Unstructured {
	o.SetOwnerReferences([]metav1.OwnerReference{controllerRef(owner)})
	return create(o)
}

// pod creates a pod asking for one GPU, controlled by owner (none: nil), with labels; it
// must be labelled with subGroup.
func (w *workload) pod(name string, owner client.Object, subGroup string, labels map[string]string) *v1.Pod {
	p := gpuPod(w.ns, name, 1)
	for k, v := range labels {
		p.Label(k, v)
	}
	pod := p.Obj()
	if owner != nil {
		pod.OwnerReferences = []metav1.OwnerReference{controllerRef(owner)}
	}
	w.subGroups[name] = subGroup
	w.order = append(w.order, name)
	return create(pod)
}

// pods creates n pods <prefix>-<i> of owner, labelled with subGroup.
func (w *workload) pods(n int, prefix string, owner client.Object, subGroup string) {
	for i := range n {
		w.pod(fmt.Sprintf("%s-%d", prefix, i), owner, subGroup, nil)
	}
}

// kubeflowPods creates a Kubeflow training job's n pods of a replica type, as the operator
// names and labels them.
func (w *workload) kubeflowPods(job client.Object, rtype string, n int, subGroup string) {
	for i := range n {
		w.pod(fmt.Sprintf("%s-%s-%d", job.GetName(), rtype, i), job, subGroup, map[string]string{
			"training.kubeflow.org/job-name": job.GetName(), "training.kubeflow.org/replica-type": rtype,
			"training.kubeflow.org/replica-index": fmt.Sprint(i)})
	}
}

// jobSetJob creates replica index of replicated job rj of JobSet js, a Job of pods pods,
// and its pods, labelled as the JobSet controller labels them.
func (w *workload) jobSetJob(js client.Object, rj string, index, pods int) {
	name := fmt.Sprintf("%s-%s-%d", js.GetName(), rj, index)
	labels := map[string]string{"jobset.sigs.k8s.io/jobset-name": js.GetName(),
		"jobset.sigs.k8s.io/replicatedjob-name": rj, "jobset.sigs.k8s.io/job-index": fmt.Sprint(index)}
	job := batchJob(w.ns, name, pods)
	job.SetLabels(labels)
	job = w.owned(job, js)
	for i := range pods {
		w.pod(fmt.Sprintf("%s-%d", name, i), job, fmt.Sprintf("%s-replica-%d", rj, index), labels)
	}
}

// rayPods creates a Ray cluster's head and workers of group "workers", as KubeRay labels them.
func (w *workload) rayPods(cluster client.Object, workers int) {
	labels := func(nodeType, group string) map[string]string {
		return map[string]string{"ray.io/cluster": cluster.GetName(), "ray.io/node-type": nodeType, "ray.io/group": group}
	}
	w.pod(cluster.GetName()+"-head-x2k9d", cluster, "headgroup", labels("head", "headgroup"))
	for i := range workers {
		w.pod(fmt.Sprintf("%s-workers-worker-%d", cluster.GetName(), i), cluster, "workers", labels("worker", "workers"))
	}
}

var raySubGroups = []v2alpha2.SubGroup{{Name: "headgroup", MinMember: 1}, {Name: "workers", MinMember: 2}}

// controllerRef is a controller owner reference to owner, whose kind it reads from the object
// (an unstructured one carries it) or the client's scheme.
func controllerRef(owner client.Object) metav1.OwnerReference {
	gvk, err := k8sClient.GroupVersionKindFor(owner)
	Expect(err).NotTo(HaveOccurred())
	return *metav1.NewControllerRef(owner, gvk)
}

// batchJob is a batch Job of parallelism pods (completions unset), as an object to create.
func batchJob(namespace, name string, parallelism int) *unstructured.Unstructured {
	return (&workload{ns: namespace}).manifest(name, fmt.Sprintf(`
apiVersion: batch/v1
kind: Job
spec:
  parallelism: %d
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox}]
`, parallelism))
}

// statefulSet is a StatefulSet of replicas pods.
func statefulSet(namespace, name string, replicas int) *unstructured.Unstructured {
	return (&workload{ns: namespace}).manifest(name, fmt.Sprintf(`
apiVersion: apps/v1
kind: StatefulSet
spec:
  replicas: %d
  serviceName: %s
  selector: {matchLabels: {statefulset: %s}}
  template:
    metadata: {labels: {statefulset: %s}}
    spec: {containers: [{name: main, image: busybox}]}
`, replicas, name, name, name))
}

// replicaSet is a ReplicaSet of replicas pods.
func replicaSet(namespace, name string, replicas int) *unstructured.Unstructured {
	return (&workload{ns: namespace}).manifest(name, fmt.Sprintf(`
apiVersion: apps/v1
kind: ReplicaSet
spec:
  replicas: %d
  selector: {matchLabels: {replicaset: %s}}
  template:
    metadata: {labels: {replicaset: %s}}
    spec: {containers: [{name: main, image: busybox}]}
`, replicas, name, name))
}

// setReplicas sets a Kubeflow job's replicas of a replica type, adding the type (its
// container named container) when the job has none.
func setReplicas(job *unstructured.Unstructured, n int64, specs, rtype, container string) {
	path := []string{"spec", specs, rtype}
	if _, found, _ := unstructured.NestedMap(job.Object, path...); !found {
		Expect(unstructured.SetNestedField(job.Object, map[string]any{
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": container, "image": "busybox"}}}}}, path...)).To(Succeed())
	}
	Expect(unstructured.SetNestedField(job.Object, n, append(path, "replicas")...)).To(Succeed())
}

// setRayWorkers sizes the one worker group of the Ray cluster spec at path to n replicas,
// minReplicas and maxReplicas.
func setRayWorkers(o *unstructured.Unstructured, n int64, path ...string) {
	groups, _, _ := unstructured.NestedSlice(o.Object, append(path, "workerGroupSpecs")...)
	Expect(groups).To(HaveLen(1))
	group := groups[0].(map[string]any)
	group["replicas"], group["minReplicas"], group["maxReplicas"] = n, n, n
	Expect(unstructured.SetNestedSlice(o.Object, groups, append(path, "workerGroupSpecs")...)).To(Succeed())
}

// rayClusterOf is the RayCluster named name that a RayJob or RayService makes of its cluster
// spec at path.
func rayClusterOf(o *unstructured.Unstructured, name string, path ...string) *unstructured.Unstructured {
	spec, found, err := unstructured.NestedMap(o.Object, path...)
	Expect(err).NotTo(HaveOccurred())
	Expect(found).To(BeTrue())
	cluster := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "ray.io/v1", "kind": "RayCluster", "spec": spec}}
	cluster.SetNamespace(o.GetNamespace())
	cluster.SetName(name)
	return cluster
}

// playWorkload runs one kind's spec in namespace wl-<short>: the workload borrows GPUs in a
// queue of no quota, on a node of as many GPUs as it has pods (total), one of them taken at
// first by a pod of the owner's queue. (One node, there and known to KWOK before any pod of
// the workload can bind: a pod bound to a node KWOK has not seen yet may never be started.)
//   - It gets the PodGroup its kind's rule makes, and every pod the PodGroup's name and its
//     sub-group's label.
//   - A gang binds nothing while one GPU is missing; the pods of a gang of one bind as they
//     fit.
//   - Once the GPU is free, all its pods run; then the owner's queue, owed its quota, wants
//     GPUs back. A gang: the owner asks for one GPU; no pod of the workload goes before its
//     reclaim min-runtime has passed since its start stamp, and then the whole gang goes. A
//     gang of one (Deployment, StatefulSet, Notebook, Spark): the workload has more pods than
//     its gang, so the scheduler takes it for elastic and protects only its minimum, one pod
//     (the surplus stays reclaimable, by minruntime's design); the owner asks for every GPU,
//     and gets the last one only once min-runtime has passed.
func playWorkload(short string, total int, build func(w *workload) want) {
	ns := "wl-" + short
	borrower, owner := ns+"-borrower", ns+"-owner"
	createNamespace(ns)
	create(builders.MakeQueue(borrower).GPUQuota(0).Obj())
	DeferCleanup(startScheduler(schedulerOptionsWith(workloadConfig)))

	create(builders.MakeQueue(owner).GPUQuota(float64(total)).Obj())
	createNode(ns+"-node", int64(total))
	createJob(builders.MakePodGroup(ns, "filler").Queue(owner).PriorityClass("train"), 1, 1)
	Eventually(runningPods(ns, "filler")).Should(Equal(1))

	w := &workload{ns: ns, queue: borrower, subGroups: map[string]string{}}
	expected := build(w)
	Expect(w.order).To(HaveLen(total), "the entry's count of pods")
	group := expected.group()
	cleanUp(builders.MakePodGroup(ns, group).Obj())
	DeferCleanup(func() { // runs before the objects go: on a failure, what the spec saw
		if !CurrentSpecReport().Failed() {
			return
		}
		pg := &v2alpha2.PodGroup{}
		_ = k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: group}, pg)
		data, _ := yaml.Marshal(pg)
		GinkgoWriter.Printf("PodGroup %s:\n%s\n", group, data)
		pods := &v1.PodList{}
		_ = k8sClient.List(suiteCtx, pods, client.InNamespace(ns))
		for _, p := range pods.Items {
			GinkgoWriter.Printf("pod %s: node %q, phase %s, deleted %v, labels %v, annotations %v\n",
				p.Name, p.Spec.NodeName, p.Status.Phase, p.DeletionTimestamp != nil, p.Labels, p.Annotations)
		}
	})

	By("a: the PodGroup of the kind's rule, and its pods labelled for it")
	Eventually(func(g Gomega) {
		pg := &v2alpha2.PodGroup{}
		g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: group}, pg)).To(Succeed())
		g.Expect(pg.OwnerReferences).To(HaveExactElements(HaveField("UID", expected.owner.GetUID())))
		g.Expect(pg.Spec.Queue).To(Equal(borrower))
		g.Expect(pg.Spec.PriorityClassName).To(Equal(expected.priority))
		g.Expect(pg.Spec.MinMember).To(Equal(expected.minMember))
		g.Expect(pg.Spec.MinSubGroup).To(Equal(expected.minSubGroup))
		g.Expect(pg.Spec.SubGroups).To(Equal(expected.subGroups))
		if expected.preemptible {
			g.Expect(pg.Spec.Preemptibility).To(Equal(v2alpha2.Preemptible))
		}
		for _, name := range w.order {
			pod := &v1.Pod{}
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: name}, pod)).To(Succeed())
			g.Expect(pod.Annotations).To(HaveKeyWithValue(scheduling.PodGroupNameAnnotation, group), "pod %s", name)
			if sg := w.subGroups[name]; sg != "" {
				g.Expect(pod.Labels).To(HaveKeyWithValue(scheduling.SubGroupLabel, sg), "pod %s", name)
			} else {
				g.Expect(pod.Labels).NotTo(HaveKey(scheduling.SubGroupLabel), "pod %s", name)
			}
		}
	}).Should(Succeed())

	By(fmt.Sprintf("b: %d free GPUs for %d pods", total-1, total))
	if expected.gangOfOne {
		Eventually(boundPods(ns, group)).Should(Equal(total - 1))
		Consistently(boundPods(ns, group), "1s").Should(Equal(total-1), "a gang of one: the pods that fit bind, the others wait")
	} else {
		Consistently(boundPods(ns, group), "1s").Should(BeZero(), "the gang does not fit: nothing binds")
	}
	zero := int64(0)
	Expect(k8sClient.Delete(suiteCtx, gpuPod(ns, "filler-0", 1).Obj(), &client.DeleteOptions{GracePeriodSeconds: &zero})).To(Succeed())
	Eventually(runningPods(ns, group)).Should(Equal(total))

	By("c: protected for its min-runtime, then reclaimed")
	protectedUntil := startStamp(k8sClient, ns, group).Add(workloadMinRuntime)
	window := time.Until(protectedUntil) - 300*time.Millisecond
	Expect(window).To(BeNumerically(">", 0), "the workload's protection ended before the spec could watch it")
	if expected.gangOfOne {
		createJob(builders.MakePodGroup(ns, "owned").Queue(owner).PriorityClass("train").MinMember(int32(total)), total, 1)
		Consistently(runningPods(ns, group), window).Should(BeNumerically(">=", 1),
			"the workload's minimum, one pod, runs until its min-runtime has passed")
		Eventually(runningPods(ns, "owned")).Should(Equal(total))
		Expect(time.Now()).To(BeTemporally(">=", protectedUntil), "the owner got the workload's last GPU only after its min-runtime")
		Eventually(boundPods(ns, group)).Should(BeZero())
		return
	}
	createJob(builders.MakePodGroup(ns, "owned").Queue(owner).PriorityClass("train"), 1, 1)
	Consistently(runningPods(ns, group), window).Should(Equal(total),
		"no pod of the workload goes before its min-runtime")
	Eventually(runningPods(ns, "owned")).Should(Equal(1))
	expectEvictedAtOrAfter(ns, group, protectedUntil)
	Eventually(boundPods(ns, group)).Should(BeZero(), "the whole gang goes, not only the pod the owner needs")
}
