package e2e

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/kubectlkai"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

const explainConfig = `actions: "allocate, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: proportion
  - name: minruntime
    arguments: {defaultPreemptMinRuntime: 5m, defaultReclaimMinRuntime: 7s}
  - name: predicates
  - name: nodeplacement
`

var _ = Describe("kubectl kai explain", func() {
	It("tells, on the design's trees, a running job what protects it per level, a waiting job whom it waits for, and a queue what its jobs get", func() {
		createNamespace("explain")
		for _, q := range designQueues("queues-reclaim-lca-tree.yaml") {
			// One GPU, deserved by leaf1's branch and borrowed by leaf3 while leaf1 has no job.
			gpus := map[string]float64{"a": 1, "b": 1, "c": 1, "leaf1": 1}[q.Name]
			q.Spec.Resources = builders.MakeQueue(q.Name).GPUQuota(gpus).Obj().Spec.Resources
			create(q)
		}
		cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "explain", Name: "kai-scheduler-config"},
			Data: map[string]string{"scheduler-config.yaml": explainConfig}}
		Expect(k8sClient.Create(suiteCtx, cm)).To(Succeed())
		cleanUp(cm)
		createNode("explain-node", 1)
		DeferCleanup(startScheduler(schedulerOptionsWith(explainConfig)))

		createJob(builders.MakePodGroup("explain", "run3").Queue("leaf3").PriorityClass("train"), 1, 1)
		Eventually(runningPods("explain", "run3")).Should(Equal(1), func() string { return pendingMessage("explain", "run3")() })
		Eventually(minRuntimeStatus("explain", "run3")).ShouldNot(BeNil())
		// The start stamp is a write of its own, which may land just after the protection.
		started := startStamp(k8sClient, "explain", "run3")

		out := kubectlKai("explain", "podgroup", "explain/run3", "--config-map", "explain/kai-scheduler-config")
		Expect(out).To(ContainSubstring("queue:    a → b → d → leaf3"))
		Expect(out).To(ContainSubstring("Running since " + started.UTC().Format(time.RFC3339)))
		// Only d has a sibling on the path a → b → d → leaf3: reclaimers come from beside d.
		Expect(out).To(ContainSubstring("from outside d:\n    1m0s from queue d: protected until " +
			model.ShownEnd(started.Add(time.Minute)).UTC().Format(time.RFC3339)))
		Expect(out).To(ContainSubstring("resolved: d sets reclaimMinRuntime 1m0s"))
		Expect(out).To(ContainSubstring("The PodGroup's status (status.minRuntime, kubectl get pg) shows this protection."),
			"explain and the scheduler agree on the protection")

		createJob(builders.MakePodGroup("explain", "wait1").Queue("leaf1").PriorityClass("train"), 1, 1)
		Eventually(pendingMessage("explain", "wait1")).ShouldNot(BeEmpty())
		out = kubectlKai("explain", "pg", "wait1", "-n", "explain", "--config-map", "explain/kai-scheduler-config")
		Expect(out).To(ContainSubstring("It waits: 1 pod pending."))
		Expect(out).To(ContainSubstring("The scheduler says (UnschedulableOnNodePool"))
		Expect(out).To(MatchRegexp(`reclaim: victims are protected by min-runtime: explain/run3 until \S+ \(1m0s from queue d\)`),
			"leaf1 reclaiming from leaf3 resolves at d, the child of their common ancestor b")

		out = kubectlKai("explain", "queue", "b", "--config-map", "explain/kai-scheduler-config")
		Expect(out).To(ContainSubstring("Only leaf queues hold jobs. The 3 leaves under b get:"))
		Expect(out).To(ContainSubstring("Jobs of leaf3:\n  against preemption: 5m0s from the default"))

		// The design's preemption tree: p-leaf1 sets its own 300s, p-leaf2 inherits p-b's 600s.
		for _, q := range designQueues("queues-preempt-tree.yaml") {
			create(q)
		}
		out = kubectlKai("explain", "queue", "p-b", "--config-map", "explain/kai-scheduler-config")
		Expect(out).To(ContainSubstring("Jobs of p-leaf1:\n  against preemption: 5m0s from queue p-leaf1"))
		Expect(out).To(ContainSubstring("Jobs of p-leaf2:\n  against preemption: 10m0s from queue p-b"))
		out = kubectlKai("explain", "queue", "p-leaf2", "--config-map", "explain/kai-scheduler-config")
		Expect(out).To(ContainSubstring("resolved: p-leaf2 does not set it → p-c does not set it → p-b sets preemptMinRuntime 10m0s"))
	})
})

// kubectlKai runs the plugin's command against the test API server and returns its output.
func kubectlKai(args ...string) string {
	var stdout, stderr bytes.Buffer
	connect := func(string, string) (client.Reader, string, error) { return k8sClient, "default", nil }
	code := kubectlkai.Run(suiteCtx, args, &stdout, &stderr, connect, clock.RealClock{})
	Expect(code).To(BeZero(), "kubectl kai %v: %s", args, stderr.String())
	return stdout.String()
}

// designQueues reads one of docs/examples' queue files.
func designQueues(file string) []*v2.Queue {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", file))
	Expect(err).NotTo(HaveOccurred())
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var queues []*v2.Queue
	for {
		q := &v2.Queue{}
		if err := decoder.Decode(q); errors.Is(err, io.EOF) {
			return queues
		} else {
			Expect(err).NotTo(HaveOccurred())
		}
		queues = append(queues, q)
	}
}
