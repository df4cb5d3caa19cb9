package input_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/input"
	"github.com/kai-minruntime/kai-scheduler/pkg/sim/internal/simtest"
)

// owned is a pod of kai-scheduler in namespace default, controlled by the workload of that
// apiVersion, kind and name, with the labels (a YAML mapping's inside) and spec's extra
// fields.
func owned(name, apiVersion, kind, owner, labels, extra string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  labels: {%s}
  ownerReferences: [{apiVersion: %s, kind: %s, name: %s, controller: true}]
spec: {%scontainers: [{name: main, resources: {requests: {nvidia.com/gpu: "1"}}}]}
---
`, name, labels, apiVersion, kind, owner, extra)
}

// pyTorchJob is a PyTorchJob of a master and workers, in queue q, with the annotations (a YAML
// mapping's inside), and its pods.
func pyTorchJob(name string, workers int, annotations string) string {
	doc := fmt.Sprintf(`apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: %s
  labels: {kai.scheduler/queue: q}
  annotations: {%s}
spec:
  pytorchReplicaSpecs:
    Master: {replicas: 1, template: {spec: {containers: [{name: pytorch}]}}}
    Worker: {replicas: %d, template: {spec: {containers: [{name: pytorch}]}}}
---
`, name, annotations, workers)
	doc += owned(name+"-master-0", "kubeflow.org/v1", "PyTorchJob", name, "training.kubeflow.org/replica-type: master", "")
	for i := range workers {
		doc += owned(fmt.Sprintf("%s-worker-%d", name, i), "kubeflow.org/v1", "PyTorchJob", name, "training.kubeflow.org/replica-type: worker", "")
	}
	return doc
}

func parseJobs(t *testing.T, scenario string) *input.Scenario {
	t.Helper()
	sc, err := input.Parse([]byte(scenario))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// describeJobs is each job as "namespace/name workload gang N priority P: pod:sub-group ...".
func describeJobs(sc *input.Scenario) string {
	var jobs []string
	for _, job := range sc.Jobs {
		var pods []string
		for _, pod := range job.Pods {
			if pod.Annotations[scheduling.PodGroupNameAnnotation] != job.Group.Name {
				pods = append(pods, "MISNAMED")
			}
			pods = append(pods, pod.Name+":"+pod.Labels[scheduling.SubGroupLabel])
		}
		jobs = append(jobs, fmt.Sprintf("%s %s gang %d priority %s: %s", job.Key(), job.Group.Annotations["kai.scheduler/workload"],
			job.Group.Spec.MinMember, job.Group.Spec.PriorityClassName, strings.Join(pods, " ")))
	}
	return strings.Join(jobs, "\n")
}

// Workloads of kinds with a rule and without one are grouped by the pod grouper: a PyTorchJob
// into one gang of its master and workers, a Deployment's pods across its ReplicaSet into
// one PodGroup of the Deployment, a kind no rule knows into one PodGroup of its owner (gang
// one), each with the kind's default priority.
func TestWorkloadsAreGroupedByThePodGrouper(t *testing.T) {
	scenario := oneNodeOneQueue + pyTorchJob("train", 2, "sim.kai.scheduler/duration: 1h") + `apiVersion: apps/v1
kind: Deployment
metadata: {name: serve, labels: {kai.scheduler/queue: q}}
spec: {replicas: 2}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: serve-5d8f
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: serve, controller: true}]
---
` + owned("serve-5d8f-a", "apps/v1", "ReplicaSet", "serve-5d8f", "", "") + owned("serve-5d8f-b", "apps/v1", "ReplicaSet", "serve-5d8f", "", "") + `apiVersion: example.com/v1alpha1
kind: Widget
metadata: {name: w, labels: {kai.scheduler/queue: q}}
---
` + owned("w-0", "example.com/v1alpha1", "Widget", "w", "", "") + owned("w-1", "example.com/v1alpha1", "Widget", "w", "", "")
	sc := parseJobs(t, scenario)
	want := strings.Join([]string{
		"default/pg-serve Deployment.apps/serve gang 1 priority inference: serve-5d8f-a: serve-5d8f-b:",
		"default/pg-train PyTorchJob.kubeflow.org/train gang 3 priority train: train-master-0:master train-worker-0:worker train-worker-1:worker",
		"default/pg-w Widget.example.com/w gang 1 priority train: w-0: w-1:",
	}, "\n")
	if got := describeJobs(sc); got != want {
		t.Errorf("jobs:\n%s\nwant:\n%s", got, want)
	}
	// The PyTorchJob's annotation is its PodGroup's setting.
	for _, job := range sc.Jobs {
		if job.Key() == "default/pg-train" && job.Duration != time.Hour {
			t.Errorf("train's duration %s, want the hour annotated on the PyTorchJob", job.Duration)
		}
	}
	// A pod of a workload may still name its PodGroup, and the grouper leaves it alone.
	named := strings.Replace(scenario, "name: w-1\n", "name: w-1\n  annotations: {pod-group-name: pg-serve}\n", 1)
	if got := describeJobs(parseJobs(t, named)); !strings.Contains(got, "gang 1 priority inference: serve-5d8f-a: serve-5d8f-b: w-1:") {
		t.Errorf("w-1 named pg-serve:\n%s", got)
	}
}

// A pod whose owner is not in the file is an error naming the pod and the owner, however far
// up the owner is: the pod grouper, which reads owners, would group the pod alone.
func TestAPodsMissingOwnerIsAnError(t *testing.T) {
	scenario := oneNodeOneQueue + pyTorchJob("train", 3, "")
	missing := strings.Replace(scenario, "kind: PyTorchJob\nmetadata:\n  name: train\n", "kind: PyTorchJob\nmetadata:\n  name: other\n", 1)
	_, err := input.Parse([]byte(missing))
	want := "Pod default/train-master-0: its owner PyTorchJob train (apiVersion kubeflow.org/v1), named by metadata.ownerReferences, is not in the file: " +
		"add the workload's manifest, or name the pod's PodGroup with metadata.annotations.pod-group-name instead"
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant  %s", err, want)
	}

	deeper := oneNodeOneQueue + `apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: serve-5d8f
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: serve, controller: true}]
---
` + owned("serve-5d8f-a", "apps/v1", "ReplicaSet", "serve-5d8f", "", "")
	_, err = input.Parse([]byte(deeper))
	want = "Pod default/serve-5d8f-a: its owner ReplicaSet default/serve-5d8f names its own owner Deployment serve (apiVersion apps/v1) " +
		"in metadata.ownerReferences, which is not in the file: add that workload's manifest"
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant  %s", err, want)
	}
}

func TestWorkloadMistakesAreErrors(t *testing.T) {
	train := oneNodeOneQueue + pyTorchJob("train", 1, "sim.kai.scheduler/duration: 1h")
	for _, c := range []struct{ name, scenario, want string }{
		{"a field the grouper cannot read", strings.Replace(train, "Worker: {replicas: 1", "Worker: {replicas: -1", 1),
			"Pod default/train-master-0: the pod grouper reports WorkloadFieldInvalid (a Warning event on the pod, on a cluster): " +
				"PyTorchJob default/train: spec.pytorchReplicaSpecs.Worker.replicas is -1, not a count of pods"},
		{"an owner reference's UID", strings.Replace(train, "name: train, controller: true}", "name: train, uid: 1234, controller: true}", 1),
			"Pod default/train-master-0 names its owner PyTorchJob train (apiVersion kubeflow.org/v1) with UID 1234, and document 3 (PyTorchJob default/train) has UID none"},
		{"the same workload twice", train + strings.SplitN(pyTorchJob("train", 1, ""), "---", 2)[0],
			"document 6 (PyTorchJob default/train): the same PyTorchJob as document 3; names must be unique"},
		{"a misspelt simulation annotation", strings.Replace(train, "sim.kai.scheduler/duration: 1h", "sim.kai.scheduler/durration: 1h", 1),
			"document 3 (PyTorchJob train): line 16: metadata.annotations.sim.kai.scheduler/durration: kai-sim has no such annotation; did you mean sim.kai.scheduler/duration?"},
		{"a pod's annotation on a workload", strings.Replace(train, "sim.kai.scheduler/duration: 1h", "sim.kai.scheduler/fail-after: 1h", 1),
			"document 3 (PyTorchJob train): line 16: metadata.annotations.sim.kai.scheduler/fail-after: kai-sim reads it on a Pod, not on a PyTorchJob: move it there"},
		{"a PodGroup's annotation on a pod of a workload", strings.Replace(train, "name: train-worker-0\n", "name: train-worker-0\n  annotations: {sim.kai.scheduler/duration: 1h}\n", 1),
			"document 5 (Pod train-worker-0): line 34: metadata.annotations.sim.kai.scheduler/duration: kai-sim reads it on a PodGroup, not on a Pod: move it there, " +
				"or to the workload at the top of the pod's owners, whose annotations its PodGroup carries"},
		{"a setting of the workload", strings.Replace(train, "sim.kai.scheduler/duration: 1h", "sim.kai.scheduler/duration: soon", 1),
			`document 3 (PyTorchJob default/train): metadata.annotations.sim.kai.scheduler/duration: invalid duration "soon"`},
		{"a workload without pods", oneNodeOneQueue + "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {parallelism: 1}\n",
			"document 3 (Job default/j): no pod of the file belongs to it: kai-sim runs no controllers, so write the pods its controller would create, " +
				"each naming its owner in metadata.ownerReferences (with controller: true)"},
		{"settings below the top owner", oneNodeOneQueue + `apiVersion: apps/v1
