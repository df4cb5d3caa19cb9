package e2e

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/app"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
	"github.com/kai-minruntime/kai-scheduler/test/helm"
	"github.com/kai-minruntime/kai-scheduler/test/testenv"
)

var _ = Describe("The Helm chart", func() {
	It("installs a scheduler per node pool, and with its RBAC identity and rendered configuration each schedules its pool", func() {
		// A control plane of its own: the suite's already has the PriorityClasses the chart owns.
		own, err := testenv.Start()
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(own.Stop)
		ownKWOK, err := own.StartKWOK(GinkgoT().TempDir())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(ownKWOK.Stop) // before the control plane: cleanups run last registered first
		kubeconfig := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
		Expect(own.WriteKubeconfig(kubeconfig)).To(Succeed())
		out, err := helm.Run("install", "kai", helm.ChartDir(), "--namespace", "kai-system", "--create-namespace",
			"--kubeconfig", kubeconfig, "--set", "minRuntime.defaultReclaimMinRuntime=1h",
			"--set", "nodePools.a100.minRuntime.defaultReclaimMinRuntime=2h",
			// Consolidation runs, with the pool's own limit of moved jobs, which must reach its
			// scheduler as --max-consolidation-preemptees.
			"--set", `nodePools.a100.scheduler.actions=allocate\, reclaim\, preempt\, consolidation`,
			"--set", "nodePools.a100.scheduler.maxConsolidationPreemptees=2",
			// An upstream plugin this scheduler skips, after the chart's own: its warning must
			// reach the ConfigMap.
			"--set-json", `nodePools.a100.scheduler.plugins=[{"name":"priority"},{"name":"proportion"},{"name":"minruntime"},`+
				`{"name":"predicates"},{"name":"nodeplacement","arguments":{"gpu":"fragmentation","cpu":"binpack"}},{"name":"elastic"}]`)
		Expect(err).NotTo(HaveOccurred(), out)

		c := own.Client
		Expect(c.Get(suiteCtx, client.ObjectKey{Name: "train"}, &schedulingv1.PriorityClass{})).To(Succeed())
		Expect(c.Get(suiteCtx, client.ObjectKey{Name: "default-queue"}, &v2.Queue{})).To(Succeed())

		// Each scheduler as its Deployment runs it: the chart's ServiceAccount, its mounted
		// configuration, its arguments (pool, Lease), leader election in the release namespace.
		identity := rest.CopyConfig(own.Config)
		identity.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:kai-system:kai",
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kai-system", "system:authenticated"}}
		for deployment, reclaim := range map[string]string{"kai": "1h", "kai-a100": "2h"} {
			opts, config := chartScheduler(c, deployment)
			Expect(config).To(ContainSubstring(fmt.Sprintf("defaultReclaimMinRuntime: %q", reclaim)))
			DeferCleanup(startSchedulerOn(identity, opts))
		}
		ownClientset, err := kubernetes.NewForConfig(own.Config)
		Expect(err).NotTo(HaveOccurred())
		for _, node := range []string{"chart-node", "chart-a100-node"} {
			Expect(testenv.CreateNode(suiteCtx, ownClientset, node, 4)).To(Succeed())
			Expect(testenv.WaitNodeReady(suiteCtx, ownClientset, node)).To(Succeed())
		}
		// A patch, not an update: KWOK writes the node's status meanwhile.
		Expect(c.Patch(suiteCtx, builders.MakeNode("chart-a100-node").NodePool("a100").Obj(),
			client.MergeFrom(builders.MakeNode("chart-a100-node").Obj()))).To(Succeed())
		Expect(c.Create(suiteCtx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})).To(Succeed())
		Expect(c.Create(suiteCtx, builders.MakeQueue("a100-queue").GPUQuota(4).NodePool("a100").Obj())).To(Succeed())
		// The a100 pool's job: its scheduler places it, on its pool's node.
		Expect(c.Create(suiteCtx, builders.MakePodGroup("team", "a100-trainer").NodePool("a100").Queue("a100-queue").PriorityClass("train").Obj())).To(Succeed())
		Expect(c.Create(suiteCtx, builders.MakePod("team", "a100-trainer-0").PodGroup("a100-trainer").GPUs(1).Obj())).To(Succeed())

		// A PodGroup job, and a bare pod the pod grouper must group: binding, eviction-free
		// start stamping and PodGroup creation all need the chart's RBAC.
		Expect(c.Create(suiteCtx, builders.MakePodGroup("team", "trainer").MinMember(2).Queue("default-queue").PriorityClass("train").Obj())).To(Succeed())
		for i := range 2 {
			Expect(c.Create(suiteCtx, builders.MakePod("team", fmt.Sprintf("trainer-%d", i)).PodGroup("trainer").GPUs(1).Obj())).To(Succeed())
		}
		Expect(c.Create(suiteCtx, builders.MakePod("team", "notebook").GPUs(1).Obj())).To(Succeed())

		running := func() int {
			if err := ownKWOK.Err(); err != nil {
				StopTrying("no pod can start").Wrap(err).Now()
			}
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
		Eventually(running).Should(Equal(4))
		nodeOf := func(name string) string {
			pod := &v1.Pod{}
			Expect(c.Get(suiteCtx, client.ObjectKey{Namespace: "team", Name: name}, pod)).To(Succeed())
			return pod.Spec.NodeName
		}
		Expect(nodeOf("a100-trainer-0")).To(Equal("chart-a100-node"))
		Expect([]string{nodeOf("trainer-0"), nodeOf("trainer-1"), nodeOf("notebook")}).To(HaveEach("chart-node"))
		startStamp(c, "team", "trainer") // the chart's RBAC lets the scheduler stamp a job it bound

		// Each leader tells, on its own ConfigMap, what it runs and what it skipped.
		events := func(configMap string) func() []string {
			return func() []string {
				cm := &v1.ConfigMap{}
				Expect(c.Get(suiteCtx, client.ObjectKey{Namespace: "kai-system", Name: configMap}, cm)).To(Succeed())
				list := &v1.EventList{}
				Expect(c.List(suiteCtx, list, client.InNamespace("kai-system"))).To(Succeed())
				var seen []string
				for _, e := range list.Items {
					if e.InvolvedObject.Kind == "ConfigMap" && e.InvolvedObject.UID == cm.UID {
						seen = append(seen, e.Type+" "+e.Reason+": "+e.Message)
					}
				}
				return seen
			}
		}
		Eventually(events("kai-a100-config")).Should(ConsistOf(
			And(HavePrefix("Normal ConfigurationLoaded: the scheduler of node pool a100 runs actions allocate, reclaim, preempt, consolidation (maxConsolidationPreemptees=2);"),
				ContainSubstring("defaultReclaimMinRuntime=2h0m0s")),
			`Warning ConfigurationWarning: the scheduler of node pool a100 skips or defaults 1 part(s) of its configuration: `+
				`(1) tiers[0].plugins[5]: plugin "elastic" is a KAI-Scheduler plugin this scheduler does not implement; it is skipped`,
		))
		// The chart's default actions are upstream's five, consolidation with its default limit.
		Eventually(events("kai-config")).Should(ConsistOf(
			And(HavePrefix("Normal ConfigurationLoaded: the scheduler of node pool default runs actions allocate, consolidation (maxConsolidationPreemptees=16), reclaim, preempt, stalegangeviction"),
				ContainSubstring("defaultReclaimMinRuntime=1h0m0s")),
		))
	})
})

