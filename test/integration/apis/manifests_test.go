package apis

import (
	"encoding/json"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/test/testenv"
)

var _ = Describe("Valid KAI manifests", func() {
	examples, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "docs", "examples", "*.yaml"))
	if err != nil || len(examples) == 0 {
		panic("no manifests found in docs/examples")
	}
	for _, path := range examples {
		It("stores "+filepath.Base(path)+" exactly as written", func() {
			for _, sent := range readManifests(path) {
				Expect(createAndCleanUp(sent.DeepCopy())).To(Succeed(), "creating %s %s", sent.GetKind(), sent.GetName())

				stored := &unstructured.Unstructured{}
				stored.SetGroupVersionKind(sent.GroupVersionKind())
				Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(sent), stored)).To(Succeed())
				// Compared as JSON: the decoder of the file and the API client type numbers differently.
				Expect(toJSON(stored.Object["spec"])).To(MatchJSON(toJSON(sent.Object["spec"])), "%s %s", sent.GetKind(), sent.GetName())
				Expect(stored.GetLabels()).To(Equal(sent.GetLabels()))
				Expect(stored.GetAnnotations()).To(Equal(sent.GetAnnotations()))
			}
		})
	}

	It("reads a queue's min-runtimes through the typed API, keeping unset apart from 0s", func() {
		for _, obj := range readManifests(filepath.Join(testenv.RepoRoot(), "docs", "examples", "queues-reclaim-lca-tree.yaml")) {
			Expect(createAndCleanUp(obj)).To(Succeed())
		}
		reclaimMinRuntime := func(name string) *metav1.Duration {
			queue := &v2.Queue{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Name: name}, queue)).To(Succeed())
			return queue.Spec.ReclaimMinRuntime
		}
		Expect(reclaimMinRuntime("b")).To(Equal(&metav1.Duration{Duration: 10 * time.Minute}))
		Expect(reclaimMinRuntime("d")).To(Equal(&metav1.Duration{Duration: time.Minute}))
		Expect(reclaimMinRuntime("leaf1")).To(Equal(&metav1.Duration{}), "0s is set and stops inheritance")
		Expect(reclaimMinRuntime("c")).To(BeNil(), "unset inherits")
		Expect(reclaimMinRuntime("leaf3")).To(BeNil(), "unset inherits")
	})

	It("reads a PodGroup with sub-groups through the typed API", func() {
		for _, obj := range readManifests(filepath.Join(testenv.RepoRoot(), "docs", "examples", "podgroups.yaml")) {
			Expect(createAndCleanUp(obj)).To(Succeed())
		}
		group := &v2alpha2.PodGroup{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "serve-llm"}, group)).To(Succeed())
		Expect(group.Spec.MinMember).To(BeEquivalentTo(3))
		Expect(group.Spec.Preemptibility).To(Equal(v2alpha2.NonPreemptible))
		Expect(group.Spec.MarkUnschedulable).To(HaveValue(BeFalse()))
		Expect(group.Spec.SubGroups).To(HaveLen(2))
		Expect(group.Spec.SubGroups[1].Parent).To(HaveValue(Equal("leader")))
	})

	It("reads upstream's preemption-delay example through the typed API", func() {
		for _, obj := range readManifests(filepath.Join(testenv.RepoRoot(), "docs", "examples", "podgroup-preemption-delay.yaml")) {
			Expect(createAndCleanUp(obj)).To(Succeed())
		}
		group := &v2alpha2.PodGroup{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "delayed-training"}, group)).To(Succeed())
		Expect(group.Spec.PreemptionDelay).To(Equal(&metav1.Duration{Duration: 5 * time.Minute}))
	})

	It("reads upstream's hierarchical elastic gang through the typed API", func() {
		for _, obj := range readManifests(filepath.Join(testenv.RepoRoot(), "docs", "examples", "podgroups-minsubgroup.yaml")) {
			Expect(createAndCleanUp(obj)).To(Succeed())
		}
		group := &v2alpha2.PodGroup{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "inference-service"}, group)).To(Succeed())
		Expect(group.Spec.MinSubGroup).To(HaveValue(BeEquivalentTo(3)))
		Expect(group.Spec.MinMember).To(BeZero(), "no minMember is stored beside minSubGroup")
		Expect(group.Spec.SubGroups).To(HaveLen(4))
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "training-job"}, group)).To(Succeed())
		Expect(group.Spec.SubGroups[0].MinSubGroup).To(HaveValue(BeEquivalentTo(2)))
	})

	It("accepts minSubGroup 0, which asks nothing at its level", func() {
		Expect(createAndCleanUp(manifest(podGroupWith("  minSubGroup: 0\n  subGroups: [{name: r0, minMember: 8}]")))).To(Succeed())
	})

	It("keeps a PodGroup without minMember a gang of one", func() {
		sent := manifest(`
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: single, namespace: defaults}
spec: {queue: default-queue}
`)
		Expect(createAndCleanUp(sent)).To(Succeed())
		group := &v2alpha2.PodGroup{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: "defaults", Name: "single"}, group)).To(Succeed())
		// No default is stored (it would collide with minSubGroup); the scheduler reads an
		// absent minMember without minSubGroup as 1.
		Expect(group.Spec.MinMember).To(BeZero())
		Expect(group.Spec.MinSubGroup).To(BeNil())
	})
})

func toJSON(value any) []byte {
	data, err := json.Marshal(value)
	Expect(err).NotTo(HaveOccurred())
	return data
}