kind: Deployment
metadata: {name: serve}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: serve-5d8f
  annotations: {sim.kai.scheduler/duration: 1h}
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: serve, controller: true}]
---
` + owned("serve-5d8f-a", "apps/v1", "ReplicaSet", "serve-5d8f", "", ""),
			"document 4 (ReplicaSet default/serve-5d8f): its sim.kai.scheduler annotations reach no PodGroup: " +
				"the pod grouper copies those of the workload at the top of its pods' owners: move them there"},
		{"a PodGroup of the grouper's name", train + "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: pg-train}\nspec: {minMember: 1, queue: q}\n",
			"Pod default/train-master-0: the pod grouper makes PodGroup default/pg-train for it, and document 6 is a PodGroup of that name"},
		{"two kinds of one name", train + "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train}\n---\n" + owned("train-x", "batch/v1", "Job", "train", "", ""),
			"Pod default/train-x: the pod grouper makes PodGroup default/pg-train for both PyTorchJob.kubeflow.org/train and Job.batch/train: " +
				"rename one of the workloads, or give each a metadata.uid, which the PodGroup's name then carries"},
		{"a pod on a node of a job not running", train +
			owned("train-worker-9", "kubeflow.org/v1", "PyTorchJob", "train", "", "nodeName: n0, "),
			`Pod default/train-worker-9: spec.nodeName "n0": only the pods of a running job start on a node: annotate its workload, ` +
				"document 3 (PyTorchJob default/train), with sim.kai.scheduler/running-for"},
		{"a misspelt metadata field", strings.Replace(train, "  annotations: {sim", "  annotation: {sim", 1), `document 3 (PyTorchJob train): unknown field "annotation"`},
		{"a core kind", oneNodeOneQueue + "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n", `document 3: unsupported kind "Service" of apiVersion "v1"`},
		{"a pod whose owner is no controller", strings.Replace(train, "name: train, controller: true}", "name: train}", 1),
			"Pod default/train-master-0: has no pod-group-name annotation, so it belongs to no job (its metadata.ownerReferences mark no owner controller: true, " +
				"which is how the pod grouper finds its workload)"},
		{"a workload the grouper skips", strings.Replace(train, "annotations: {sim.kai.scheduler/duration: 1h}", "annotations: {kai.scheduler/skip-podgrouper: \"true\"}", 1),
			`Pod default/train-master-0: has no pod-group-name annotation, and its workload leaves its PodGroup to its user (kai.scheduler/skip-podgrouper: "true")`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := input.Parse([]byte(c.scenario))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v\nwant it to contain %s", err, c.want)
			}
		})
	}
}

// A workload running at the start says so, as a PodGroup does, and its pods that name a node
// start there.
func TestARunningWorkloadsPodsStartOnTheirNodes(t *testing.T) {
	scenario := oneNodeOneQueue + pyTorchJob("train", 1, "sim.kai.scheduler/running-for: 30m")
	scenario = strings.ReplaceAll(scenario, "spec: {containers: [{name: main", "spec: {nodeName: n0, containers: [{name: main")
	sc := parseJobs(t, scenario)
	job := sc.Jobs[0]
	if !job.Running || job.RunningFor != 30*time.Minute || job.SubmitAt != -30*time.Minute {
		t.Errorf("job %s: running %v for %s, submitted at %s: want running for 30m", job.Key(), job.Running, job.RunningFor, job.SubmitAt)
	}
	first, err := sim.Run(context.Background(), sc, sim.Options{Until: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Events) != 0 {
		t.Errorf("the first second bound or evicted %+v: the pods run on n0 already", first.Events)
	}
	if r := jobReport(t, first, job.Key()); r.FirstStart == nil || *r.FirstStart != -1800 {
		t.Errorf("%s started at %v, want -1800 s: running on its node for 30 minutes", job.Key(), r.FirstStart)
	}
}

// The pods of workloads are grouped by the pool kai-sim runs them in: a pool label on the pod
// alone labels its PodGroup, as that pool's pod grouper does.
func TestWorkloadsAreGroupedByTheirPool(t *testing.T) {
	scenario := oneNodeOneQueue + strings.Replace(pyTorchJob("train", 1, ""), "replica-type: master", "replica-type: master, kai.scheduler/node-pool: a100", 1)
	scenario = strings.Replace(scenario, "replica-type: worker", "replica-type: worker, kai.scheduler/node-pool: a100", 1)
	for key, want := range map[string]string{scheduling.NodePoolLabel: "a100", "": ""} {
		sc, err := input.ParseForPools([]byte(scenario), key)
		if err != nil {
			t.Fatal(err)
		}
		if got := sc.Jobs[0].Group.Labels[scheduling.NodePoolLabel]; got != want {
			t.Errorf("pool key %q: the PodGroup's pool %q, want %q", key, got, want)
		}
	}
}

// An arrivals file may hold workloads and their pods; a repeat of a workload's job names a
// workload of its own.
func TestArrivalsAndRepeatsOfWorkloads(t *testing.T) {
	arrivals := input.File{Name: "arrivals.yaml", Data: []byte(pyTorchJob("train", 1, "sim.kai.scheduler/submit-at: 20m"))}
	sc, description, err := input.Load(today(t), input.Additions{Arrivals: []input.File{arrivals}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "today.yaml + 1 arrival from arrivals.yaml"; description != want || !strings.Contains(strings.Join(jobNames(sc), " "), "default/pg-train@20m0s") {
		t.Errorf("%s: jobs %v", description, jobNames(sc))
	}
	running := input.File{Name: "arrivals.yaml", Data: []byte(pyTorchJob("train", 1, "sim.kai.scheduler/running-for: 20m"))}
	if _, _, err := input.Load(today(t), input.Additions{Arrivals: []input.File{running}}); err == nil ||
		!strings.Contains(err.Error(), "arrivals.yaml: PodGroup default/pg-train: metadata.annotations.sim.kai.scheduler/running-for: an arrival is submitted at or after the start") {
		t.Errorf("a running arrival: error %v", err)
	}

	pending := input.File{Name: "today.yaml", Data: []byte(oneNodeOneQueue + pyTorchJob("train", 1, ""))}
	rate, err := input.ParseRate("1/h")
	if err != nil {
		t.Fatal(err)
	}
	sc, _, err = input.Load(pending, input.Additions{Repeat: rate, Until: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if got := describeJobs(sc); !strings.Contains(got, "default/pg-train-r1 PyTorchJob.kubeflow.org/train-r1 gang 2 priority train: train-master-0-r1:master train-worker-0-r1:worker") {
		t.Errorf("jobs with a repeat:\n%s", got)
	}
}

// The example's workloads read as documented: the PyTorchJob a gang of its 4 pods.
func TestWorkloadsExampleReads(t *testing.T) {
	sc, err := input.Parse(simtest.Example(t, "workloads.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := describeJobs(sc); !strings.Contains(got, "ml/pg-train PyTorchJob.kubeflow.org/train gang 4 priority train") {
		t.Errorf("jobs:\n%s", got)
	}
}
