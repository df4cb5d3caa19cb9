package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/cache"
	"github.com/kai-minruntime/kai-scheduler/test/helm"
	"github.com/kai-minruntime/kai-scheduler/test/testenv"
)

var _ = Describe("The Helm chart", func() {
	It("installs, and with its RBAC identity and rendered configuration the scheduler schedules", func() {
		// A control plane of its own: the suite's already has the PriorityClasses the chart owns.
		own, err := testenv.Start()
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(own.Stop)
		kubeconfig := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
		Expect(own.WriteKubeconfig(kubeconfig)).To(Succeed())
		out, err := helm.Run("install", "kai", helm.ChartDir(), "--namespace", "kai-system", "--create-namespace",
			"--kubeconfig", kubeconfig, "--set", "minRuntime.defaultReclaimMinRuntime=1h")
		Expect(err).NotTo(HaveOccurred(), out)

		c := own.Client
		Expect(c.Get(suiteCtx, client.ObjectKey{Namespace: "kai-system", Name: "kai"}, &appsv1.Deployment{})).To(Succeed())
		Expect(c.Get(suiteCtx, client.ObjectKey{Name: "train"}, &schedulingv1.PriorityClass{})).To(Succeed())
		Expect(c.Get(suiteCtx, client.ObjectKey{Name: "default-queue"}, &v2.Queue{})).To(Succeed())
		cm := &v1.ConfigMap{}
		Expect(c.Get(suiteCtx, client.ObjectKey{Namespace: "kai-system", Name: "kai-config"}, cm)).To(Succeed())
		config := filepath.Join(GinkgoT().TempDir(), "scheduler-config.yaml")
		Expect(os.WriteFile(config, []byte(cm.Data["scheduler-config.yaml"]), 0o600)).To(Succeed())
		Expect(cm.Data["scheduler-config.yaml"]).To(ContainSubstring(`defaultReclaimMinRuntime: "1h"`))

		// The scheduler as the Deployment runs it: the chart's ServiceAccount, the mounted
		// configuration, leader election in the release namespace.
		identity := rest.CopyConfig(own.Config)
		identity.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:kai-system:kai",
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kai-system", "system:authenticated"}}
		opts := schedulerOptions(config)
		opts.LeaderElect, opts.LeaderElectionNamespace = true, "kai-system"
		DeferCleanup(startSchedulerOn(identity, opts))
		ownClientset, err := kubernetes.NewForConfig(own.Config)
		Expect(err).NotTo(HaveOccurred())
		go (&testenv.Kubelet{Client: ownClientset, Period: 100 * time.Millisecond}).Run(suiteCtx)
		Expect(testenv.CreateNode(suiteCtx, ownClientset, "chart-node", 4)).To(Succeed())
		Expect(c.Create(suiteCtx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})).To(Succeed())

		// A PodGroup job, and a bare pod the pod grouper must group: binding, eviction-free
		// start stamping and PodGroup creation all need the chart's RBAC.
		Expect(c.Create(suiteCtx, &v2alpha2.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "trainer"},
			Spec: v2alpha2.PodGroupSpec{MinMember: 2, Queue: "default-queue", PriorityClassName: "train"}})).To(Succeed())
		for i := range 2 {
			Expect(c.Create(suiteCtx, chartPod(fmt.Sprintf("trainer-%d", i), map[string]string{scheduling.PodGroupNameAnnotation: "trainer"}))).To(Succeed())
		}
		Expect(c.Create(suiteCtx, chartPod("notebook", nil))).To(Succeed())

		running := func() int {
			pods := &v1.PodList{}
			Expect(c.List(suiteCtx, pods, client.InNamespace("team"))).To(Succeed())
			n := 0
			for _, p := range pods.Items {
				if p.Status.Phase == v1.PodRunning {
					n++
				}
			}
			return n
		}
		Eventually(running).Should(Equal(3))
		Eventually(func() *time.Time {
			pg := &v2alpha2.PodGroup{}
			Expect(c.Get(suiteCtx, client.ObjectKey{Namespace: "team", Name: "trainer"}, pg)).To(Succeed())
			t, _ := cache.ParseStartTime(pg.Annotations)
			return t
		}).ShouldNot(BeNil())
	})
})

func chartPod(name string, annotations map[string]string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, Annotations: annotations},
		Spec: v1.PodSpec{SchedulerName: "kai-scheduler", Containers: []v1.Container{{Name: "main", Image: "busybox",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")},
				Limits: v1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}}}},
	}
}