// chartScheduler returns the options a Deployment of the chart runs its scheduler with (its
// arguments and its mounted configuration), and that configuration.
func chartScheduler(c client.Client, name string) (app.Options, string) {
	deployment := &appsv1.Deployment{}
	Expect(c.Get(suiteCtx, client.ObjectKey{Namespace: "kai-system", Name: name}, deployment)).To(Succeed())
	cm := &v1.ConfigMap{}
	Expect(c.Get(suiteCtx, client.ObjectKey{Namespace: "kai-system", Name: name + "-config"}, cm)).To(Succeed())
	opts := schedulerOptionsWith(cm.Data["scheduler-config.yaml"])
	opts.LeaderElect, opts.LeaderElectionNamespace = true, "kai-system"
	for _, arg := range deployment.Spec.Template.Spec.Containers[0].Args {
		flag, value, _ := strings.Cut(arg, "=")
		switch flag {
		case "--leader-elect-id":
			opts.LeaderElectionID = value
		case "--nodepool-label-key":
			opts.NodePoolLabelKey = value
		case "--partition-label-value":
			opts.PartitionLabelValue = value
		case "--max-consolidation-preemptees":
			n, err := strconv.Atoi(value)
			Expect(err).NotTo(HaveOccurred(), arg)
			opts.MaxConsolidationPreemptees = n
		case "--scheduler-conf-configmap":
			// In the release namespace, the Deployment's $POD_NAMESPACE.
			key, err := app.ParseConfigMap("kai-system/" + value)
			Expect(err).NotTo(HaveOccurred())
			opts.ConfigMap = key
		}
	}
	return opts, cm.Data["scheduler-config.yaml"]
}
