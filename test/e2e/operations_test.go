package e2e

import (
	"io"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

var _ = Describe("Operating the scheduler", func() {
	It("elects one leader through a Lease and serves metrics and health", func() {
		createNamespace("kai-scheduler")
		createNamespace("ops")
		create(builders.MakeQueue("ops-queue").GPUQuota(-1).Obj())
		createNode("ops-node", 2)
		opts := schedulerOptions("")
		opts.LeaderElect, opts.LeaderElectionNamespace = true, "kai-scheduler"
		opts.ListenAddress, opts.HealthAddress = "127.0.0.1:18080", "127.0.0.1:18081"
		opts.MetricsRegistry = nil // the binary's: controller-runtime's registry, served on ListenAddress
		DeferCleanup(startScheduler(opts))
		standby := schedulerOptions("")
		standby.LeaderElect, standby.LeaderElectionNamespace = true, "kai-scheduler"
		DeferCleanup(startScheduler(standby))

		lease := &coordinationv1.Lease{}
		Eventually(func() error {
			return k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: "kai-scheduler", Name: "kai-scheduler"}, lease)
		}).Should(Succeed())
		Expect(lease.Spec.HolderIdentity).NotTo(BeNil())

		createJob(builders.MakePodGroup("ops", "served").Queue("ops-queue").PriorityClass("train").MinMember(2), 2, 1)
		Eventually(runningPods("ops", "served")).Should(Equal(2))
		for _, registry := range []prometheus.Registerer{ctrlmetrics.Registry, standby.MetricsRegistry} {
			Expect(metric(registry, "kai_scheduler_bind_errors_total", nil)()).To(BeZero(), "two replicas, one scheduling: no bind was refused")
		}

		Eventually(get("http://127.0.0.1:18081/healthz")).Should(Equal("ok"))
		Eventually(get("http://127.0.0.1:18080/metrics"), 10*time.Second).Should(And(
			ContainSubstring("kai_scheduler_cycle_duration_seconds"), ContainSubstring("kai_scheduler_binds_total"),
			ContainSubstring("kai_scheduler_min_runtime_wait_seconds")))
	})
})

// get returns the body of a GET, or the error text.
func get(url string) func() string {
	return func() string {
		resp, err := http.Get(url)
		if err != nil {
			return err.Error()
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
}

var _ = Describe("Broken queue trees", func() {
	It("are reported as events and do not stop scheduling elsewhere", func() {
		createNamespace("loops")
		create(builders.MakeQueue("loop-a").GPUQuota(-1).Parent("loop-b").Obj())
		create(builders.MakeQueue("loop-b").GPUQuota(-1).Parent("loop-a").Obj())
		create(builders.MakeQueue("healthy").GPUQuota(-1).Obj())
		createNode("loops-node", 2)
		DeferCleanup(startScheduler(schedulerOptions("")))

		createJob(builders.MakePodGroup("loops", "stuck").Queue("loop-a").PriorityClass("train"), 1, 1)
		createJob(builders.MakePodGroup("loops", "fine").Queue("healthy").PriorityClass("train"), 1, 1)
		Eventually(runningPods("loops", "fine")).Should(Equal(1))
		Eventually(func() []string {
			events := &v1.EventList{}
			Expect(k8sClient.List(suiteCtx, events)).To(Succeed())
			var messages []string
			for _, e := range events.Items {
				if e.InvolvedObject.Kind == "Queue" && e.Reason == "InvalidQueue" {
					messages = append(messages, e.InvolvedObject.Name+": "+e.Message)
				}
			}
			return messages
		}).Should(ContainElement("loop-a: parent cycle: loop-a -> loop-b -> loop-a"))
		Consistently(boundPods("loops", "stuck"), "1s").Should(BeZero())

		validity := func(name string) func() string {
			return func() string {
				q := &v2.Queue{}
				Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Name: name}, q)).To(Succeed())
				for _, c := range q.Status.Conditions {
					if c.Type == "Valid" {
						return string(c.Status) + ": " + c.Message
					}
				}
				return ""
			}
		}
		Eventually(validity("loop-b")).Should(Equal("False: parent cycle: loop-a -> loop-b -> loop-a"))
		Eventually(validity("healthy")).Should(HavePrefix("True"))
	})
})

var _ = Describe("Queue status", func() {
	It("shows each queue's children and what its jobs hold, for kubectl get queues", func() {
		createNamespace("tree")
		create(builders.MakeQueue("org").GPUQuota(-1).Obj())
		create(builders.MakeQueue("org-team").GPUQuota(-1).Parent("org").Obj())
		createNode("tree-node", 4)
		DeferCleanup(startScheduler(schedulerOptions("")))
		createJob(builders.MakePodGroup("tree", "work").Queue("org-team").PriorityClass("train").MinMember(3), 3, 1)
		Eventually(runningPods("tree", "work")).Should(Equal(3))
		Eventually(func() []string {
			q := &v2.Queue{}
			Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Name: "org"}, q)).To(Succeed())
			return q.Status.ChildQueues
		}).Should(Equal([]string{"org-team"}))
		Eventually(func() int64 {
			q := &v2.Queue{}
			Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Name: "org"}, q)).To(Succeed())
			gpus := q.Status.Allocated["nvidia.com/gpu"]
			return gpus.Value()
		}, 20*time.Second).Should(BeEquivalentTo(3), "the parent sums its children's allocation")
	})
})
