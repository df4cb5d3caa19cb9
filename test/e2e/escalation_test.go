package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/testing/builders"
)

// escalationConfig triples a job's protection per run it lost, up to a minute.
const escalationConfig = `actions: "allocate, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: proportion
  - name: minruntime
    arguments: {escalationFactor: "3", escalationCeiling: 1m}
  - name: predicates
`

var _ = Describe("Escalating protection", Label("escalation"), func() {
	// The borrower queue protects its jobs against reclaim for 2s; each run the owner ends
	// triples the next one's protection. The count lives in the PodGroup's status, so a new
	// scheduler protects the job as the old one would have.
	It("counts each run reclaim ends in the PodGroup's status, once, and protects the next run longer, across a restart", func() {
		createNamespace("escalate")
		create(builders.MakeQueue("escalate-owner").GPUQuota(2).Obj())
		create(builders.MakeQueue("escalate-borrower").GPUQuota(0).ReclaimMinRuntime(2 * time.Second).Obj())
		createNode("escalate-node", 2)
		file := filepath.Join(GinkgoT().TempDir(), "scheduler-config.yaml")
		Expect(os.WriteFile(file, []byte(escalationConfig), 0o600)).To(Succeed())
		stopFirst := startScheduler(schedulerOptions(file))

		evictions := func() *v2alpha2.EvictionCount {
			pg := &v2alpha2.PodGroup{}
			Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: "escalate", Name: "train"}, pg)).To(Succeed())
			return pg.Status.Evictions
		}
		// run starts the borrower's two pods again (no controller re-creates them here) and
		// returns its start stamp; reclaim brings the owner's job, which ends the run.
		run := func(first bool) time.Time {
			if first {
				createJob(builders.MakePodGroup("escalate", "train").Queue("escalate-borrower").PriorityClass("train").MinMember(2), 2, 1)
			} else {
				for i := range 2 {
					create(gpuPod("escalate", fmt.Sprintf("train-%d", i), 1).PodGroup("train").Obj())
				}
			}
			Eventually(runningPods("escalate", "train")).Should(Equal(2))
			return startStamp(k8sClient, "escalate", "train")
		}
		reclaim := func(protected time.Duration, started time.Time) {
			createJob(builders.MakePodGroup("escalate", "owned").Queue("escalate-owner").PriorityClass("train").MinMember(2), 2, 1)
			until := started.Add(protected)
			Consistently(runningPods("escalate", "train"), time.Until(until)-500*time.Millisecond).Should(Equal(2))
			Eventually(runningPods("escalate", "owned")).Should(Equal(2))
			expectEvictedAtOrAfter("escalate", "train", until)
			// The owner is done: its job leaves, and the borrower's evicted pods are gone.
			for i := range 2 {
				Expect(client.IgnoreNotFound(k8sClient.Delete(suiteCtx, gpuPod("escalate", fmt.Sprintf("owned-%d", i), 1).Obj()))).To(Succeed())
			}
			Expect(k8sClient.Delete(suiteCtx, builders.MakePodGroup("escalate", "owned").Obj())).To(Succeed())
			Eventually(boundPods("escalate", "train")).Should(BeZero())
			Eventually(boundPods("escalate", "owned")).Should(BeZero())
		}

		started := run(true)
		Expect(evictions()).To(BeNil(), "a job never evicted has no count")
		reclaim(2*time.Second, started)
		Eventually(evictions).Should(And(Not(BeNil()), HaveField("Reclaim", int32(1)), HaveField("Total", int32(1))))
		Consistently(evictions, time.Second).Should(HaveField("Total", int32(1)), "the run ended once, whatever its two pods")

		// A new scheduler reads the count: the next run is protected 3 × 2s, and its
		// status says what was escalated.
		stopFirst()
		DeferCleanup(startScheduler(schedulerOptions(file)))
		started = run(false)
		Eventually(func(g Gomega) {
			shown := minRuntimeStatus("escalate", "train")()
			g.Expect(shown).NotTo(BeNil())
			g.Expect(shown.Reclaim).NotTo(BeEmpty())
			g.Expect(shown.Reclaim[0].MinRuntime.Duration).To(Equal(6 * time.Second))
			g.Expect(shown.Reclaim[0].EscalatedFrom).To(HaveField("Duration", 2*time.Second))
		}).Should(Succeed())
		Expect(printedColumn("escalate", "train", "Evictions")).To(Equal("1"))
		reclaim(6*time.Second, started)
		Eventually(evictions).Should(And(HaveField("Reclaim", int32(2)), HaveField("Total", int32(2))))
	})
})
