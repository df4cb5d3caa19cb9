package scale

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Sizes follow the cluster, as upstream's scenarios do at 500 nodes: G GPUs in all, and
// one-GPU jobs enough to fill them.
func gpus() int { return gpusPerNode * settings.nodes }

// minRuntime is the reclaim min-runtime of the protected scenarios: the minute of the
// issue's measurements from 500 nodes, shorter on the small cluster of make test.
func minRuntime() time.Duration {
	if settings.nodes >= 500 {
		return time.Minute
	}
	return 15 * time.Second
}

// since is the seconds from a to b.
func since(a, b time.Time) float64 { return b.Sub(a).Seconds() }

var _ = Describe("Upstream's scale scenarios", func() {
	It("fills the cluster with one-GPU jobs created while the scheduler was off", func() {
		r := newRun("fill-scheduler-off")
		r.createQueue("team", float64(gpus()), 0)
		r.submit(jobs{queue: "team", prefix: "job", count: gpus(), pods: 1, gpus: 1})
		began := time.Now()
		r.startScheduler()
		bound := r.waitBound("team", gpus())
		running := r.waitRunning("team", gpus())
		r.result.Headline = "all running"
		r.result.Figures["all running"] = since(began, running)
		r.result.Figures["all bound"] = since(began, bound)
		r.finish()
	})

	It("fills the cluster while the jobs are being submitted", func() {
		r := newRun("fill-while-submitting")
		r.createQueue("team", float64(gpus()), 0)
		r.startScheduler()
		r.waitLeading()
		began, submitted := r.submit(jobs{queue: "team", prefix: "job", count: gpus(), pods: 1, gpus: 1})
		running := r.waitRunning("team", gpus())
		r.result.Headline = "all running"
		r.result.Figures["all running"] = since(began, running)
		r.result.Figures["submission"] = since(began, submitted)
		r.finish()
	})

	It("fills the cluster with jobs that can never run pending in the background", func() {
		r := newRun("fill-with-pending")
		r.createQueue("team", float64(gpus()), 0)
		r.createQueue("background", 0, 0)
		r.startScheduler()
		r.waitLeading()
		// 400 at 500 nodes; each asks for more GPUs than any node has.
		background := settings.nodes * 4 / 5
		r.submit(jobs{queue: "background", prefix: "never", count: background, pods: 1, gpus: 2 * gpusPerNode})
		Eventually(func() int { return cluster.observer.conditions(r.namespace) }).WithTimeout(timeout()).
			Should(Equal(background), "the background jobs are told why they wait")
		began, _ := r.submit(jobs{queue: "team", prefix: "job", count: gpus(), pods: 1, gpus: 1})
		running := r.waitRunning("team", gpus())
		r.result.Headline = "all running"
		r.result.Figures["all running"] = since(began, running)
		r.finish()
	})

	It("reclaims every GPU for one-GPU jobs of the queue that deserves them", func() {
		r := newRun("reclaim")
		r.fillWithBorrowers(0)
		began, submitted := r.submit(jobs{queue: "owner", prefix: "job", count: gpus(), pods: 1, gpus: 1})
		running := r.waitRunning("owner", gpus())
		Expect(cluster.observer.podCount(r.namespace, r.name+"-borrower", isEvicted)).To(Equal(gpus()), "every borrower evicted")
		r.result.Headline = "all running"
		r.result.Figures["all running"] = since(began, running)
		r.result.Figures["after submission"] = since(submitted, running)
		r.finish()
	})

	It("reclaims one GPU at a time", func() {
		r := newRun("reclaim-one-gpu")
		r.fillWithBorrowers(0)
		const reclaims = 10
		total := 0.0
		for k := range reclaims {
			began, _ := r.submit(jobs{queue: "owner", prefix: fmt.Sprintf("one-%02d", k), count: 1, pods: 1, gpus: 1})
			total += since(began, r.waitRunning("owner", k+1))
		}
		r.result.Headline = "average"
		r.result.Figures["average"] = total / reclaims
		r.finish()
	})

	// Upstream's very large jobs: 250 and 500 pods of 8 GPUs at 500 nodes, half the cluster
	// and all of it.
	for _, share := range []int{2, 1} {
		It(fmt.Sprintf("reclaims for one gang of 8-GPU pods on 1/%d of the nodes", share), func() {
			pods := settings.nodes / share
			r := newRun(fmt.Sprintf("gang-%dx8", pods))
			r.fillWithBorrowers(0)
			began, _ := r.submit(jobs{queue: "owner", prefix: "gang", count: 1, pods: pods, gpus: gpusPerNode})
			running := r.waitRunning("owner", pods)
			r.result.Headline = "all running"
			r.result.Figures["all running"] = since(began, running)
			r.finish()
		})
	}

	It("reclaims for distributed jobs of ten 8-GPU pods across the nodes", func() {
		r := newRun("distributed")
		r.fillWithBorrowers(0)
		count := settings.nodes / 10 // 50 at 500 nodes: every GPU
		began, _ := r.submit(jobs{queue: "owner", prefix: "dist", count: count, pods: 10, gpus: gpusPerNode})
		running := r.waitRunning("owner", count*10)
		r.result.Headline = "all running"
		r.result.Figures["all running"] = since(began, running)
		r.finish()
	})

	It("tells a distributed job that cannot fit that it cannot be scheduled", func() {
		r := newRun("unschedulable")
		r.createQueue("owner", float64(gpus()), 0)
		r.createQueue("borrower", 0, 0)
		r.startScheduler()
		// Jobs within their queue's quota, not preemptible: nothing can take their GPUs.
		r.submit(jobs{queue: "owner", prefix: "keep", count: gpus(), pods: 1, gpus: 1, priorityClass: "inference"})
		r.waitRunning("owner", gpus())
		const waiting = 10
		r.submit(jobs{queue: "borrower", prefix: "dist", count: waiting, pods: 10, gpus: gpusPerNode})
		Eventually(func() int { return cluster.observer.conditions(r.namespace) }).WithTimeout(timeout()).
			Should(Equal(waiting), "every distributed job is told why it waits")
		r.result.Headline = "average"
		r.result.Figures["average"] = cluster.observer.meanConditionDelay(r.namespace)
		r.finish()
	})
})

