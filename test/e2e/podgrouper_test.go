package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

var _ = Describe("Ordinary workloads", func() {
	BeforeEach(func() {
		createNamespace("plain")
		create(builders.MakeQueue("plain-team").GPUQuota(-1).Obj())
		create(builders.MakeQueue("default-queue").GPUQuota(-1).Obj())
		createNode("plain-node", 8)
		DeferCleanup(startScheduler(schedulerOptions("")))
	})

	It("get a PodGroup per bare pod, in the queue of its label", func() {
		pod := create(gpuPod("plain", "notebook", 1).Queue("plain-team").Obj())
		Eventually(func() string {
			Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
			return pod.Spec.NodeName
		}).ShouldNot(BeEmpty())
		group := &v2alpha2.PodGroup{}
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: "plain", Name: pod.Annotations[scheduling.PodGroupNameAnnotation]}, group)).To(Succeed())
		Expect(group.Spec.Queue).To(Equal("plain-team"))
		Expect(group.Spec.MinMember).To(BeEquivalentTo(1))
	})

	It("get one PodGroup per batch Job, a gang of its parallelism, in default-queue without a label", func() {
		job := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Namespace: "plain", Name: "sweep"},
			Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](3), Template: v1.PodTemplateSpec{Spec: v1.PodSpec{
				RestartPolicy: v1.RestartPolicyNever, SchedulerName: "kai-scheduler",
				Containers: []v1.Container{{Name: "main", Image: "busybox"}}}}},
		}
		Expect(k8sClient.Create(suiteCtx, job)).To(Succeed())
		cleanUp(job)
		// No job controller runs here, so the test creates the Job's pods, one short of its
		// parallelism at first: the gang must wait for the third.
		createOwned := func(name string) {
			create(gpuPod("plain", name, 1).ControlledBy(job, batchv1.SchemeGroupVersion.WithKind("Job")).Obj())
		}
		createOwned("sweep-a")
		createOwned("sweep-b")
		Eventually(func() int32 {
			groups := &v2alpha2.PodGroupList{}
			Expect(k8sClient.List(suiteCtx, groups, client.InNamespace("plain"))).To(Succeed())
			for _, g := range groups.Items {
				if len(g.OwnerReferences) == 1 && g.OwnerReferences[0].UID == job.UID {
					Expect(g.Spec.Queue).To(Equal("default-queue"))
					return g.Spec.MinMember
				}
			}
			return 0
		}).Should(BeEquivalentTo(3))
		groupName := "pg-sweep-" + string(job.UID)
		Consistently(boundPods("plain", groupName), "1s").Should(BeZero(), "2 pods cannot make a gang of 3")
		createOwned("sweep-c")
		Eventually(runningPods("plain", groupName)).Should(Equal(3))

		By("a PodGroup deleted while its pods live is made again: no pod names one that does not exist")
		deleted := &v2alpha2.PodGroup{}
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: "plain", Name: groupName}, deleted)).To(Succeed())
		Expect(k8sClient.Delete(suiteCtx, deleted)).To(Succeed())
		Eventually(func() types.UID {
			again := &v2alpha2.PodGroup{}
			if err := k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: "plain", Name: groupName}, again); err != nil {
				return ""
			}
			return again.UID
		}).ShouldNot(SatisfyAny(BeEmpty(), Equal(deleted.UID)))
	})
})