var _ = Describe("Min-runtime at scale", func() {
	It("evicts no protected victim early, and each soon after its protection ends", func() {
		r := newRun("protected")
		r.fillWithBorrowers(minRuntime())
		reclaimers := settings.nodes * 4 / 5 // 400 at 500 nodes
		began, _ := r.submit(jobs{queue: "owner", prefix: "job", count: reclaimers, pods: 1, gpus: 1})
		running := r.waitRunning("owner", reclaimers)
		Expect(cluster.observer.podCount(r.namespace, r.name+"-borrower", isEvicted)).To(Equal(reclaimers), "one victim per reclaimer")
		r.result.Headline = "all running"
		r.result.Figures["all running"] = since(began, running)
		r.finish()
	})

	It("keeps every protection and start stamp when the scheduler crashes while filling and while reclaiming", func() {
		r := newRun("crashes")
		r.createQueue("borrower", 0, minRuntime())
		r.createQueue("owner", float64(gpus()), 0)
		r.startScheduler()
		submitted := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(submitted)
			r.submit(jobs{queue: "borrower", prefix: "borrow", count: gpus(), pods: 1, gpus: 1})
		}()
		// Jobs bound by a process that dies before writing their stamps must be stamped by
		// the next one.
		r.waitBound("borrower", gpus()/2)
		r.crashScheduler()
		<-submitted
		filled := r.waitRunning("borrower", gpus())

		reclaimers := gpus() / 2
		go func() {
			defer GinkgoRecover()
			r.submit(jobs{queue: "owner", prefix: "job", count: reclaimers, pods: 1, gpus: 1})
		}()
		// Inside the victims' protection, and twice while reclaiming.
		time.Sleep(time.Until(filled.Add(minRuntime() / 2)))
		r.crashScheduler()
		r.waitBound("owner", reclaimers/4)
		r.crashScheduler()
		r.waitBound("owner", reclaimers*3/5)
		r.crashScheduler()
		running := r.waitRunning("owner", reclaimers)
		Expect(cluster.observer.podCount(r.namespace, r.name+"-borrower", isEvicted)).To(Equal(reclaimers), "one victim per reclaimer")
		r.result.Headline = "all running"
		r.result.Figures["all running"] = since(filled, running)
		r.finish()
	})
})

// fillWithBorrowers starts the scheduler and fills every GPU with one-GPU jobs of a queue
// that deserves none (protected for reclaimMinRuntime, unless zero), beside an empty queue
// that deserves them all.
func (r *run) fillWithBorrowers(reclaimMinRuntime time.Duration) {
	r.createQueue("borrower", 0, reclaimMinRuntime)
	r.createQueue("owner", float64(gpus()), 0)
	r.startScheduler()
	r.submit(jobs{queue: "borrower", prefix: "borrow", count: gpus(), pods: 1, gpus: 1})
	r.waitRunning("borrower", gpus())
}
